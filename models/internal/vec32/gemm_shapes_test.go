package vec32

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// stepShapes are the shapes of a BERT-mini training step's products at
// batch 32 × 128, as benchmarks/floor records them (which replays them
// weighted by how often a step runs each): the shapes the vector paths are
// tuned on, one at a time.
var stepShapes = []struct {
	parallel, transA, transB bool
	m, n, k                  int
	beta                     float32
}{
	{true, false, true, 4096, 1024, 256, 1},
	{true, true, false, 1024, 256, 4096, 1},
	{true, true, false, 256, 256, 4096, 1},
	{true, false, true, 4096, 256, 1024, 1},
	{true, false, true, 4096, 256, 256, 1},
	{true, false, false, 4096, 256, 1024, 1},
	{true, false, false, 4096, 1024, 256, 0},
	{true, true, false, 256, 1024, 4096, 1},
	{true, false, false, 4096, 256, 256, 1},
	{false, true, false, 128, 64, 128, 0},
	{false, false, false, 128, 64, 128, 0},
	{false, false, true, 128, 128, 64, 0},
}

// BenchmarkSgemmStep runs each path's products over a BERT-mini step's
// shapes (one copy per core of the products the models run one per
// goroutine) and reports GFLOP/s from the wall clock and from the CPU
// time the process used (what the products reach on cores of their own).
func BenchmarkSgemmStep(b *testing.B) {
	forEachPathB(b, func(b *testing.B, kn *Kernels) {
		if kn.gemm == nil {
			b.Skip("the go path's products are gonum's")
		}
		for _, sh := range stepShapes {
			name := fmt.Sprintf("%dx%dx%d/t%v%v", sh.m, sh.n, sh.k, b2i(sh.transA), b2i(sh.transB))
			b.Run(name, func(b *testing.B) {
				copies := 1
				if !sh.parallel {
					copies = runtime.GOMAXPROCS(0)
				}
				lda, ldb := sh.k, sh.n
				if sh.transA {
					lda = sh.m
				}
				if sh.transB {
					ldb = sh.k
				}
				type bufs struct{ a, b, c []float32 }
				bs := make([]bufs, copies)
				for i := range bs {
					bs[i] = bufs{make([]float32, sh.m*sh.k), make([]float32, sh.k*sh.n), make([]float32, sh.m*sh.n)}
				}
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					var wg sync.WaitGroup
					for _, x := range bs {
						wg.Add(1)
						go func() {
							defer wg.Done()
							kn.Gemm(sh.parallel, sh.transA, sh.transB, sh.m, sh.n, sh.k, 1, x.a, lda, x.b, ldb, sh.beta, x.c, sh.n)
						}()
					}
					wg.Wait()
				}
				flops := 2 * float64(sh.m*sh.n*sh.k*copies) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				b.ReportMetric(flops/(cpuTime()-cpu0)*float64(runtime.GOMAXPROCS(0))/1e9, "GFLOP/s-cpu")
			})
		}
	})
}

func b2i(x bool) int {
	if x {
		return 1
	}
	return 0
}

func cpuTime() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
