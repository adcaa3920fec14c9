package vec32

import "math"

// The bf16 product: C = alpha·op(A)·op(B) + beta·C with float32 operands
// and result, the operands rounded to bfloat16 (the upper half of a
// float32: 8 exponent bits, 8 significand bits) and their products summed
// in float32. On a CPU with AVX512_BF16 a micro-kernel of VDPBF16PS does
// twice the multiply-adds per instruction of the float32 FMA kernel;
// elsewhere (or on a path other than avx512, which BELUGA_KERNELS may force) a
// portable Go kernel computes the very same sums, bit for bit, slowly.
//
// Each element of C is accumulated the same way on both: over blocks of
// bf16KC along k, in order; each block from zero, pair of k after pair
// (2l, 2l+1), adding the product at 2l+1 and then the one at 2l, each
// rounded to nearest even — VDPBF16PS's order (Intel SDM) — and the
// block's sum then added to C. Products of two bf16 are exact (in float32
// within its normal range), so only the additions round. VDPBF16PS
// flushes denormal results to zero (its inputs cannot be denormal: toBF16
// flushes them); the Go kernel does too. TestGemmBF16 finds them equal bit
// for bit on Zen 4, products below float32's normal range included.

// PathBF16 names the AVX512_BF16 kernel of the bf16 product (BF16Path).
const PathBF16 = "avx512_bf16"

// bf16KC is the depth of a packed block of the bf16 product, in elements
// of k (even): a 12×KC panel of A in bf16 takes the 12 KiB that sgemmKC's
// float32 panel takes.
const bf16KC = 512

// bf16MR, bf16NR: the micro-kernel's block of C.
const bf16MR, bf16NR = 12, 32

// bf16Micro adds the 12×32 product of kp pairs of A — row i's pair l at
// a[i*rs+l*ks] — and a packed panel of B to the block of C at c[0] (rows
// ldc apart).
type bf16Micro func(kp int, a []uint32, rs, ks int, b []uint32, c []float32, ldc int)

// GemmBF16 sets C = alpha·op(A)·op(B) + beta·C, as Gemm does, with op(A)
// scaled by alpha and then both operands rounded to bf16, the products
// summed in float32 (see above). With parallel set, the packing of B and
// the blocks of C are spread over GOMAXPROCS goroutines as Gemm spreads
// them; the bits do not depend on the split.
func (kn *Kernels) GemmBF16(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	kern, pk := kn.bf16Kernel()
	gemmBF16(kern, pk, parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// BF16Path returns the kernel the bf16 product runs on with kn: PathBF16
// on a CPU with AVX512_BF16 when kn is the avx512 path, else PathGo (the
// portable kernel: the same bits, many times slower).
func (kn *Kernels) BF16Path() string {
	if kn.bf16Fast() {
		return PathBF16
	}
	return PathGo
}

func (kn *Kernels) bf16Kernel() (bf16Micro, bf16Packer) {
	if kn.bf16Fast() {
		return bf16KernelAsm, asmPacker
	}
	return bf16KernelGo, goPacker
}

func gemmBF16(kern bf16Micro, pk bf16Packer, parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	scaleBlock(c, ldc, beta, 0, m, 0, n)
	if k == 0 || alpha == 0 {
		return
	}
	const mr, nr = bf16MR, bf16NR
	panels := (m + mr - 1) / mr
	colPanels := (n + nr - 1) / nr
	// Tasks are one row panel by a chunk of column panels, as in gemm.
	chunk := colChunk(parallel, panels, colPanels)
	chunks := (colPanels + chunk - 1) / chunk
	grain := max(1, (1<<18)/(mr*min(bf16KC, k)*chunk*nr+1))
	for l0 := 0; l0 < k; l0 += bf16KC {
		kb := min(bf16KC, k-l0)
		kp := (kb + 1) / 2
		bp := packs16.get(colPanels * kp * nr)
		if parallel {
			ParallelFor(colPanels, max(1, (1<<13)/(kp*nr)), func(lo, hi int) { packBF16B(pk, bp, transB, b, ldb, l0, kb, n, lo, hi) })
		} else {
			packBF16B(pk, bp, transB, b, ldb, l0, kb, n, 0, colPanels)
		}
		run := func(lo, hi int) {
			ap := packs16.get(mr * kp)
			tile, scaled := packs.get(mr*nr), packs.get(max(kb, 2*mr))
			var rs, ks int
			lastPanel := -1
			for t := lo; t < hi; t++ {
				p, cc := t%panels, t/panels
				i0 := mr * p
				rows := min(mr, m-i0)
				if p != lastPanel {
					rs, ks = packBF16A(pk, ap, transA, a, lda, alpha, i0, rows, l0, kb, scaled)
					lastPanel = p
				}
				for q := cc * chunk; q < min(colPanels, (cc+1)*chunk); q++ {
					j0 := nr * q
					cols := min(nr, n-j0)
					bq := bp[q*kp*nr : (q+1)*kp*nr]
					if rows == mr && cols == nr {
						kern(kp, ap, rs, ks, bq, c[i0*ldc+j0:], ldc)
						continue
					}
					// An edge block: C's part in a zero-padded tile, so
					// that each element is summed as in a whole block.
					loadTile(tile, nr, c, ldc, i0, rows, j0, cols)
					kern(kp, ap, rs, ks, bq, tile, nr)
					storeTile(c, ldc, tile, nr, i0, rows, j0, cols)
				}
			}
			packs.put(tile)
			packs.put(scaled)
			packs16.put(ap)
		}
		if parallel {
			ParallelFor(panels*chunks, grain, run)
		} else {
			run(0, panels*chunks)
		}
		packs16.put(bp)
	}
}

// toBF16 rounds f to bfloat16 as VCVTNEPS2BF16 does: to nearest, ties to
// even; a NaN stays a NaN (made quiet); zeros and denormals become a zero
// of their sign; too large a value becomes an infinity.
func toBF16(f float32) uint32 {
	u := math.Float32bits(f)
	switch {
	case u&0x7f800000 == 0:
		return (u >> 16) & 0x8000
	case u&0x7fffffff > 0x7f800000:
		return (u >> 16) | 0x40
	}
	return (u + 0x7fff + (u>>16)&1) >> 16
}

// pairBF16 packs two floats, rounded to bf16, into one word: lo in the
// low half, as VDPBF16PS reads element 2l of a pair.
func pairBF16(lo, hi float32) uint32 { return toBF16(lo) | toBF16(hi)<<16 }

// bf16Packer rounds rows of floats to the kernel's pairs of bf16: pairs
// sets dst[l] = pair(src[2l], src[2l+1]) (len(src) = 2·len(dst)), a row
// whose consecutive elements are consecutive in k; interleave sets dst[j] =
// pair(lo[j], hi[j]), two rows k = 2l and 2l+1. The AVX512_BF16 packer
// rounds with VCVTNEPS2BF16, the portable one with toBF16: the same bits.
type bf16Packer struct {
	pairs      func(dst []uint32, src []float32)
	interleave func(dst []uint32, lo, hi []float32)
	// rows interleaves pairs pairs of rows at once: pair l from the rows
	// at src[2l·srcStride:] and src[(2l+1)·srcStride:], n elements, into
	// dst[l·dstStride:].
	rows func(dst []uint32, dstStride int, src []float32, srcStride, n, pairs int)
}

var goPacker = bf16Packer{
	pairs: func(dst []uint32, src []float32) {
		for l := range dst {
			dst[l] = pairBF16(src[2*l], src[2*l+1])
		}
	},
	interleave: func(dst []uint32, lo, hi []float32) {
		for j := range dst {
			dst[j] = pairBF16(lo[j], hi[j])
		}
	},
	rows: func(dst []uint32, dstStride int, src []float32, srcStride, n, pairs int) {
		for l := 0; l < pairs; l++ {
			lo, hi := src[2*l*srcStride:2*l*srcStride+n], src[(2*l+1)*srcStride:(2*l+1)*srcStride+n]
			d := dst[l*dstStride : l*dstStride+n]
			for j := range d {
				d[j] = pairBF16(lo[j], hi[j])
			}
		}
	},
}

// packBF16B packs rows [l0, l0+kb) of op(B) (k×n) into panels of 32
// columns, each kp = ⌈kb/2⌉ rows of pairs (b[l*32+j] holding rows 2l and
// 2l+1 of column j), zero-padded to 32 columns and to an even depth:
// panels [qlo, qhi).
func packBF16B(pk bf16Packer, bp []uint32, trans bool, b []float32, ldb, l0, kb, n, qlo, qhi int) {
	const nr = bf16NR
	kp, even := (kb+1)/2, kb&^1
	var col []uint32
	if trans {
		col = packs16.get(kp)
		defer packs16.put(col)
	}
	for q := qlo; q < qhi; q++ {
		j0 := nr * q
		cols := min(nr, n-j0)
		panel := bp[q*kp*nr : (q+1)*kp*nr]
		if trans {
			// Column j of op(B) is row j of B: its pairs, then spread.
			for j := 0; j < cols; j++ {
				row := b[(j0+j)*ldb+l0 : (j0+j)*ldb+l0+kb]
				pk.pairs(col[:even/2], row[:even])
				if kb > even {
					col[kp-1] = toBF16(row[even])
				}
				for l, v := range col[:kp] {
					panel[l*nr+j] = v
				}
			}
			if cols < nr {
				for l := 0; l < kp; l++ {
					clear(panel[l*nr+cols : l*nr+nr])
				}
			}
			continue
		}
		pk.rows(panel, nr, b[l0*ldb+j0:], ldb, cols, kb/2)
		if kb > even {
			dst := panel[(kp-1)*nr : (kp-1)*nr+cols]
			for j, v := range b[(l0+even)*ldb+j0 : (l0+even)*ldb+j0+cols] {
				dst[j] = toBF16(v)
			}
		}
		if cols < nr {
			for l := 0; l < kp; l++ {
				clear(panel[l*nr+cols : l*nr+nr])
			}
		}
	}
}

// packBF16A packs alpha times rows [i0, i0+rows) and columns [l0, l0+kb)
// of op(A), rounded to bf16, into ap (12·kp words), zero-padded to 12 rows
// and an even depth, and returns where the kernel finds row i's pair l:
// ap[i*rs+l*ks]. A row-major A is converted row by row where its pairs lie
// (rs = kp, ks = 1: no transposition); a transposed one, two rows of A (two
// values of k) at a time, into a panel (rs = 1, ks = 12). scaled is scratch
// of at least max(kb, 24) floats for alpha ≠ 1.
func packBF16A(pk bf16Packer, ap []uint32, trans bool, a []float32, lda int, alpha float32, i0, rows, l0, kb int, scaled []float32) (rs, ks int) {
	const mr = bf16MR
	kp, even := (kb+1)/2, kb&^1
	ap = ap[:mr*kp]
	if rows < mr {
		clear(ap)
	}
	scale := func(dst, src []float32) []float32 {
		if alpha == 1 {
			return src
		}
		dst = dst[:len(src)]
		for i, v := range src {
			dst[i] = alpha * v
		}
		return dst
	}
	if !trans {
		for i := 0; i < rows; i++ {
			src := scale(scaled, a[(i0+i)*lda+l0:(i0+i)*lda+l0+kb])
			row := ap[i*kp : (i+1)*kp]
			pk.pairs(row[:even/2], src[:even])
			if kb > even {
				row[kp-1] = toBF16(src[even])
			}
		}
		return kp, 1
	}
	// Row k of A holds column k of op(A): two rows make a pair.
	if alpha == 1 {
		pk.rows(ap, mr, a[l0*lda+i0:], lda, rows, kb/2)
		if kb > even {
			dst := ap[(kp-1)*mr : (kp-1)*mr+rows]
			for i, v := range a[(l0+even)*lda+i0 : (l0+even)*lda+i0+rows] {
				dst[i] = toBF16(v)
			}
		}
		return 1, mr
	}
	for l := 0; l < kp; l++ {
		r0 := l0 + 2*l
		lo := scale(scaled[:mr], a[r0*lda+i0:r0*lda+i0+rows])
		dst := ap[l*mr : l*mr+rows]
		if 2*l+1 < kb {
			pk.interleave(dst, lo, scale(scaled[mr:2*mr], a[(r0+1)*lda+i0:(r0+1)*lda+i0+rows]))
			continue
		}
		for i, v := range lo {
			dst[i] = toBF16(v)
		}
	}
	return 1, mr
}

// bf16KernelGo is the portable micro-kernel: per element of the 12×32
// block, from zero, the high pair's product and then the low pair's, each
// added with one rounding to float32 and denormal sums flushed to zero, as
// VDPBF16PS does. The sum is taken in float64, where the product of two
// bf16 is exact whatever its size, and float64's 53 bits make its rounding
// to float32 the correct rounding of the exact sum (53 ≥ 2·24 + 2): so a
// product below float32's normal range is added as the instruction adds it.
func bf16KernelGo(kp int, a []uint32, rs, ks int, b []uint32, c []float32, ldc int) {
	const mr, nr = bf16MR, bf16NR
	var acc [mr * nr]float32
	for l := 0; l < kp; l++ {
		br := b[l*nr : l*nr+nr]
		for i := 0; i < mr; i++ {
			ap := a[i*rs+l*ks]
			a0, a1 := float64(math.Float32frombits(ap<<16)), float64(math.Float32frombits(ap&0xffff0000))
			row := acc[i*nr : i*nr+nr]
			for j, bp := range br {
				s := ftz(float32(float64(row[j]) + a1*float64(math.Float32frombits(bp&0xffff0000))))
				row[j] = ftz(float32(float64(s) + a0*float64(math.Float32frombits(bp<<16))))
			}
		}
	}
	for i := 0; i < mr; i++ {
		row := c[i*ldc : i*ldc+nr]
		for j := range row {
			row[j] += acc[i*nr+j]
		}
	}
}

// ftz flushes a denormal to a zero of its sign.
func ftz(x float32) float32 {
	if math.Float32bits(x)&0x7f800000 == 0 {
		return math.Float32frombits(math.Float32bits(x) & 0x80000000)
	}
	return x
}

var packs16 packPool[uint32]
