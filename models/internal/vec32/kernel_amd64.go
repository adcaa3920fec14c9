package vec32

import "golang.org/x/sys/cpu"

//go:noescape
func sgemmKernel6x16(k int, a *float32, rs, ks int, b *float32, bs int, c *float32, ldc int, fresh bool)

//go:noescape
func sgemmKernel12x32(k int, a *float32, rs, ks int, b *float32, bs int, c *float32, ldc int, fresh bool)

//go:noescape
func packATrans6(ap, a *float32, lda, kb, panels int)

//go:noescape
func packATrans12(ap, a *float32, lda, kb, panels int)

//go:noescape
func packBRowsAVX2(panel, b *float32, ldb, kb int)

//go:noescape
func packBRowsAVX512(panel, b *float32, ldb, kb int)

//go:noescape
func fmaPeakAVX2(n int)

//go:noescape
func fmaPeakAVX512(n int)

//go:noescape
func geluForwardAVX2(y, x *float32, n int)

//go:noescape
func geluBackwardAVX2(dx, dy, x *float32, n int)

//go:noescape
func expShiftAVX2(x *float32, n int, shift float32, sums *[8]float32)

//go:noescape
func geluForwardAVX512(y, x *float32, n int)

//go:noescape
func geluBackwardAVX512(dx, dy, x *float32, n int)

//go:noescape
func expShiftAVX512(x *float32, n int, shift float32, sums *[8]float32)

//go:noescape
func adamWAVX2(value, grad, m, v *float32, n int, c *AdamWCoef)

//go:noescape
func scaleAVX512(x *float32, n int, s float32)

//go:noescape
func mulToAVX512(dst, a, b *float32, n int)

//go:noescape
func maxAVX512(x *float32, n int) (m float32, nan bool)

//go:noescape
func sumSquaresAVX512(x *float32, n int, s *[8]float64)

//go:noescape
func normRowAVX512(y, xhat, x, gamma, beta *float32, n int, mean, inv float32)

//go:noescape
func normBackRowAVX512(dx, dy, xhat, gamma *float32, n int, mg, mgx, inv float32)

//go:noescape
func addRowProductsAVX512(dg, db, dy, x *float32, rows, stride, w int)

//go:noescape
func scaleAVX2(x *float32, n int, s float32)

//go:noescape
func mulAddAVX2(dst, a, b, c *float32, n int)

//go:noescape
func mulAddAVX512(dst, a, b, c *float32, n int)

//go:noescape
func mulToAVX2(dst, a, b *float32, n int)

//go:noescape
func maxAVX2(x *float32, n int) (m float32, nan bool)

//go:noescape
func sumSquaresAVX2(x *float32, n int, s *[8]float64)

//go:noescape
func normRowAVX2(y, xhat, x, gamma, beta *float32, n int, mean, inv float32)

//go:noescape
func normBackRowAVX2(dx, dy, xhat, gamma *float32, n int, mg, mgx, inv float32)

//go:noescape
func addRowsAVX2(d, src *float32, rows, stride, w int)

//go:noescape
func addRowProductsAVX2(dg, db, dy, x *float32, rows, stride, w int)

//go:noescape
func addRowsAVX512(d, src *float32, rows, stride, w int)

//go:noescape
func dropoutMaskAVX2(k *float32, n int, state, least uint64, scale float32)

//go:noescape
func dropoutMaskAVX512(k *float32, n int, state, least uint64, scale float32)

//go:noescape
func adamWAVX512(value, grad, m, v *float32, n int, c *AdamWCoef)

// hasAVX2, hasAVX512: the CPU has the instructions and the OS saves their
// registers (x/sys/cpu checks XCR0).
var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F
)

var avx2Kernels = &Kernels{name: PathAVX2, mr: 6, nr: 16, gemm: sgemmKernel6x16, packATrans: packATrans6, packBRows: packBRowsAVX2, lanes: 8, fmaPeak: fmaPeakAVX2,
	geluF: geluAVX2, geluB: geluBackAVX2, expShift: expShift8, adamW: adamW8,
	dropout: dropoutKernel(8, dropoutMaskAVX2), addRows: addRowsKernel(8, addRowsAVX2),
	scale: scaleKernel(8, scaleAVX2), mulTo: mulToKernel(8, mulToAVX2), mulAdd: mulAddKernel(8, mulAddAVX2),
	max: maxKernel(8, maxAVX2), sumSquares: sumSquaresKernel(sumSquaresAVX2),
	normRow: normRowKernel(8, normRowAVX2), normBackRow: normBackRowKernel(8, normBackRowAVX2),
	addRowProducts: addRowProductsKernel(8, addRowProductsAVX2)}

// On the avx512 path GELU, softmax's exponentials and AdamW run 16 floats
// at a time, then one block of 8 on the AVX2 kernel, so that every element
// gets the instructions it gets on the avx2 path; the other element-wise
// kernels round each operation as the Go loops do, at any width.
var avx512Kernels = &Kernels{name: PathAVX512, mr: 12, nr: 32, gemm: sgemmKernel12x32, packATrans: packATrans12, packBRows: packBRowsAVX512, aInL1: true, lanes: 16, fmaPeak: fmaPeakAVX512,
	geluF: func(y, x []float32) int {
		n := len(x) &^ 15
		if n > 0 {
			geluForwardAVX512(&y[0], &x[0], n)
		}
		return n + geluAVX2(y[n:], x[n:])
	},
	geluB: func(dx, dy, x []float32) int {
		n := len(x) &^ 15
		if n > 0 {
			geluBackwardAVX512(&dx[0], &dy[0], &x[0], n)
		}
		return n + geluBackAVX2(dx[n:], dy[n:], x[n:])
	},
	expShift: func(x []float32, shift float32, sums *[8]float32) int {
		n := len(x) &^ 15
		if n > 0 {
			expShiftAVX512(&x[0], n, shift, sums)
		}
		return n + expShift8(x[n:], shift, sums)
	},
	adamW: func(value, grad, m, v []float32, c *AdamWCoef) int {
		n := len(value) &^ 15
		if n > 0 {
			adamWAVX512(&value[0], &grad[0], &m[0], &v[0], n, c)
		}
		return n + adamW8(value[n:], grad[n:], m[n:], v[n:], c)
	},
	dropout: dropoutKernel(16, dropoutMaskAVX512), addRows: addRowsKernel(16, addRowsAVX512),
	scale: scaleKernel(16, scaleAVX512), mulTo: mulToKernel(16, mulToAVX512), mulAdd: mulAddKernel(16, mulAddAVX512),
	max: maxKernel(16, maxAVX512), sumSquares: sumSquaresKernel(sumSquaresAVX512),
	normRow: normRowKernel(16, normRowAVX512), normBackRow: normBackRowKernel(16, normBackRowAVX512),
	addRowProducts: addRowProductsKernel(16, addRowProductsAVX512)}

// The element-wise kernels of a vector width w (8 or 16 floats): each does
// the leading multiple of w elements (columns, for the row sums) and says
// how many; the Go loops do the rest.

func dropoutKernel(w int, asm func(k *float32, n int, state, least uint64, scale float32)) func([]float32, uint64, uint64, float32) int {
	return func(k []float32, state, least uint64, scale float32) int {
		n := len(k) &^ (w - 1)
		if n > 0 {
			asm(&k[0], n, state, least, scale)
		}
		return n
	}
}

func addRowsKernel(w int, asm func(d, src *float32, rows, stride, w int)) func([]float32, []float32, int, int) int {
	return func(d, src []float32, rows, stride int) int {
		n := len(d) &^ (w - 1)
		if n > 0 {
			asm(&d[0], &src[0], rows, stride, n)
		}
		return n
	}
}

func addRowProductsKernel(w int, asm func(dg, db, dy, x *float32, rows, stride, w int)) func([]float32, []float32, []float32, []float32, int, int) int {
	return func(dg, db, dy, x []float32, rows, stride int) int {
		n := len(dg) &^ (w - 1)
		if n > 0 {
			asm(&dg[0], &db[0], &dy[0], &x[0], rows, stride, n)
		}
		return n
	}
}

func scaleKernel(w int, asm func(x *float32, n int, s float32)) func([]float32, float32) int {
	return func(x []float32, s float32) int {
		n := len(x) &^ (w - 1)
		if n > 0 {
			asm(&x[0], n, s)
		}
		return n
	}
}

func mulToKernel(w int, asm func(dst, a, b *float32, n int)) func([]float32, []float32, []float32) int {
	return func(dst, a, b []float32) int {
		n := len(dst) &^ (w - 1)
		if n > 0 {
			asm(&dst[0], &a[0], &b[0], n)
		}
		return n
	}
}

func mulAddKernel(w int, asm func(dst, a, b, c *float32, n int)) func([]float32, []float32, []float32, []float32) int {
	return func(dst, a, b, c []float32) int {
		n := len(dst) &^ (w - 1)
		if n > 0 {
			asm(&dst[0], &a[0], &b[0], &c[0], n)
		}
		return n
	}
}

func maxKernel(w int, asm func(x *float32, n int) (float32, bool)) func([]float32) (float32, bool, int) {
	return func(x []float32) (float32, bool, int) {
		n := len(x) &^ (w - 1)
		if n == 0 {
			return 0, false, 0
		}
		m, nan := asm(&x[0], n)
		return m, nan, n
	}
}

// sumSquaresKernel: eight float64 partial sums whatever the width.
func sumSquaresKernel(asm func(x *float32, n int, s *[8]float64)) func([]float32, *[8]float64) int {
	return func(x []float32, s *[8]float64) int {
		n := len(x) &^ 7
		if n > 0 {
			asm(&x[0], n, s)
		}
		return n
	}
}

func normRowKernel(w int, asm func(y, xhat, x, gamma, beta *float32, n int, mean, inv float32)) func(y, xhat, x, gamma, beta []float32, mean, inv float32) int {
	return func(y, xhat, x, gamma, beta []float32, mean, inv float32) int {
		n := len(x) &^ (w - 1)
		if n > 0 {
			asm(&y[0], &xhat[0], &x[0], &gamma[0], &beta[0], n, mean, inv)
		}
		return n
	}
}

func normBackRowKernel(w int, asm func(dx, dy, xhat, gamma *float32, n int, mg, mgx, inv float32)) func(dx, dy, xhat, gamma []float32, mg, mgx, inv float32) int {
	return func(dx, dy, xhat, gamma []float32, mg, mgx, inv float32) int {
		n := len(dy) &^ (w - 1)
		if n > 0 {
			asm(&dx[0], &dy[0], &xhat[0], &gamma[0], n, mg, mgx, inv)
		}
		return n
	}
}

func geluAVX2(y, x []float32) int {
	n := len(x) &^ 7
	if n > 0 {
		geluForwardAVX2(&y[0], &x[0], n)
	}
	return n
}

func geluBackAVX2(dx, dy, x []float32) int {
	n := len(x) &^ 7
	if n > 0 {
		geluBackwardAVX2(&dx[0], &dy[0], &x[0], n)
	}
	return n
}

func expShift8(x []float32, shift float32, sums *[8]float32) int {
	n := len(x) &^ 7
	if n > 0 {
		expShiftAVX2(&x[0], n, shift, sums)
	}
	return n
}

func adamW8(value, grad, m, v []float32, c *AdamWCoef) int {
	n := len(value) &^ 7
	if n > 0 {
		adamWAVX2(&value[0], &grad[0], &m[0], &v[0], n, c)
	}
	return n
}

// available lists the paths this CPU can run, fastest first.
func available() []*Kernels {
	switch {
	case hasAVX512:
		return []*Kernels{avx512Kernels, avx2Kernels, goKernels}
	case hasAVX2:
		return []*Kernels{avx2Kernels, goKernels}
	}
	return []*Kernels{goKernels}
}

//go:noescape
func packBTransAVX(panel, b *float32, ldb, kb, nr int)

// packBTrans packs the leading rows of a full panel of a transposed B,
// panel[l·nr + j] = b[j·ldb + l], by 8×8 blocks in AVX registers, and
// returns how many rows l it did.
func packBTrans(panel, b []float32, ldb, kb, nr int) int {
	kb8 := kb &^ 7
	if !hasAVX2 || kb8 == 0 || nr%8 != 0 {
		return 0
	}
	_ = b[(nr-1)*ldb+kb8-1]
	_ = panel[kb8*nr-1]
	packBTransAVX(&panel[0], &b[0], ldb, kb8, nr)
	return kb8
}
