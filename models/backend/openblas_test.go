//go:build openblas

package backend_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/backend/conformance"
)

// TestOpenBLASConformance runs the conformance suite on OpenBLAS against
// pure Go.
func TestOpenBLASConformance(t *testing.T) {
	b, err := backend.New("openblas", "")
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, b, "../testdata")
}

// TestOpenBLASSameBitsOnAnyCores: a product large enough to be split
// across goroutines has the same bits under GOMAXPROCS 1, 2 and 7 — the
// split is the product's shape's, not the machine's (OpenBLAS's bits for a
// row depend on the rows it is computed with).
func TestOpenBLASSameBitsOnAnyCores(t *testing.T) {
	b, err := backend.New("openblas", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		transA, transB bool
		m, n, k        int
	}{
		{false, false, 300, 96, 128},
		{true, false, 257, 64, 96},
		{false, true, 640, 128, 33},
	} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.m)))
		fill := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			return x
		}
		a, bm, c0 := fill(tc.m*tc.k), fill(tc.k*tc.n), fill(tc.m*tc.n)
		lda, ldb := tc.k, tc.n
		if tc.transA {
			lda = tc.m
		}
		if tc.transB {
			ldb = tc.k
		}
		var want []float32
		for _, procs := range []int{1, 2, 7} {
			prev := runtime.GOMAXPROCS(procs)
			c := slices.Clone(c0)
			b.Gemm(true, tc.transA, tc.transB, tc.m, tc.n, tc.k, 0.5, a, lda, bm, ldb, 1, c, tc.n)
			runtime.GOMAXPROCS(prev)
			if want == nil {
				want = c
				continue
			}
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v: C[%d] = %v under GOMAXPROCS %d, %v under 1", tc, i, c[i], procs, want[i])
				}
			}
		}
	}
}
