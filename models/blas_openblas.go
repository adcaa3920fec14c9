//go:build openblas

package models

// The openblas build routes gonum's BLAS (and so every matrix product of the
// models) to OpenBLAS through gonum.org/v1/netlib; it needs cgo and Debian's
// libopenblas-dev. Set OPENBLAS_NUM_THREADS to bound its threads.

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

func init() {
	blas32.Use(netlib.Implementation{})
	blas64.Use(netlib.Implementation{})
}

// BLAS names the BLAS implementation the build uses.
const BLAS = "openblas"
