package models

import (
	"github.com/beluga-nlp/beluga/models/backend"
	"math"
	"testing"
)

// Finite-difference checks of every kernel's backward pass, in float64:
// for L = Σ r⊙f(x) with fixed random r, the analytic dL/dx must match
// (L(x+h) − L(x−h)) / 2h.

type rng struct{ s uint64 }

func (r *rng) f() float64 {
	r.s = r.s*6364136223846793005 + 1442695040888963407
	return float64(r.s>>11)/(1<<53)*2 - 1
}

func randVec(r *rng, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.f()
	}
	return v
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// checkGrad compares analytic with numeric gradients of loss over x.
func checkGrad(t *testing.T, name string, x, analytic []float64, loss func() float64) {
	t.Helper()
	const h = 1e-6
	worst := 0.0
	for i := range x {
		orig := x[i]
		x[i] = orig + h
		up := loss()
		x[i] = orig - h
		down := loss()
		x[i] = orig
		num := (up - down) / (2 * h)
		err := math.Abs(num-analytic[i]) / math.Max(1, math.Abs(num))
		worst = math.Max(worst, err)
	}
	if worst > 1e-6 {
		t.Errorf("%s: gradient differs from finite differences by %.2g", name, worst)
	}
}

func TestLinearGrad(t *testing.T) {
	r := &rng{1}
	n, in, out := 3, 4, 5
	x, w, b := randVec(r, n*in), randVec(r, out*in), randVec(r, out)
	rw := randVec(r, n*out)
	loss := func() float64 {
		y := make([]float64, n*out)
		linearForward(backend.Reference(), y, x, w, b, n, in, out)
		return dot(y, rw)
	}
	dx, dw, db := make([]float64, n*in), make([]float64, out*in), make([]float64, out)
	linearBackward(backend.Reference(), dx, dw, db, rw, x, w, n, in, out)
	checkGrad(t, "linear dx", x, dx, loss)
	checkGrad(t, "linear dw", w, dw, loss)
	checkGrad(t, "linear db", b, db, loss)
}

func TestLayerNormGrad(t *testing.T) {
	r := &rng{2}
	rows, h := 3, 6
	x, g, b := randVec(r, rows*h), randVec(r, h), randVec(r, h)
	rw := randVec(r, rows*h)
	fwd := func() ([]float64, []float64, []float64) {
		y, xh, rs := make([]float64, rows*h), make([]float64, rows*h), make([]float64, rows)
		layerNormForward(backend.Reference(), y, xh, rs, x, g, b, h, 1e-12)
		return y, xh, rs
	}
	loss := func() float64 { y, _, _ := fwd(); return dot(y, rw) }
	_, xh, rs := fwd()
	dx, dg, db := make([]float64, rows*h), make([]float64, h), make([]float64, h)
	layerNormBackward(backend.Reference(), dx, dg, db, rw, xh, rs, g, h)
	checkGrad(t, "layernorm dx", x, dx, loss)
	checkGrad(t, "layernorm dgamma", g, dg, loss)
	checkGrad(t, "layernorm dbeta", b, db, loss)
}

func TestGELUGrad(t *testing.T) {
	r := &rng{3}
	x := randVec(r, 20)
	for i := range x {
		x[i] *= 4
	}
	rw := randVec(r, 20)
	loss := func() float64 { y := make([]float64, 20); geluForward(backend.Reference(), y, x); return dot(y, rw) }
	dx := make([]float64, 20)
	geluBackward(backend.Reference(), dx, rw, x)
	checkGrad(t, "gelu", x, dx, loss)
}

func TestAttentionGrad(t *testing.T) {
	r := &rng{4}
	batch, seq, heads, d := 2, 4, 2, 3
	h := heads * d
	q, k, v := randVec(r, batch*seq*h), randVec(r, batch*seq*h), randVec(r, batch*seq*h)
	mask := []float32{1, 1, 1, 0, 1, 1, 0, 0} // padding in both rows
	keep := make([]float64, batch*heads*seq*seq)
	for i := range keep {
		if r.f() > -0.6 { // about 80% kept
			keep[i] = 1 / 0.8
		}
	}
	rw := randVec(r, batch*seq*h)
	for _, tc := range []struct {
		name string
		keep []float64
	}{{"attention", nil}, {"attention with dropout", keep}} {
		fwd := func() ([]float64, []float64) {
			ctx, probs := make([]float64, batch*seq*h), make([]float64, batch*heads*seq*seq)
			attentionForward(backend.Reference(), ctx, probs, q, k, v, mask, tc.keep, batch, seq, heads, d)
			return ctx, probs
		}
		loss := func() float64 { c, _ := fwd(); return dot(c, rw) }
		_, probs := fwd()
		dq, dk, dv := make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(v))
		attentionBackward(backend.Reference(), dq, dk, dv, rw, probs, tc.keep, q, k, v, batch, seq, heads, d)
		checkGrad(t, tc.name+" dq", q, dq, loss)
		checkGrad(t, tc.name+" dk", k, dk, loss)
		checkGrad(t, tc.name+" dv", v, dv, loss)
	}
}
