//go:build openblas

package backend

// The openblas backend runs float32 products in OpenBLAS through
// gonum.org/v1/netlib (cgo, Debian's libopenblas-dev). OpenBLAS runs
// single-threaded and large products are split by rows of C across
// goroutines here: OpenBLAS's own worker threads spin while they wait for
// work, taking the cores from the element-wise kernels and from the
// per-head attention products, which run in parallel between the large
// products.
//
// OpenBLAS's bits for a row of C depend on the call it is computed in (the
// number of rows, the row's place among them: its edge kernels for the
// last rows of a call sum differently), so the split is fixed by the
// product's shape alone — blocks of gemmRowBlock rows — and never by the
// number of cores: a product, and so a run, has the same bits on one core
// as on 64. (Splitting by the core count made a probe differ by 1.4e-5
// between GOMAXPROCS 1 and 2.)

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
	register("openblas", func(kn *vec32.Kernels) Backend { return openBLAS{cpu{kn}} })
}

type openBLAS struct{ cpu }

func (openBLAS) Name() string { return "openblas" }

// gemmSplitWork is the least m·n·k worth splitting across goroutines.
const gemmSplitWork = 1 << 19

// gemmRowBlock is the rows of C in one OpenBLAS call of a split product:
// large enough that repacking B for each block costs little (B is packed
// once per 2·gemmRowBlock flops per element of B), small enough that a
// batch of a few 128-token sequences makes blocks for every core.
const gemmRowBlock = 64

func (openBLAS) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if parallel && m > gemmRowBlock && m*n*k >= gemmSplitWork {
		blocks := (m + gemmRowBlock - 1) / gemmRowBlock
		vec32.ParallelFor(blocks, 1, func(b0, b1 int) {
			for blk := b0; blk < b1; blk++ {
				lo, hi := blk*gemmRowBlock, min(m, (blk+1)*gemmRowBlock)
				aOff := lo * lda // rows of A
				if transA {
					aOff = lo // columns of A
				}
				netlib.Implementation{}.Sgemm(trans(transA), trans(transB), hi-lo, n, k, alpha, a[aOff:], lda, b, ldb, beta, c[lo*ldc:], ldc)
			}
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
