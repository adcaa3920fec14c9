// Package vec32 holds the models' float32 kernels that Go cannot make fast
// by itself: a matrix product on a register-blocked 4×16 kernel (AVX2 and
// FMA on amd64, in assembly) with packed panels of A and B, ten times
// gonum's float32 Gemm, which is built on SSE axpy and dot products; and
// GELU with its gradient, eight floats at a time, on a single-precision erf
// and exp. Off amd64, or without AVX2, they run portable Go code.
package vec32

import (
	"runtime"
	"sync"
)

// Gemm sets C = alpha·op(A)·op(B) + beta·C for row-major A (m×k after op),
// B (k×n after op) and C (m×n) with leading strides lda, ldb, ldc. With
// parallel set, panels of rows of C are spread over GOMAXPROCS goroutines.
func Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if beta != 1 {
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			if beta == 0 {
				clear(row)
				continue
			}
			for j := range row {
				row[j] *= beta
			}
		}
	}
	if k == 0 || alpha == 0 {
		return
	}
	panels := (m + 3) / 4
	colPanels := (n + 15) / 16
	for l0 := 0; l0 < k; l0 += sgemmKC {
		kb := min(sgemmKC, k-l0)
		bp := getPack(colPanels * kb * 16)
		packB(bp, transB, b, ldb, l0, kb, n)
		run := func(lo, hi int) {
			ap := getPack(4 * kb)
			var tile [4 * 16]float32
			for p := lo; p < hi; p++ {
				i0 := 4 * p
				rows := min(4, m-i0)
				packA(ap, transA, a, lda, alpha, i0, rows, l0, kb)
				for q := 0; q < colPanels; q++ {
					j0 := 16 * q
					cols := min(16, n-j0)
					bq := &bp[q*kb*16]
					if rows == 4 && cols == 16 {
						sgemmKernel4x16(kb, &ap[0], bq, &c[i0*ldc+j0], ldc)
						continue
					}
					tile = [4 * 16]float32{}
					sgemmKernel4x16(kb, &ap[0], bq, &tile[0], 16)
					for i := 0; i < rows; i++ {
						row := c[(i0+i)*ldc+j0 : (i0+i)*ldc+j0+cols]
						for j := range row {
							row[j] += tile[i*16+j]
						}
					}
				}
			}
			putPack(ap)
		}
		if parallel {
			ParallelFor(panels, max(1, (1<<16)/(kb*n+1)), run)
		} else {
			run(0, panels)
		}
		putPack(bp)
	}
}

// sgemmKC is the depth of a packed block: a 4×KC panel of A and a KC×16
// panel of B (16 KiB) stay in the L1 cache.
const sgemmKC = 256

// packB copies rows [l0, l0+kb) of op(B) (k×n) into panels of 16 columns,
// each kb×16 row-major, zero-padded.
func packB(bp []float32, trans bool, b []float32, ldb, l0, kb, n int) {
	for q := 0; q*16 < n; q++ {
		j0 := 16 * q
		cols := min(16, n-j0)
		panel := bp[q*kb*16 : (q+1)*kb*16]
		for l := 0; l < kb; l++ {
			dst := panel[l*16 : l*16+16]
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
// op(A) into ap[l*4+i], zero-padded to 4 rows.
func packA(ap []float32, trans bool, a []float32, lda int, alpha float32, i0, rows, l0, kb int) {
	if rows < 4 {
		clear(ap[:4*kb])
	}
	if trans {
		for l := 0; l < kb; l++ {
			src := a[(l0+l)*lda+i0 : (l0+l)*lda+i0+rows]
			for i, v := range src {
				ap[l*4+i] = alpha * v
			}
		}
		return
	}
	if rows == 4 {
		// Four rows at once: sequential writes.
		r0 := a[i0*lda+l0 : i0*lda+l0+kb]
		r1 := a[(i0+1)*lda+l0 : (i0+1)*lda+l0+kb]
		r2 := a[(i0+2)*lda+l0 : (i0+2)*lda+l0+kb]
		r3 := a[(i0+3)*lda+l0 : (i0+3)*lda+l0+kb]
		dst := ap[:4*kb]
		for l := range r0 {
			d := dst[4*l : 4*l+4 : 4*l+4]
			d[0], d[1], d[2], d[3] = alpha*r0[l], alpha*r1[l], alpha*r2[l], alpha*r3[l]
		}
		return
	}
	for i := 0; i < rows; i++ {
		row := a[(i0+i)*lda+l0 : (i0+i)*lda+l0+kb]
		for l, v := range row {
			ap[l*4+i] = alpha * v
		}
	}
}

var packs sync.Pool

func getPack(n int) []float32 {
	if p, ok := packs.Get().(*[]float32); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]float32, n)
}

func putPack(b []float32) { packs.Put(&b) }

// ParallelFor calls fn over [0, n) split into at most GOMAXPROCS contiguous
// ranges of at least grain elements, the caller's goroutine taking the first.
func ParallelFor(n, grain int, fn func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/max(grain, 1))
	if parts <= 1 {
		fn(0, n)
		return
	}
	step := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for lo := step; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(n, lo+step))
	}
	fn(0, step)
	wg.Wait()
}
