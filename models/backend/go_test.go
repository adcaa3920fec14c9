package backend_test

import (
	"testing"

	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/backend/conformance"
)

// TestGoConformance runs the conformance suite on the pure Go backend
// (against itself for the reference comparisons; batch-size invariance and
// the fixtures' loading are its own).
func TestGoConformance(t *testing.T) {
	b, err := backend.Lookup("go")
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, b, "../testdata")
}
