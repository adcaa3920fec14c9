package backend_test

import (
	"testing"

	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/backend/conformance"
)

// BF16Tol are the tolerances of a bf16 backend against float32. Each
// operand of a bf16 product is rounded to 8 significand bits (half an ulp:
// 2⁻⁸ relative), so each term of a product is off by up to 2⁻⁷ relative;
// a whole product, norm-wise, by about that (2⁻⁵, 3 %, bounds it with
// room). A fixture's logits and gradients come through a chain of such
// products — up to about ten, forward and back through two layers — whose
// errors add: 8 % (the fixtures show logits within 1.6 %, gradients within
// 5.8 %: ModernBERT's Wqkv, behind its gated MLP and two LayerNorms).
// Batch invariance keeps float32's bound: the rounding of each element
// does not depend on the batch, and padding adds products of zero.
var BF16Tol = conformance.Tolerances{Gemm: 1.0 / 32, Model: 0.08, Invariance: conformance.InvarianceTol}

// TestBF16Conformance runs the conformance suite on the pure Go backend
// with bf16 products (backend.BF16) on every kernel path this machine has
// (the avx512 path multiplies with VDPBF16PS where the CPU has it, the
// others with the portable kernel), against the float32 reference.
func TestBF16Conformance(t *testing.T) {
	ref := onPath(t, "go", "go")
	for _, p := range backend.Paths() {
		t.Run(p, func(t *testing.T) {
			conformance.RunWithin(t, backend.BF16(onPath(t, "go", p)), ref, "../testdata", BF16Tol)
		})
	}
}
