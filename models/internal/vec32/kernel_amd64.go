package vec32

import "golang.org/x/sys/cpu"

//go:noescape
func sgemmKernel6x16(k int, a *float32, rs, ks int, b *float32, bs int, c *float32, ldc int, fresh bool)

//go:noescape
func sgemmKernel12x32(k int, a *float32, rs, ks int, b *float32, bs int, c *float32, ldc int, fresh bool)

//go:noescape
func geluForwardAVX(y, x *float32, n int)

//go:noescape
func geluBackwardAVX(dx, dy, x *float32, n int)

//go:noescape
func expShiftAVX(x *float32, n int, shift float32, sums *[8]float32)

//go:noescape
func geluForwardAVX512(y, x *float32, n int)

//go:noescape
func geluBackwardAVX512(dx, dy, x *float32, n int)

//go:noescape
func expShiftAVX512(x *float32, n int, shift float32, sums *[8]float32)

//go:noescape
func adamWAVX(value, grad, m, v *float32, n int, c *AdamWCoef)

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

var avx2Kernels = &kernels{name: PathAVX2, mr: 6, nr: 16, gemm: sgemmKernel6x16,
	geluF: geluAVX2, geluB: geluBackAVX2, expShift: expShiftAVX2, adamW: adamWAVX2,
	dropout: func(k []float32, state, least uint64, scale float32) int {
		n := len(k) &^ 7
		if n > 0 {
			dropoutMaskAVX2(&k[0], n, state, least, scale)
		}
		return n
	},
	addRows: func(d, src []float32, rows, stride int) int {
		w := len(d) &^ 7
		if w > 0 {
			addRowsAVX2(&d[0], &src[0], rows, stride, w)
		}
		return w
	},
	scale: func(x []float32, s float32) int {
		n := len(x) &^ 7
		if n > 0 {
			scaleAVX2(&x[0], n, s)
		}
		return n
	},
	mulTo: func(dst, a, b []float32) int {
		n := len(dst) &^ 7
		if n > 0 {
			mulToAVX2(&dst[0], &a[0], &b[0], n)
		}
		return n
	},
	mulAdd: func(dst, a, b, c []float32) int {
		n := len(dst) &^ 7
		if n > 0 {
			mulAddAVX2(&dst[0], &a[0], &b[0], &c[0], n)
		}
		return n
	},
	max: func(x []float32) (float32, bool, int) {
		n := len(x) &^ 7
		if n == 0 {
			return 0, false, 0
		}
		m, nan := maxAVX2(&x[0], n)
		return m, nan, n
	},
	sumSquares: func(x []float32, s *[8]float64) int {
		n := len(x) &^ 7
		if n > 0 {
			sumSquaresAVX2(&x[0], n, s)
		}
		return n
	},
	normRow: func(y, xhat, x, gamma, beta []float32, mean, inv float32) int {
		n := len(x) &^ 7
		if n > 0 {
			normRowAVX2(&y[0], &xhat[0], &x[0], &gamma[0], &beta[0], n, mean, inv)
		}
		return n
	},
	normBackRow: func(dx, dy, xhat, gamma []float32, mg, mgx, inv float32) int {
		n := len(dy) &^ 7
		if n > 0 {
			normBackRowAVX2(&dx[0], &dy[0], &xhat[0], &gamma[0], n, mg, mgx, inv)
		}
		return n
	},
	addRowProducts: func(dg, db, dy, x []float32, rows, stride int) int {
		w := len(dg) &^ 7
		if w > 0 {
			addRowProductsAVX2(&dg[0], &db[0], &dy[0], &x[0], rows, stride, w)
		}
		return w
	}}

// The avx512 path runs 16 floats at a time, then one block of 8 on the
// AVX2 kernel, so that every element gets the instructions it gets on the
// avx2 path.
var avx512Kernels = &kernels{name: PathAVX512, mr: 12, nr: 32, gemm: sgemmKernel12x32,
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
		return n + expShiftAVX2(x[n:], shift, sums)
	},
	adamW: func(value, grad, m, v []float32, c *AdamWCoef) int {
		n := len(value) &^ 15
		if n > 0 {
			adamWAVX512(&value[0], &grad[0], &m[0], &v[0], n, c)
		}
		return n + adamWAVX2(value[n:], grad[n:], m[n:], v[n:], c)
	},
	dropout: func(k []float32, state, least uint64, scale float32) int {
		n := len(k) &^ 7
		if n > 0 {
			dropoutMaskAVX512(&k[0], n, state, least, scale)
		}
		return n
	},
	addRows: func(d, src []float32, rows, stride int) int {
		w := len(d) &^ 15
		if w > 0 {
			addRowsAVX512(&d[0], &src[0], rows, stride, w)
		}
		return w
	},
	scale: func(x []float32, s float32) int {
		n := len(x) &^ 15
		if n > 0 {
			scaleAVX512(&x[0], n, s)
		}
		return n
	},
	mulTo: func(dst, a, b []float32) int {
		n := len(dst) &^ 15
		if n > 0 {
			mulToAVX512(&dst[0], &a[0], &b[0], n)
		}
		return n
	},
	mulAdd: func(dst, a, b, c []float32) int {
		n := len(dst) &^ 15
		if n > 0 {
			mulAddAVX512(&dst[0], &a[0], &b[0], &c[0], n)
		}
		return n
	},
	max: func(x []float32) (float32, bool, int) {
		n := len(x) &^ 15
		if n == 0 {
			return 0, false, 0
		}
		m, nan := maxAVX512(&x[0], n)
		return m, nan, n
	},
	sumSquares: func(x []float32, s *[8]float64) int {
		n := len(x) &^ 7
		if n > 0 {
			sumSquaresAVX512(&x[0], n, s)
		}
		return n
	},
	normRow: func(y, xhat, x, gamma, beta []float32, mean, inv float32) int {
		n := len(x) &^ 15
		if n > 0 {
			normRowAVX512(&y[0], &xhat[0], &x[0], &gamma[0], &beta[0], n, mean, inv)
		}
		return n
	},
	normBackRow: func(dx, dy, xhat, gamma []float32, mg, mgx, inv float32) int {
		n := len(dy) &^ 15
		if n > 0 {
			normBackRowAVX512(&dx[0], &dy[0], &xhat[0], &gamma[0], n, mg, mgx, inv)
		}
		return n
	},
	addRowProducts: func(dg, db, dy, x []float32, rows, stride int) int {
		w := len(dg) &^ 15
		if w > 0 {
			addRowProductsAVX512(&dg[0], &db[0], &dy[0], &x[0], rows, stride, w)
		}
		return w
	}}

func geluAVX2(y, x []float32) int {
	n := len(x) &^ 7
	if n > 0 {
		geluForwardAVX(&y[0], &x[0], n)
	}
	return n
}

func geluBackAVX2(dx, dy, x []float32) int {
	n := len(x) &^ 7
	if n > 0 {
		geluBackwardAVX(&dx[0], &dy[0], &x[0], n)
	}
	return n
}

func expShiftAVX2(x []float32, shift float32, sums *[8]float32) int {
	n := len(x) &^ 7
	if n > 0 {
		expShiftAVX(&x[0], n, shift, sums)
	}
	return n
}

func adamWAVX2(value, grad, m, v []float32, c *AdamWCoef) int {
	n := len(value) &^ 7
	if n > 0 {
		adamWAVX(&value[0], &grad[0], &m[0], &v[0], n, c)
	}
	return n
}

// available lists the paths this CPU can run, fastest first.
func available() []*kernels {
	switch {
	case hasAVX512:
		return []*kernels{avx512Kernels, avx2Kernels, goKernels}
	case hasAVX2:
		return []*kernels{avx2Kernels, goKernels}
	}
	return []*kernels{goKernels}
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
