package backend_test

import (
	"testing"

	"github.com/beluga-nlp/beluga/models/backend"
)

// BenchmarkAdamW is one AdamW update of BERT-tiny's word embeddings
// (30522 × 128) on each backend of the build.
func BenchmarkAdamW(b *testing.B) {
	for _, name := range backend.Names() {
		be, _ := backend.New(name, "")
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

// TestNew: the build's backends are built by name for every kernel path;
// an unknown name or path is an error.
func TestNew(t *testing.T) {
	for _, name := range backend.Names() {
		for _, p := range append(backend.Paths(), "") {
			b, err := backend.New(name, p)
			if err != nil || b.Name() != name || (p != "" && b.Kernels() != p) {
				t.Errorf("New(%q, %q) = %v, %v", name, p, b, err)
			}
		}
	}
	if _, err := backend.New("cuda", ""); err == nil {
		t.Error("New(cuda) found a backend this build does not have")
	}
	if _, err := backend.New("go", "neon"); err == nil {
		t.Error("New(go, neon) found a kernel path this CPU does not have")
	}
	if backend.Reference().Name() != "go" {
		t.Errorf("reference backend %q, want go", backend.Reference().Name())
	}
}
