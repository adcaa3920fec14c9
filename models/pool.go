package models

import (
	"math/bits"
	"sync"
)

// bufPool recycles the float32 buffers of forward and backward passes, so
// that a training step allocates nothing once the shapes have been seen:
// allocation and the garbage collector's work were a tenth of a step, and
// garbage-collected activations doubled the peak memory. Buffers are kept
// in size classes (quarter powers of two), so that length-bucketed batches
// share them, up to a bound on the floats kept. New buffers come from the
// compute backend (Backend.Alloc), as parameters do.
type bufPool struct {
	mu    sync.Mutex
	free  map[int][][]float32 // by size class
	kept  int                 // floats in free
	limit int                 // most floats to keep
	// ctx is the model's compute context, whose backend allocates.
	ctx *computeCtx
}

// poolLimit bounds the floats a pool keeps (1 GiB); past it, released
// buffers are left to the garbage collector.
const poolLimit = 1 << 28

// sizeClass rounds n up to the next of 2ᵏ·{4, 5, 6, 7}/4.
func sizeClass(n int) int {
	if n <= 16 {
		return 16
	}
	shift := bits.Len(uint(n-1)) - 3 // the two bits below the top one
	c := ((n - 1) >> shift) + 1
	return c << shift
}

// get returns a buffer of length n with arbitrary contents.
func (p *bufPool) get(n int) []float32 {
	c := sizeClass(n)
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.kept -= c
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	return p.ctx.be.Alloc(c)[:n]
}

// zeroed returns a buffer of length n filled with zeros.
func (p *bufPool) zeroed(n int) []float32 {
	b := p.get(n)
	clear(b)
	return b
}

// put returns buffers from get to the pool (nil ones are skipped).
func (p *bufPool) put(bufs ...[]float32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == nil {
		p.free = map[int][][]float32{}
	}
	limit := p.limit
	if limit == 0 {
		limit = poolLimit
	}
	for _, b := range bufs {
		c := cap(b)
		if c == 0 || c != sizeClass(c) || p.kept+c > limit {
			continue
		}
		p.free[c] = append(p.free[c], b[:c])
		p.kept += c
	}
}
