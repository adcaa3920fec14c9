//go:build !openblas

package models

// BLAS names the BLAS implementation the build uses: gonum's pure Go one,
// unless built with -tags openblas.
const BLAS = "gonum"

// splitGemm says whether gemm splits large products across goroutines;
// gonum's Gemm already does.
const splitGemm = false
