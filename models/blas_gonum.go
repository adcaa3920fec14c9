//go:build !openblas

package models

// BLAS names the BLAS implementation the build uses: gonum's pure Go one,
// unless built with -tags openblas.
const BLAS = "gonum"

// defaultBackend is the compute backend the models start on: pure Go
// (vec32's kernels where the CPU has AVX2 and FMA, else gonum's BLAS).
const defaultBackend = "go"

// splitGemm says whether float64 products split large products across
// goroutines; gonum's Gemm already does.
const splitGemm = false
