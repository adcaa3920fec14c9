package backend_test

import (
	"testing"

	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/backend/conformance"
)

// TestGoConformance runs the conformance suite on the pure Go backend on
// every kernel path this machine has, against the same backend on the
// portable path (the go path against itself: there, batch-size invariance
// and the fixtures' loading are the checks).
func TestGoConformance(t *testing.T) {
	ref := onPath(t, "go", "go")
	for _, p := range backend.Paths() {
		t.Run(p, func(t *testing.T) {
			conformance.RunAgainst(t, onPath(t, "go", p), ref, "../testdata")
		})
	}
}

// onPath is backend name on kernel path p.
func onPath(t *testing.T, name, p string) backend.Backend {
	t.Helper()
	b, err := backend.New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	if b.Kernels() != p {
		t.Fatalf("backend %s built for path %s runs on %s", name, p, b.Kernels())
	}
	return b
}
