package backend_test

import (
	"testing"

	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/backend/conformance"
	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// TestGoConformance runs the conformance suite on the pure Go backend on
// every kernel path this machine has, against the same backend on the
// portable path (the go path against itself: there, batch-size invariance
// and the fixtures' loading are the checks).
func TestGoConformance(t *testing.T) {
	b, err := backend.Lookup("go")
	if err != nil {
		t.Fatal(err)
	}
	defer pin(vec32.Path())
	ref := onPath{backend.Reference(), vec32.PathGo}
	for _, p := range vec32.Paths() {
		t.Run(p, func(t *testing.T) {
			conformance.RunAgainst(t, onPath{b, p}, ref, "../testdata")
		})
	}
}

// onPath runs a backend on one kernel path: each operation first makes it
// the path in use. The suite runs one backend at a time, so that the
// operations of the reference and of the backend under test never overlap.
type onPath struct {
	backend.Backend
	path string
}

func pin(p string) {
	if _, err := vec32.Use(p); err != nil {
		panic(err) // p is one of vec32.Paths()
	}
}

func (o onPath) Name() string { return o.Backend.Name() + "/" + o.path }

func (o onPath) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	pin(o.path)
	o.Backend.Gemm(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (o onPath) GELU(y, x []float32) { pin(o.path); o.Backend.GELU(y, x) }

func (o onPath) GELUBackward(dx, dy, x []float32) { pin(o.path); o.Backend.GELUBackward(dx, dy, x) }

func (o onPath) Softmax(row []float32) { pin(o.path); o.Backend.Softmax(row) }

func (o onPath) LayerNorm(y, xhat, rstd, x, gamma, beta []float32, h int, eps float64) {
	pin(o.path)
	o.Backend.LayerNorm(y, xhat, rstd, x, gamma, beta, h, eps)
}

func (o onPath) LayerNormBackward(dx, dgamma, dbeta, dy, xhat, rstd, gamma []float32, h int) {
	pin(o.path)
	o.Backend.LayerNormBackward(dx, dgamma, dbeta, dy, xhat, rstd, gamma, h)
}

func (o onPath) AdamW(value, grad, m, v []float32, s backend.AdamWStep) {
	pin(o.path)
	o.Backend.AdamW(value, grad, m, v, s)
}
