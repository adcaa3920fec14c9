//go:build openblas

package backend

// The openblas backend runs float32 products in OpenBLAS through
// gonum.org/v1/netlib (cgo, Debian's libopenblas-dev). OpenBLAS runs
// single-threaded and large products are split by rows of C across
// goroutines here: OpenBLAS's own worker threads spin while they wait for
// work, taking the cores from the element-wise kernels and from the
// per-head attention products, which run in parallel between the large
// products.

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"

	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

func init() {
	C.openblas_set_num_threads(1)
	Register(openBLAS{})
}

type openBLAS struct{ cpu }

func (openBLAS) Name() string { return "openblas" }

// gemmSplitWork is the least m·n·k worth splitting across goroutines.
const gemmSplitWork = 1 << 19

func (openBLAS) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if parallel && m >= 64 && m*n*k >= gemmSplitWork {
		vec32.ParallelFor(m, 32, func(lo, hi int) {
			aOff := lo * lda // rows of A
			if transA {
				aOff = lo // columns of A
			}
			netlib.Implementation{}.Sgemm(trans(transA), trans(transB), hi-lo, n, k, alpha, a[aOff:], lda, b, ldb, beta, c[lo*ldc:], ldc)
		})
		return
	}
	netlib.Implementation{}.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}
