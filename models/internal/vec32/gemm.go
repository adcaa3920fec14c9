// Package vec32 holds the models' float32 kernels that Go cannot make fast
// by itself: a matrix product on register-blocked micro-kernels with packed
// panels of A and B (12×32 in AVX-512, 6×16 in AVX2 and FMA, in assembly;
// ten times gonum's float32 Gemm, which is built on SSE axpy and dot
// products); GELU with its gradient and softmax's exponentials, sixteen or
// eight floats at a time, on a single-precision erf and exp. The kernel
// path is chosen at run time from the CPU (paths.go); off amd64, or
// without AVX2, they run portable Go code.
package vec32

import (
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Gemm sets C = alpha·op(A)·op(B) + beta·C for row-major A (m×k after op),
// B (k×n after op) and C (m×n) with leading strides lda, ldb, ldc, on the
// kernel path kn. With parallel set, the packing of B and
// blocks of C (row panels, by chunks of columns when rows are few) are
// spread over GOMAXPROCS goroutines, with no lock: each goroutine writes
// its own blocks.
//
// The go path runs gonum's Sgemm (SSE on amd64, no FMA). Every vector
// path accumulates each element of C the same way: over blocks of
// sgemmKC along k, in order, each block's products summed from zero in
// order of k and then added to C. So the split across goroutines, the
// micro-kernel's shape and the vector width leave the bits alone.
func (kn *Kernels) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if kn.gemm == nil {
		if m == 0 || n == 0 {
			return
		}
		// gonum splits large products across goroutines itself, by
		// blocks of C (each summed over k in order whatever the split).
		gonum.Implementation{}.Sgemm(transpose(transA), transpose(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemm(kn, parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func transpose(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func gemm(kn *Kernels, parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleBlock(c, ldc, beta, 0, m, 0, n)
		return
	}
	mr, nr := kn.mr, kn.nr
	panels := (m + mr - 1) / mr
	colPanels := (n + nr - 1) / nr
	// The work is split into tasks of one row panel by a chunk of column
	// panels: a chunk is all of them unless there are too few row panels
	// to keep every core busy (bert-base's 1,024 rows are 86 panels: on 64
	// cores, rows alone would leave a third of them idle).
	chunk := colPanels
	if procs := runtime.GOMAXPROCS(0); parallel && panels < 4*procs {
		chunk = max(1, colPanels*panels/(4*procs))
	}
	chunks := (colPanels + chunk - 1) / chunk
	grain := max(1, (1<<18)/(mr*kb0(k)*chunk*nr+1))
	// The kernels read B where it lies: only the edge panel of an
	// untransposed B is packed (zero-padded to nr columns).
	inPlaceB := !transB
	for l0 := 0; l0 < k; l0 += sgemmKC {
		kb := min(sgemmKC, k-l0)
		bp := packs.get(colPanels * kb * nr)
		first := 0
		if inPlaceB {
			first = n / nr
		}
		if parallel {
			ParallelFor(colPanels-first, max(1, (1<<14)/(kb*nr)), func(lo, hi int) { packB(bp, transB, b, ldb, l0, kb, n, nr, first+lo, first+hi) })
		} else {
			packB(bp, transB, b, ldb, l0, kb, n, nr, first, colPanels)
		}
		run := func(lo, hi int) {
			ap := packs.get(mr * kb)
			tile := packs.get(mr * nr)
			for t := lo; t < hi; t++ {
				p, cc := t%panels, t/panels
				i0 := mr * p
				rows := min(mr, m-i0)
				// A whole block with alpha 1 is read where it lies (alpha·a
				// is a then: the same bits as packed).
				direct := alpha == 1 && rows == mr
				if !direct {
					packA(ap, transA, a, lda, alpha, i0, rows, l0, kb, mr)
				}
				for q := cc * chunk; q < min(colPanels, (cc+1)*chunk); q++ {
					j0 := nr * q
					cols := min(nr, n-j0)
					// A whole block with beta 0 is set by the kernel (fresh)
					// without reading C; otherwise beta·C is applied by the
					// task that owns the block, just before its first
					// products are added.
					fresh := l0 == 0 && beta == 0 && rows == mr && cols == nr
					if l0 == 0 && !fresh {
						scaleBlock(c, ldc, beta, i0, rows, j0, cols)
					}
					bq, bs := &bp[q*kb*nr], 4*nr
					if inPlaceB && cols == nr {
						bq, bs = &b[l0*ldb+j0], 4*ldb
					}
					if direct && cols == nr {
						if transA {
							kn.gemm(kb, &a[l0*lda+i0], 4, 4*lda, bq, bs, &c[i0*ldc+j0], ldc, fresh)
						} else {
							kn.gemm(kb, &a[i0*lda+l0], 4*lda, 4, bq, bs, &c[i0*ldc+j0], ldc, fresh)
						}
						continue
					}
					if direct {
						// An edge panel of B: A packed after all.
						packA(ap, transA, a, lda, alpha, i0, rows, l0, kb, mr)
						direct = false
					}
					if rows == mr && cols == nr {
						kn.gemm(kb, &ap[0], 4, 4*mr, bq, bs, &c[i0*ldc+j0], ldc, fresh)
						continue
					}
					// An edge block: C's part in a zero-padded tile, so
					// that each element is summed as in a whole block.
					clear(tile)
					for i := 0; i < rows; i++ {
						copy(tile[i*nr:i*nr+cols], c[(i0+i)*ldc+j0:(i0+i)*ldc+j0+cols])
					}
					kn.gemm(kb, &ap[0], 4, 4*mr, bq, bs, &tile[0], nr, false)
					for i := 0; i < rows; i++ {
						copy(c[(i0+i)*ldc+j0:(i0+i)*ldc+j0+cols], tile[i*nr:i*nr+cols])
					}
				}
			}
			packs.put(tile)
			packs.put(ap)
		}
		if parallel {
			ParallelFor(panels*chunks, grain, run)
		} else {
			run(0, panels*chunks)
		}
		packs.put(bp)
	}
}

// scaleBlock sets C's rows [i0, i0+rows) × columns [j0, j0+cols) to beta
// times themselves (zero for beta 0, whatever they held).
func scaleBlock(c []float32, ldc int, beta float32, i0, rows, j0, cols int) {
	if beta == 1 {
		return
	}
	for i := i0; i < i0+rows; i++ {
		row := c[i*ldc+j0 : i*ldc+j0+cols]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// kb0 is the depth of the first packed block of a product of depth k.
func kb0(k int) int { return min(sgemmKC, k) }

// sgemmKC is the depth of a packed block: a 12×KC panel of A (12 KiB)
// stays in the L1 cache while the packed KC×n block of B streams from L2.
const sgemmKC = 256

// packB copies rows [l0, l0+kb) of op(B) (k×n) into panels of nr columns,
// each kb×nr row-major, zero-padded: panels [qlo, qhi).
func packB(bp []float32, trans bool, b []float32, ldb, l0, kb, n, nr, qlo, qhi int) {
	for q := qlo; q < qhi; q++ {
		j0 := nr * q
		cols := min(nr, n-j0)
		panel := bp[q*kb*nr : (q+1)*kb*nr]
		l := 0
		if trans && cols == nr {
			// 8×8 blocks transposed in registers, where the CPU can.
			l = packBTrans(panel, b[j0*ldb+l0:], ldb, kb, nr)
		}
		for ; l < kb; l++ {
			dst := panel[l*nr : l*nr+nr]
			if trans {
				for j := 0; j < cols; j++ {
					dst[j] = b[(j0+j)*ldb+l0+l]
				}
			} else {
				copy(dst, b[(l0+l)*ldb+j0:(l0+l)*ldb+j0+cols])
			}
			clear(dst[cols:])
		}
	}
}

// packA copies alpha times rows [i0, i0+rows) and columns [l0, l0+kb) of
// op(A) into ap[l*mr+i], zero-padded to mr rows.
func packA(ap []float32, trans bool, a []float32, lda int, alpha float32, i0, rows, l0, kb, mr int) {
	if rows < mr {
		clear(ap[:mr*kb])
	}
	if trans {
		for l := 0; l < kb; l++ {
			src := a[(l0+l)*lda+i0 : (l0+l)*lda+i0+rows]
			dst := ap[l*mr : l*mr+rows]
			for i, v := range src {
				dst[i] = alpha * v
			}
		}
		return
	}
	if rows == 12 && mr == 12 {
		// Twelve rows at once: sequential writes, twelve read streams.
		row := func(i int) []float32 { return a[(i0+i)*lda+l0 : (i0+i)*lda+l0+kb] }
		r0, r1, r2, r3, r4, r5 := row(0), row(1), row(2), row(3), row(4), row(5)
		r6, r7, r8, r9, r10, r11 := row(6), row(7), row(8), row(9), row(10), row(11)
		dst := ap[:12*kb]
		for l := range r0 {
			d := (*[12]float32)(dst[12*l : 12*l+12])
			d[0], d[1], d[2], d[3] = alpha*r0[l], alpha*r1[l], alpha*r2[l], alpha*r3[l]
			d[4], d[5], d[6], d[7] = alpha*r4[l], alpha*r5[l], alpha*r6[l], alpha*r7[l]
			d[8], d[9], d[10], d[11] = alpha*r8[l], alpha*r9[l], alpha*r10[l], alpha*r11[l]
		}
		return
	}
	for i := 0; i < rows; i++ {
		row := a[(i0+i)*lda+l0 : (i0+i)*lda+l0+kb]
		for l, v := range row {
			ap[l*mr+i] = alpha * v
		}
	}
}

// packPool recycles the products' packing buffers (float32 panels, and
// bf16 pairs as uint32).
type packPool[T any] struct{ pool sync.Pool }

func (p *packPool[T]) get(n int) []T {
	if b, ok := p.pool.Get().(*[]T); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]T, n)
}

func (p *packPool[T]) put(b []T) { p.pool.Put(&b) }

var packs packPool[float32]

// ParallelFor calls fn over [0, n) split into contiguous ranges of at
// least grain elements, run by at most GOMAXPROCS goroutines (the caller's
// among them). The ranges are handed out as the goroutines ask for them,
// about four per goroutine, so that a core slowed by other work (another
// run, another process) is not waited for. The split depends on
// GOMAXPROCS: callers' results must not depend on it (each element
// computed on its own, as vec32's kernels do; a product whose bits depend
// on the rows it is computed with, such as OpenBLAS's, splits into blocks
// fixed by its shape and hands those out with grain 1).
func ParallelFor(n, grain int, fn func(lo, hi int)) {
	grain = max(grain, 1)
	workers := min(runtime.GOMAXPROCS(0), n/grain)
	if workers <= 1 {
		fn(0, n)
		return
	}
	step := max(grain, (n+4*workers-1)/(4*workers))
	ranges := (n + step - 1) / step
	var next atomic.Int64
	work := func() {
		for {
			r := int(next.Add(1)) - 1
			if r >= ranges {
				return
			}
			fn(r*step, min(n, (r+1)*step))
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < min(workers, ranges); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
