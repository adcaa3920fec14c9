// Package nprand ports the random streams that BeLUGA's splits and tests
// depend on, bit for bit (and CPython's random.Random, see NewPythonRandom):
//
//   - RandomState, numpy's legacy generator: MT19937 seeded with init_genrand,
//     used by sklearn's train_test_split (BeLUGA's suite split, random_state=123)
//     and by CheckList's test-case sampling;
//   - Generator, numpy's default_rng: PCG64 (XSL-RR 128/64) seeded through
//     SeedSequence, used by HuggingFace datasets' train_test_split (BeLUGA's
//     halving of the i.i.d. validation sets, seed 42).
//
// Both draw bounded integers as numpy does for shuffles: the smallest
// all-ones mask covering the bound, rejecting values above it, from 32-bit
// draws when the bound fits in 32 bits and 64-bit draws otherwise.
package nprand

import "math/bits"

// Source is a stream of 32- and 64-bit words.
type Source interface {
	Uint32() uint32
	Uint64() uint64
}

// Interval returns a uniform integer in [0, max] the way numpy's
// random_interval does.
func Interval(src Source, max uint64) uint64 {
	if max == 0 {
		return 0
	}
	mask := max
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	mask |= mask >> 32
	if max <= 0xffffffff {
		for {
			if v := uint64(src.Uint32()) & mask; v <= max {
				return v
			}
		}
	}
	for {
		if v := src.Uint64() & mask; v <= max {
			return v
		}
	}
}

// Shuffle permutes xs in place with numpy's Fisher-Yates order (from the
// last element down, swapping i with Interval(i)).
func Shuffle[T any](src Source, xs []T) {
	for i := len(xs) - 1; i > 0; i-- {
		j := Interval(src, uint64(i))
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// Permutation returns numpy's permutation(n): a shuffled 0..n-1.
func Permutation(src Source, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	Shuffle(src, p)
	return p
}

// RandomState is numpy's legacy MT19937 generator.
type RandomState struct {
	mt  [624]uint32
	pos int
}

// NewRandomState returns the state of np.random.RandomState(seed) for a seed
// in [0, 2^32).
func NewRandomState(seed uint32) *RandomState {
	r := &RandomState{}
	r.mt[0] = seed
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.pos = 624
	return r
}

// NewPythonRandom returns the MT19937 state of CPython's random.Random(seed)
// for a seed in [0, 2^32): init_by_array with the one-word key [seed]. BeLUGA's
// randomisation test draws its swaps from random.Random(42).getrandbits(1).
func NewPythonRandom(seed uint32) *RandomState {
	r := NewRandomState(19650218)
	key := []uint32{seed}
	i, j := 1, 0
	k := 624
	if len(key) > k {
		k = len(key)
	}
	for ; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = 623; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
	return r
}

// GetRandBits returns CPython's random.getrandbits(k) for 1 <= k <= 32.
func (r *RandomState) GetRandBits(k uint) uint32 {
	return r.Uint32() >> (32 - k)
}

// Uint32 returns the next tempered MT19937 output.
func (r *RandomState) Uint32() uint32 {
	if r.pos >= 624 {
		r.generate()
	}
	y := r.mt[r.pos]
	r.pos++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// Uint64 joins two outputs, the first as the high word (numpy's mt19937_next64).
func (r *RandomState) Uint64() uint64 {
	hi := uint64(r.Uint32())
	return hi<<32 | uint64(r.Uint32())
}

func (r *RandomState) generate() {
	const upper, lower = 0x80000000, 0x7fffffff
	mag := [2]uint32{0, 0x9908b0df}
	var i int
	for i = 0; i < 624-397; i++ {
		y := r.mt[i]&upper | r.mt[i+1]&lower
		r.mt[i] = r.mt[i+397] ^ y>>1 ^ mag[y&1]
	}
	for ; i < 623; i++ {
		y := r.mt[i]&upper | r.mt[i+1]&lower
		r.mt[i] = r.mt[i+397-624] ^ y>>1 ^ mag[y&1]
	}
	y := r.mt[623]&upper | r.mt[0]&lower
	r.mt[623] = r.mt[396] ^ y>>1 ^ mag[y&1]
	r.pos = 0
}

// Generator is numpy's default_rng: PCG64 with SeedSequence seeding.
type Generator struct {
	hi, lo       uint64 // 128-bit state
	incHi, incLo uint64 // 128-bit increment (odd)
	buffered     bool
	buf          uint32
}

// PCG's 128-bit default multiplier.
const mulHi, mulLo = 0x2360ED051FC65DA4, 0x4385DF649FCCF645

// NewGenerator returns the state of np.random.default_rng(seed) for a seed in
// [0, 2^32).
func NewGenerator(seed uint32) *Generator {
	w := seedSequence([]uint32{seed}, 8)
	word := func(i int) uint64 { return uint64(w[2*i]) | uint64(w[2*i+1])<<32 }
	g := &Generator{}
	initHi, initLo := word(0), word(1)
	seqHi, seqLo := word(2), word(3)
	// pcg_setseq_128_srandom_r: inc = seq<<1 | 1; step; state += init; step.
	g.incHi = seqHi<<1 | seqLo>>63
	g.incLo = seqLo<<1 | 1
	g.step()
	var c uint64
	g.lo, c = bits.Add64(g.lo, initLo, 0)
	g.hi, _ = bits.Add64(g.hi, initHi, c)
	g.step()
	return g
}

func (g *Generator) step() {
	// state = state*mul + inc (mod 2^128)
	hi, lo := bits.Mul64(g.lo, mulLo)
	hi += g.hi*mulLo + g.lo*mulHi
	var c uint64
	g.lo, c = bits.Add64(lo, g.incLo, 0)
	g.hi, _ = bits.Add64(hi, g.incHi, c)
}

// Uint64 returns the next PCG64 output (XSL-RR of the advanced state).
func (g *Generator) Uint64() uint64 {
	g.step()
	return bits.RotateLeft64(g.hi^g.lo, -int(g.hi>>58))
}

// Uint32 returns the low half of a 64-bit output, then its high half, as
// numpy buffers them.
func (g *Generator) Uint32() uint32 {
	if g.buffered {
		g.buffered = false
		return g.buf
	}
	v := g.Uint64()
	g.buffered, g.buf = true, uint32(v>>32)
	return uint32(v)
}

// seedSequence is numpy's SeedSequence(entropy).generate_state(n, uint32)
// with the default pool size of 4 words.
func seedSequence(entropy []uint32, n int) []uint32 {
	const (
		initA, multA = 0x43b0d7e5, 0x931e8875
		initB, multB = 0x8b51f9dd, 0x58f38ded
		mixL, mixR   = 0xca01f9dd, 0x4973f715
		xshift       = 16
		poolSize     = 4
	)
	hashConst := uint32(initA)
	hashmix := func(v uint32) uint32 {
		v ^= hashConst
		hashConst *= multA
		v *= hashConst
		v ^= v >> xshift
		return v
	}
	mix := func(x, y uint32) uint32 {
		r := mixL*x - mixR*y
		return r ^ r>>xshift
	}
	var pool [poolSize]uint32
	for i := range pool {
		if i < len(entropy) {
			pool[i] = hashmix(entropy[i])
		} else {
			pool[i] = hashmix(0)
		}
	}
	for src := range pool {
		for dst := range pool {
			if src != dst {
				pool[dst] = mix(pool[dst], hashmix(pool[src]))
			}
		}
	}
	for src := poolSize; src < len(entropy); src++ {
		for dst := range pool {
			pool[dst] = mix(pool[dst], hashmix(entropy[src]))
		}
	}
	out := make([]uint32, n)
	hashConst = initB
	for i := range out {
		v := pool[i%poolSize]
		v ^= hashConst
		hashConst *= multB
		v *= hashConst
		v ^= v >> xshift
		out[i] = v
	}
	return out
}
