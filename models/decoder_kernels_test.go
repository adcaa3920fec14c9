package models

import (
	"math"
	"testing"
)

// Finite-difference checks of the decoders' own kernels, in float64, as
// kernels_test.go checks the shared ones.

func TestGELUTanhGrad(t *testing.T) {
	r := &rng{21}
	x := randVec(r, 40)
	for i := range x {
		x[i] *= 4
	}
	rw := randVec(r, len(x))
	loss := func() float64 {
		y := make([]float64, len(x))
		geluTanhForward(y, x)
		return dot(y, rw)
	}
	dx := make([]float64, len(x))
	geluTanhBackward(dx, rw, x)
	checkGrad(t, "gelu_new", x, dx, loss)
	// gelu_new at a few points, written out.
	for _, v := range []float64{-3, -0.5, 0, 0.7, 2} {
		y := []float64{0}
		geluTanhForward(y, []float64{v})
		want := 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		if math.Abs(y[0]-want) > 1e-14 {
			t.Errorf("gelu_new(%g) = %g, want %g", v, y[0], want)
		}
	}
}

func TestSwiGLUGrad(t *testing.T) {
	r := &rng{22}
	n := 30
	gate, up := randVec(r, n), randVec(r, n)
	for i := range gate {
		gate[i] *= 4
	}
	rw := randVec(r, n)
	fwd := func() ([]float64, []float64) {
		g, sig := make([]float64, n), make([]float64, n)
		swigluForward(g, sig, gate, up)
		return g, sig
	}
	loss := func() float64 { g, _ := fwd(); return dot(g, rw) }
	_, sig := fwd()
	dgate, dup := make([]float64, n), make([]float64, n)
	swigluBackward(dgate, dup, rw, sig, gate, up)
	checkGrad(t, "swiglu gate", gate, dgate, loss)
	checkGrad(t, "swiglu up", up, dup, loss)
}

func TestRMSNormGrad(t *testing.T) {
	r := &rng{23}
	rows, h := 3, 7
	x, gamma, rw := randVec(r, rows*h), randVec(r, h), randVec(r, rows*h)
	loss := func() float64 {
		y, rstd := make([]float64, rows*h), make([]float64, rows)
		rmsNormForward(y, rstd, x, gamma, h, 1e-6)
		return dot(y, rw)
	}
	rstd := make([]float64, rows)
	rmsNormForward(make([]float64, rows*h), rstd, x, gamma, h, 1e-6)
	dx, dgamma := make([]float64, rows*h), make([]float64, h)
	rmsNormBackward(dx, dgamma, rw, x, rstd, gamma, h)
	checkGrad(t, "rmsnorm x", x, dx, loss)
	checkGrad(t, "rmsnorm γ", gamma, dgamma, loss)
}
