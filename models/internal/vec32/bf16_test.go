package vec32

import (
	"fmt"
	"math"
	"runtime"
	"testing"
)

// bf16Impl is a bf16 micro-kernel with a packer.
type bf16Impl struct {
	kern bf16Micro
	pk   bf16Packer
}

// bf16Kernels are the bf16 micro-kernels and packers this machine runs:
// the portable ones always, VDPBF16PS's and VCVTNEPS2BF16's where the CPU
// has AVX512_BF16, each kernel with each packer.
func bf16Kernels() map[string]bf16Impl {
	ks := map[string]bf16Impl{PathGo: {bf16KernelGo, goPacker}}
	if hasBF16 {
		ks[PathBF16] = bf16Impl{bf16KernelAsm, asmPacker}
		ks[PathBF16+" kernel, go packing"] = bf16Impl{bf16KernelAsm, goPacker}
		ks["go kernel, "+PathBF16+" packing"] = bf16Impl{bf16KernelGo, asmPacker}
	}
	return ks
}

// bf16Want computes the bf16 product element by element from its
// definition, without packing: op(A) scaled by alpha and both rounded to
// bf16; per block of bf16KC along k, from zero, pair after pair, the odd
// element's product and then the even one's, each added with one rounding
// (in float64, exact for the product, then rounded to float32: the correct
// rounding of the exact sum) and denormals flushed; each block's sum
// added to beta·C.
func bf16Want(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) []float32 {
	want := append([]float32(nil), c...)
	at := func(i, l int) float32 {
		if l >= k {
			return 0
		}
		if transA {
			return bf16Value(toBF16(alpha * a[l*lda+i]))
		}
		return bf16Value(toBF16(alpha * a[i*lda+l]))
	}
	bt := func(l, j int) float32 {
		if l >= k {
			return 0
		}
		if transB {
			return bf16Value(toBF16(b[j*ldb+l]))
		}
		return bf16Value(toBF16(b[l*ldb+j]))
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := want[i*ldc+j]
			switch beta {
			case 0:
				v = 0
			case 1:
			default:
				v *= beta
			}
			if alpha != 0 {
				for l0 := 0; l0 < k; l0 += bf16KC {
					var acc float32
					for l := l0; l < min(k, l0+bf16KC); l += 2 {
						acc = flushed(float32(float64(acc) + float64(at(i, l+1))*float64(bt(l+1, j))))
						acc = flushed(float32(float64(acc) + float64(at(i, l))*float64(bt(l, j))))
					}
					v += acc
				}
			}
			want[i*ldc+j] = v
		}
	}
	return want
}

func bf16Value(h uint32) float32 { return math.Float32frombits(h << 16) }

// flushed is x, or a zero of its sign when x is denormal (VDPBF16PS's FTZ),
// written apart from the kernel's ftz so that the test checks it.
func flushed(x float32) float32 {
	if x != 0 && math.Abs(float64(x)) < 0x1p-126 {
		return float32(math.Copysign(0, float64(x)))
	}
	return x
}

// TestGemmBF16 checks every bf16 kernel bit for bit against bf16Want and
// within bf16's rounding of the float64 product, over shapes with edge
// blocks, odd depths and depths past one block, every transposition,
// strides wider than the matrices, alpha and beta in {0, 1, other}, serial
// and parallel. The inputs span many binades (±2⁻¹⁰…2¹⁰, so that the
// roundings of the sums are exercised), on some shapes 2⁻⁹⁰…2⁴⁰, and on
// others 2⁻⁷⁰…2⁻⁵⁶, where products and sums fall below float32's normal
// range (and sums flush to zero).
func TestGemmBF16(t *testing.T) {
	seed := uint64(5)
	lo, hi := -10, 10 // binades of the inputs
	rnd := func() float32 {
		seed = seed*6364136223846793005 + 1442695040888963407
		mant := float64(seed>>11)/(1<<53)*2 - 1
		seed = seed*6364136223846793005 + 1442695040888963407
		return float32(math.Ldexp(mant, lo+int(seed>>40)%(hi-lo+1)))
	}
	for name, impl := range bf16Kernels() {
		for _, sh := range [][4]int{{1, 1, 1, 10}, {12, 32, 2, 10}, {5, 17, 3, 10}, {13, 33, 7, 10}, {64, 64, 64, 10}, {33, 130, 301, 10}, {25, 70, 1025, 10}, {3, 40, 0, 10}, {130, 7, 513, 10}, {13, 33, 40, 90}, {40, 64, 300, 90}, {13, 33, 40, 70}, {40, 64, 300, 70}} {
			lo, hi = -sh[3], map[int]int{10: 10, 90: 40, 70: -56}[sh[3]]
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.5, -2}, {0, 1}, {0.125, 0}} {
					for _, par := range []bool{false, true} {
						m, n, k := sh[0], sh[1], sh[2]
						what := fmt.Sprintf("%s %dx%dx%d 2^%d…2^%d trans=%v alpha,beta=%v parallel=%v", name, m, n, k, lo, hi, tr, ab, par)
						ar, ac := m, k
						if tr[0] {
							ar, ac = k, m
						}
						br, bc := k, n
						if tr[1] {
							br, bc = n, k
						}
						lda, ldb, ldc := ac+3, bc+1, n+2
						a, b, c := make([]float32, max(ar*lda, 1)), make([]float32, max(br*ldb, 1)), make([]float32, m*ldc)
						for _, v := range [][]float32{a, b, c} {
							for i := range v {
								v[i] = rnd()
							}
						}
						want := bf16Want(tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
						exact := make([]float64, len(c))
						bound := make([]float64, len(c))
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								s, abs := 0.0, 0.0
								for l := 0; l < k; l++ {
									var x, y float64
									if tr[0] {
										x = float64(a[l*lda+i])
									} else {
										x = float64(a[i*lda+l])
									}
									if tr[1] {
										y = float64(b[j*ldb+l])
									} else {
										y = float64(b[l*ldb+j])
									}
									s += x * y
									abs += math.Abs(x * y)
								}
								cv := float64(c[i*ldc+j])
								exact[i*ldc+j] = float64(ab[0])*s + float64(ab[1])*cv
								// Two roundings to bf16 (half an ulp, 2⁻⁸, each, relative) and
								// k float32 additions; then beta·C and the sum's
								// addition to it, in float32; a flushed sum or
								// product loses less than 2⁻¹²⁶ each time.
								bound[i*ldc+j] = math.Abs(float64(ab[0]))*abs*(0x1p-7+0x1p-16+float64(k+2)*0x1p-24) + 0x1p-23*(math.Abs(float64(ab[1])*cv)+math.Abs(exact[i*ldc+j])) + float64(k+2)*0x1p-125
							}
						}
						prev := runtime.GOMAXPROCS(0)
						if par {
							// Many workers on small products: tasks by chunks of
							// columns, as on a big node.
							runtime.GOMAXPROCS(16)
						}
						gemmBF16(impl.kern, impl.pk, par, tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
						runtime.GOMAXPROCS(prev)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								x := i*ldc + j
								if math.Float32bits(c[x]) != math.Float32bits(want[x]) {
									t.Fatalf("%s: c[%d][%d] = %g (%#08x), want %g (%#08x) bit for bit", what, i, j, c[x], math.Float32bits(c[x]), want[x], math.Float32bits(want[x]))
								}
								if d := math.Abs(float64(c[x]) - exact[x]); d > bound[x] {
									t.Fatalf("%s: c[%d][%d] = %g, the float64 product is %g: off by %g, more than bf16's %g", what, i, j, c[x], exact[x], d, bound[x])
								}
							}
							// Beyond n, C's row is left alone.
							for j := n; j < ldc && i*ldc+j < len(c); j++ {
								if math.Float32bits(c[i*ldc+j]) != math.Float32bits(want[i*ldc+j]) {
									t.Fatalf("%s: c[%d][%d], past n, changed", what, i, j)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestToBF16 checks the rounding of floats to bf16 on the values where it
// can go wrong: ties to even, the carry into the exponent, overflow to
// infinity, denormals, NaNs.
func TestToBF16(t *testing.T) {
	for _, tc := range []struct {
		in, want uint32
	}{
		{0x3f800000, 0x3f80},                   // 1
		{0x3f808000, 0x3f80},                   // tie, even below
		{0x3f818000, 0x3f82},                   // tie, even above
		{0x3f808001, 0x3f81},                   // past the tie
		{0x3f807fff, 0x3f80},                   // below the tie
		{0x3fffffff, 0x4000},                   // carry into the exponent
		{0x7f7fffff, 0x7f80},                   // largest float: +Inf
		{0xff7f8000, 0xff80},                   // tie at the top: -Inf
		{0x7f800000, 0x7f80},                   // +Inf
		{0xff800000, 0xff80},                   // -Inf
		{0x7f800001, 0x7fc0},                   // signalling NaN made quiet
		{0xffc00000, 0xffc0},                   // quiet NaN
		{0x00000001, 0x0000},                   // denormal: zero
		{0x807fffff, 0x8000},                   // negative denormal: -0
		{0x80000000, 0x8000},                   // -0
		{0x00800000, 0x0080},                   // smallest normal
		{0x3eaaaaab, 0x3eab},                   // 1/3 rounds up
		{math.Float32bits(-2.5), 0xc020},       // exact
		{math.Float32bits(1 + 0x1p-8), 0x3f80}, // tie, even below
	} {
		if got := toBF16(math.Float32frombits(tc.in)); got != tc.want {
			t.Errorf("toBF16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
}

// BenchmarkGemmBF16 times the bf16 product beside the float32 one at
// bert-base's step shapes (batch 8 × 128 tokens: 1,024 rows; the
// attention projections, the feed-forward layer) and BERT-mini's
// (32 × 128 rows of width 256), as linear layers run them (x·wᵀ), in
// GFLOP/s, packing included.
func BenchmarkGemmBF16(b *testing.B) {
	kn, err := FromEnv()
	if err != nil {
		b.Fatal(err)
	}
	for _, sh := range [][3]int{{1024, 768, 768}, {1024, 3072, 768}, {1024, 768, 3072}, {4096, 256, 256}, {4096, 1024, 256}} {
		m, n, k := sh[0], sh[1], sh[2]
		x, w, y := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		for i := range w {
			w[i] = float32(i%5) - 2
		}
		for _, prec := range []string{"fp32", "bf16"} {
			b.Run(fmt.Sprintf("%dx%dx%d/%s", m, n, k, prec), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if prec == "bf16" {
						kn.GemmBF16(true, false, true, m, n, k, 1, x, k, w, k, 0, y, n)
					} else {
						kn.Gemm(true, false, true, m, n, k, 1, x, k, w, k, 0, y, n)
					}
				}
				b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkMicroKernelBF16 times the bf16 micro-kernels alone on panels in
// the L1 cache (k = 512): their peak, without packing or memory.
func BenchmarkMicroKernelBF16(b *testing.B) {
	for name, impl := range bf16Kernels() {
		if impl.pk.pairs == nil || name != PathGo && name != PathBF16 {
			continue
		}
		kern := impl.kern
		b.Run(name, func(b *testing.B) {
			const kp = bf16KC / 2
			a, bp, c := make([]uint32, bf16MR*kp), make([]uint32, bf16NR*kp), make([]float32, bf16MR*bf16NR)
			for i := 0; i < b.N; i++ {
				kern(kp, a, 1, bf16MR, bp, c, bf16NR)
			}
			b.ReportMetric(float64(2*bf16MR*bf16NR*2*kp)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
