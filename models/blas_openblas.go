//go:build openblas

package models

// The openblas build computes on the "openblas" backend (package backend)
// and routes gonum's BLAS (the float64 products of the gradient checks) to
// OpenBLAS through gonum.org/v1/netlib; it needs cgo and Debian's
// libopenblas-dev.
//
// OpenBLAS runs single-threaded here, and the models split large products
// across GOMAXPROCS goroutines themselves: OpenBLAS's own worker threads
// spin while they wait for work, taking the cores from the element-wise
// kernels and from the per-head attention products, which run in parallel
// between the large products.

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

func init() {
	C.openblas_set_num_threads(1)
	blas64.Use(netlib.Implementation{})
}

// BLAS names the BLAS implementation the build uses.
const BLAS = "openblas"

// defaultBackend is the compute backend the models start on: OpenBLAS is
// faster than vec32's kernels (0.155 s against 0.163 s a BERT-tiny step).
const defaultBackend = "openblas"

// splitGemm says whether float64 products split large products across
// goroutines (the BLAS being single-threaded).
const splitGemm = true
