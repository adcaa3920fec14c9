//go:build openblas

package backend_test

import (
	"testing"

	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/backend/conformance"
)

// TestOpenBLASConformance runs the conformance suite on OpenBLAS against
// pure Go.
func TestOpenBLASConformance(t *testing.T) {
	b, err := backend.Lookup("openblas")
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, b, "../testdata")
}
