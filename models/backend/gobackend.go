package backend

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// goBackend is pure Go, in every build: float32 products run on vec32
// where the CPU has AVX2 and FMA, else on gonum's BLAS (which splits large
// products across goroutines itself).
var goBackend Backend = pureGo{}

func init() { Register(goBackend) }

type pureGo struct{ cpu }

func (pureGo) Name() string { return "go" }

func (pureGo) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if vec32.HasAVX2FMA {
		vec32.Gemm(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if m == 0 || n == 0 {
		return
	}
	gonum.Implementation{}.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}
