package vec32

import (
	"fmt"
	"math"
	"runtime"
	"testing"
)

// TestSgemm compares sgemm with a float64 reference over shapes with and
// without edge panels, every transposition, strides wider than the
// matrices, and alpha, beta in {0, 1, other}.
func TestSgemm(t *testing.T) {
	forEachPath(t, testSgemm)
}

// forEachPath runs test on every kernel path this machine has.
func forEachPath(t *testing.T, test func(t *testing.T, kn *Kernels)) {
	for _, kn := range available() {
		t.Run(kn.name, func(t *testing.T) { test(t, kn) })
	}
}

// forEachPathB runs benchmark on every kernel path this machine has.
func forEachPathB(b *testing.B, benchmark func(b *testing.B, kn *Kernels)) {
	for _, kn := range available() {
		b.Run(kn.name, func(b *testing.B) { benchmark(b, kn) })
	}
}

func testSgemm(t *testing.T, kn *Kernels) {
	seed := uint64(11)
	rnd := func() float64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return float64(seed>>11)/(1<<53)*2 - 1
	}
	for _, sh := range [][3]int{{1, 1, 1}, {4, 16, 8}, {5, 17, 3}, {64, 64, 64}, {33, 130, 300}, {130, 7, 513}, {3, 40, 0}, {12, 32, 5}, {25, 70, 257}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.5, -2}, {0, 1}} {
				for _, par := range []bool{false, true} {
					m, n, k := sh[0], sh[1], sh[2]
					name := fmt.Sprintf("%dx%dx%d trans=%v alpha,beta=%v parallel=%v", m, n, k, tr, ab, par)
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
							v[i] = float32(rnd())
						}
					}
					at := func(i, l int) float64 {
						if tr[0] {
							return float64(a[l*lda+i])
						}
						return float64(a[i*lda+l])
					}
					bt := func(l, j int) float64 {
						if tr[1] {
							return float64(b[j*ldb+l])
						}
						return float64(b[l*ldb+j])
					}
					want := make([]float64, len(c))
					for i := range c {
						want[i] = float64(c[i])
					}
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							s := 0.0
							for l := 0; l < k; l++ {
								s += at(i, l) * bt(l, j)
							}
							want[i*ldc+j] = float64(ab[0])*s + float64(ab[1])*float64(c[i*ldc+j])
						}
					}
					kn.Gemm(par, tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					for i := range c {
						if math.Abs(float64(c[i])-want[i]) > 1e-4*math.Max(1, math.Abs(want[i])) {
							t.Fatalf("%s: c[%d] = %g, want %g", name, i, c[i], want[i])
						}
					}
				}
			}
		}
	}
}

func BenchmarkSgemmFFN(b *testing.B) {
	m, n, k := 2048, 512, 128
	x, w, y := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
	forEachPathB(b, func(b *testing.B, kn *Kernels) {
		for i := 0; i < b.N; i++ {
			kn.Gemm(true, false, true, m, n, k, 1, x, k, w, k, 0, y, n)
		}
		b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

func BenchmarkPackA(b *testing.B) {
	const m, k = 12, 256
	a, ap := make([]float32, m*k), make([]float32, m*k)
	for i := 0; i < b.N; i++ {
		avx512Kernels.packA(ap, false, a, k, 1, 0, m, 0, k)
	}
}

// BenchmarkPackATrans packs a block of 144 rows of a transposed A (a
// BERT-mini weight gradient's, lda 1024) into the AVX2 kernel's panels.
func BenchmarkPackATrans(b *testing.B) {
	const m, kb, lda = 144, 256, 1024
	a, ap := make([]float32, kb*lda), make([]float32, m*kb)
	b.SetBytes(4 * m * kb)
	for b.Loop() {
		avx2Kernels.packA(ap, true, a, lda, 1, 0, m, 0, kb)
	}
}

// TestGemmSplitKeepsBits: a product split over many cores (2-D, by row
// panels and chunks of columns, as on a 64-core node) gives the bits of
// the same product on one goroutine.
func TestGemmSplitKeepsBits(t *testing.T) {
	forEachPath(t, func(t *testing.T, kn *Kernels) {
		if kn.name == PathGo {
			t.Skip("the go path's products are gonum's")
		}
		seed := uint64(3)
		fill := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				seed = seed*6364136223846793005 + 1442695040888963407
				x[i] = float32(float64(seed>>11)/(1<<53)*2 - 1)
			}
			return x
		}
		for _, procs := range []int{2, 7, 64} {
			for _, sh := range [][3]int{{40, 300, 600}, {1024, 96, 64}, {13, 1000, 257}} {
				m, n, k := sh[0], sh[1], sh[2]
				a, b, c0 := fill(m*k), fill(k*n), fill(m*n)
				serial, split := append([]float32(nil), c0...), append([]float32(nil), c0...)
				kn.Gemm(false, false, false, m, n, k, 1, a, k, b, n, 1, serial, n)
				prev := runtime.GOMAXPROCS(procs)
				kn.Gemm(true, false, false, m, n, k, 1, a, k, b, n, 1, split, n)
				runtime.GOMAXPROCS(prev)
				for i := range serial {
					if math.Float32bits(serial[i]) != math.Float32bits(split[i]) {
						t.Fatalf("GOMAXPROCS=%d, %dx%dx%d: c[%d] = %g split, %g serial", procs, m, n, k, i, split[i], serial[i])
					}
				}
			}
		}
	})
}

// BenchmarkMicroKernel times each path's micro-kernel alone on panels in
// the L1 cache (k = 256): its peak, without packing or memory.
func BenchmarkMicroKernel(b *testing.B) {
	for _, kn := range available() {
		if kn.gemm == nil {
			continue
		}
		b.Run(kn.name, func(b *testing.B) {
			const k = 256
			a, bp, c := make([]float32, kn.mr*k), make([]float32, kn.nr*k), make([]float32, kn.mr*kn.nr)
			for i := 0; i < b.N; i++ {
				kn.gemm(k, &a[0], 4, 4*kn.mr, &bp[0], 4*kn.nr, &c[0], kn.nr, false)
			}
			b.ReportMetric(float64(2*kn.mr*kn.nr*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestBetaZeroSetsPlusZero checks that a product with beta 0 gives the
// bits of zeroing C and then adding the sums: where every product is −0
// (zeros times negatives) C holds +0, whatever it held before, on every
// path and in whole blocks as in edge blocks.
func TestBetaZeroSetsPlusZero(t *testing.T) {
	forEachPath(t, func(t *testing.T, kn *Kernels) {
		const m, n, k = 25, 70, 300
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for i := range b {
			b[i] = -1
		}
		for i := range c {
			c[i] = float32(math.NaN())
		}
		kn.Gemm(true, false, false, m, n, k, 1, a, k, b, n, 0, c, n)
		for i, v := range c {
			if math.Float32bits(v) != 0 {
				t.Fatalf("c[%d] = %g (bits %#x), want +0", i, v, math.Float32bits(v))
			}
		}
	})
}
