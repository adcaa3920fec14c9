//go:build !openblas

package models

import "github.com/beluga-nlp/beluga/models/internal/vec32"

// BLAS names the BLAS implementation the build uses: gonum's pure Go one,
// unless built with -tags openblas.
const BLAS = "gonum"

// splitGemm says whether gemm splits large products across goroutines;
// gonum's Gemm already does.
const splitGemm = false

// fastF32Gemm says whether float32 products run on vec32 rather than the
// BLAS: in the pure Go build, where the CPU has AVX2 and FMA.
var fastF32Gemm = vec32.HasAVX2FMA
