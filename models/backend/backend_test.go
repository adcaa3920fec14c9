package backend_test

import (
	"testing"

	"github.com/beluga-nlp/beluga/models/backend"
)

// BenchmarkAdamW is one AdamW update of BERT-tiny's word embeddings
// (30522 × 128) on each backend of the build.
func BenchmarkAdamW(b *testing.B) {
	for _, name := range backend.Names() {
		be, _ := backend.Lookup(name)
		b.Run(name, func(b *testing.B) {
			const n = 30522 * 128
			v, g, m, s2 := be.Alloc(n), be.Alloc(n), be.Alloc(n), be.Alloc(n)
			for i := range g {
				g[i] = float32(i%97) * 1e-3
			}
			s := backend.AdamWStep{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, StepSize: 1e-3, InvBC2: 30, Decay: 1 - 1e-5}
			for b.Loop() {
				be.AdamW(v, g, m, s2, s)
			}
		})
	}
}

// TestLookup: the build's backends are found by name; an unknown name is
// an error naming those there are.
func TestLookup(t *testing.T) {
	for _, name := range backend.Names() {
		b, err := backend.Lookup(name)
		if err != nil || b.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, b, err)
		}
	}
	if _, err := backend.Lookup("cuda"); err == nil {
		t.Error("Lookup(cuda) found a backend this build does not have")
	}
	if backend.Reference().Name() != "go" {
		t.Errorf("reference backend %q, want go", backend.Reference().Name())
	}
}
