package backend

import (
	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// pureGo is pure Go, in every build: float32 products run on vec32's
// kernel path (AVX-512 or AVX2 micro-kernels, else gonum's BLAS, which
// splits large products across goroutines itself).
func init() { register("go", func(kn *vec32.Kernels) Backend { return pureGo{cpu{kn}} }) }

type pureGo struct{ cpu }

func (pureGo) Name() string { return "go" }

func (g pureGo) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	g.kn.Gemm(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
