package models

import (
	"github.com/beluga-nlp/beluga/models/backend"
	"math"

	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// ModernBERT's kernels beside the encoder's shared ones (kernels.go):
// rotary position embeddings, attention under a sliding window, and the
// GeGLU feed-forward gate. Like those, they are generic over float32 and
// float64 so that the finite-difference tests check this very code.

// ropeTable returns the cosines and sines of rotary position embeddings
// for positions 0…seq−1 and a head of width d, seq × d/2 each, as
// HuggingFace's ModernBertRotaryEmbedding computes them: inverse
// frequencies 1/θ^(2i/d) and their products with the position in float32,
// their cosine and sine rounded from float64.
func ropeTable[T Float](theta float64, seq, d int) (cos, sin []T) {
	half := d / 2
	cos, sin = make([]T, seq*half), make([]T, seq*half)
	for i := 0; i < half; i++ {
		inv := float32(1) / float32(math.Pow(theta, float64(float32(2*i)/float32(d))))
		for p := 0; p < seq; p++ {
			f := float64(float32(p) * inv)
			cos[p*half+i], sin[p*half+i] = T(float32(math.Cos(f))), T(float32(math.Sin(f)))
		}
	}
	return cos, sin
}

// rotary rotates every head of x (batch·seq × heads·d, heads side by side)
// in place by its position's angles, in HuggingFace's rotate_half form: the
// pair (x_i, x_{i+d/2}) becomes (x_i·cos − x_{i+d/2}·sin, x_{i+d/2}·cos +
// x_i·sin). With inverse set it applies the transposed rotation (angles
// negated), which is the rotation's backward pass. Token t of a row is at
// position t.
func rotary[T Float](x, cos, sin []T, batch, seq, heads, d int, inverse bool) {
	rotaryAt(x, cos, sin, batch*seq, heads, d, inverse, func(r int) int { return r % seq })
}

// rotaryAt is rotary for rows tokens of x whose positions pos gives (the
// decoders': a padded row's, or one continuing a cached prefix).
func rotaryAt[T Float](x, cos, sin []T, rows, heads, d int, inverse bool, pos func(r int) int) {
	half, h := d/2, heads*d
	vec32.ParallelFor(rows, max(1, elementGrain/h), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			p := pos(r)
			c, s := cos[p*half:(p+1)*half], sin[p*half:(p+1)*half]
			for hd := 0; hd < heads; hd++ {
				row := x[r*h+hd*d : r*h+(hd+1)*d]
				for i := 0; i < half; i++ {
					a, b := row[i], row[i+half]
					si := s[i]
					if inverse {
						si = -si
					}
					row[i], row[i+half] = a*c[i]-b*si, b*c[i]+a*si
				}
			}
		}
	})
}

// gegluForward is ModernBertMLP's gate: u (n × 2f) is Wi's output, its first
// f columns the input and its last f the gate; act receives GELU(input) and
// g receives GELU(input)·gate (both n × f).
func gegluForward[T Float](be backend.Backend, g, act, u []T, n, f int) {
	vec32.ParallelFor(n, max(1, elementGrain/f), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			in, gate := u[r*2*f:r*2*f+f], u[r*2*f+f:(r+1)*2*f]
			a, gr := act[r*f:(r+1)*f], g[r*f:(r+1)*f]
			geluForward(be, a, in)
			for i := range gr {
				gr[i] = a[i] * gate[i]
			}
		}
	})
}

// gegluBackward sets du (n × 2f) from dg, the gradient of GELU(input)·gate:
// d(gate) = dg·GELU(input), d(input) = dg·gate·GELU′(input).
func gegluBackward[T Float](be backend.Backend, du, dg, act, u []T, n, f int) {
	vec32.ParallelFor(n, max(1, elementGrain/f), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			in, gate := u[r*2*f:r*2*f+f], u[r*2*f+f:(r+1)*2*f]
			din, dgate := du[r*2*f:r*2*f+f], du[r*2*f+f:(r+1)*2*f]
			d, a := dg[r*f:(r+1)*f], act[r*f:(r+1)*f]
			for i := range d {
				dgate[i] = d[i] * a[i]
				din[i] = d[i] * gate[i]
			}
			geluBackward(be, din, din, in)
		}
	})
}
