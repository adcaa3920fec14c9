package models

import (
	"encoding/json"
	"github.com/beluga-nlp/beluga/models/backend"
	"math"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// Finite-difference checks of ModernBERT's own kernels, in float64, as
// kernels_test.go checks the shared ones.

func TestRotaryGrad(t *testing.T) {
	r := &rng{11}
	batch, seq, heads, d := 2, 5, 2, 4
	for _, theta := range []float64{10000, 160000} {
		cos, sin := ropeTable[float64](theta, seq, d)
		x := randVec(r, batch*seq*heads*d)
		rw := randVec(r, len(x))
		loss := func() float64 {
			y := append([]float64(nil), x...)
			rotary(y, cos, sin, batch, seq, heads, d, false)
			return dot(y, rw)
		}
		dx := append([]float64(nil), rw...)
		rotary(dx, cos, sin, batch, seq, heads, d, true)
		checkGrad(t, "rotary", x, dx, loss)
	}
}

// TestRotaryForm checks the rotation against rotate_half written out: x·cos
// + rotate_half(x)·sin with rotate_half(x) = (−x₂, x₁), position p's angle
// for pair i being p/θ^(2i/d); position 0 is left alone.
func TestRotaryForm(t *testing.T) {
	const seq, d, theta = 3, 4, 10000.0
	cos, sin := ropeTable[float64](theta, seq, d)
	x := []float64{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}
	y := append([]float64(nil), x...)
	rotary(y, cos, sin, 1, seq, 1, d, false)
	for p := 0; p < seq; p++ {
		for i := 0; i < d; i++ {
			ang := float64(p) / math.Pow(theta, float64(2*(i%(d/2)))/d)
			rot := -x[p*d+(i+d/2)%d]
			if i >= d/2 {
				rot = x[p*d+i-d/2]
			}
			want := x[p*d+i]*math.Cos(ang) + rot*math.Sin(ang)
			if math.Abs(y[p*d+i]-want) > 1e-6 {
				t.Errorf("position %d, dim %d: %g, want %g", p, i, y[p*d+i], want)
			}
		}
	}
}

func TestGeGLUGrad(t *testing.T) {
	r := &rng{12}
	n, f := 3, 5
	u := randVec(r, n*2*f)
	for i := range u {
		u[i] *= 3
	}
	rw := randVec(r, n*f)
	fwd := func() ([]float64, []float64) {
		g, act := make([]float64, n*f), make([]float64, n*f)
		gegluForward(backend.Reference(), g, act, u, n, f)
		return g, act
	}
	loss := func() float64 { g, _ := fwd(); return dot(g, rw) }
	_, act := fwd()
	du := make([]float64, n*2*f)
	gegluBackward(backend.Reference(), du, rw, act, u, n, f)
	checkGrad(t, "geglu", u, du, loss)
}

// TestBiasFreeLayerNormGrad checks ModernBERT's LayerNorm without β (norm_bias
// false: β reads as zeros, its gradient is thrown away) against finite
// differences, through the model's own helpers.
func TestBiasFreeLayerNormGrad(t *testing.T) {
	r := &rng{13}
	rows, h := 3, 8
	x, g := randVec(r, rows*h), randVec(r, h)
	zeros := make([]float64, h)
	rw := randVec(r, rows*h)
	fwd := func() ([]float64, []float64, []float64) {
		y, xh, rs := make([]float64, rows*h), make([]float64, rows*h), make([]float64, rows)
		layerNormForward(backend.Reference(), y, xh, rs, x, g, zeros, h, 1e-5)
		return y, xh, rs
	}
	loss := func() float64 { y, _, _ := fwd(); return dot(y, rw) }
	_, xh, rs := fwd()
	dx, dg, scratch := make([]float64, rows*h), make([]float64, h), make([]float64, h)
	layerNormBackward(backend.Reference(), dx, dg, scratch, rw, xh, rs, g, h)
	checkGrad(t, "bias-free layernorm dx", x, dx, loss)
	checkGrad(t, "bias-free layernorm dgamma", g, dg, loss)
	for _, z := range zeros {
		if z != 0 {
			t.Fatal("the shared zero β was written")
		}
	}
}

// TestWindowMask checks the sliding window as HuggingFace builds it: query i
// sees key j only when |i − j| ≤ local_attention/2 and j is not padding; a
// query with no such key (padding far from every token) spreads its weight
// evenly over all keys.
func TestWindowMask(t *testing.T) {
	r := &rng{14}
	batch, seq, heads, d, window := 1, 7, 1, 2, 1
	q, k, v := randVec(r, seq*d), randVec(r, seq*d), randVec(r, seq*d)
	mask := []float32{1, 1, 1, 0, 0, 0, 0}
	ctx, probs := make([]float64, seq*d), make([]float64, seq*seq)
	windowAttentionForward(backend.Reference(), ctx, probs, q, k, v, mask, nil, batch, seq, heads, d, window)
	for i := 0; i < seq; i++ {
		seen := false
		for j := 0; j < seq; j++ {
			if mask[j] == 1 && i-j <= window && j-i <= window {
				seen = true
			}
		}
		for j := 0; j < seq; j++ {
			p := probs[i*seq+j]
			switch {
			case !seen && math.Abs(p-1/float64(seq)) > 1e-12:
				t.Errorf("query %d sees no key: weight %g on key %d, want 1/%d", i, p, j, seq)
			case seen && (mask[j] == 0 || i-j > window || j-i > window) && p != 0:
				t.Errorf("query %d: weight %g on masked key %d", i, p, j)
			case seen && mask[j] == 1 && i-j <= window && j-i <= window && p == 0:
				t.Errorf("query %d: no weight on key %d in its window", i, j)
			}
		}
	}
}

func TestWindowAttentionGrad(t *testing.T) {
	r := &rng{15}
	batch, seq, heads, d := 2, 6, 2, 3
	h := heads * d
	q, k, v := randVec(r, batch*seq*h), randVec(r, batch*seq*h), randVec(r, batch*seq*h)
	mask := []float32{1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0}
	for _, window := range []int{-1, 0, 1, 2} {
		// A query that sees no key has equal weights that no score moves
		// (every score has rounded to the same minimum); HuggingFace's
		// autograd still differentiates through them, as attentionBackward
		// does. Those outputs stay out of the loss.
		rw := randVec(r, batch*seq*h)
		for row := 0; row < batch*seq; row++ {
			b, i := row/seq, row%seq
			seen := false
			for j := 0; j < seq; j++ {
				if mask[b*seq+j] == 1 && (window < 0 || (i-j <= window && j-i <= window)) {
					seen = true
				}
			}
			if !seen {
				clear(rw[row*h : (row+1)*h])
			}
		}
		fwd := func() ([]float64, []float64) {
			ctx, probs := make([]float64, batch*seq*h), make([]float64, batch*heads*seq*seq)
			windowAttentionForward(backend.Reference(), ctx, probs, q, k, v, mask, nil, batch, seq, heads, d, window)
			return ctx, probs
		}
		loss := func() float64 { c, _ := fwd(); return dot(c, rw) }
		_, probs := fwd()
		dq, dk, dv := make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(v))
		attentionBackward(backend.Reference(), dq, dk, dv, rw, probs, nil, q, k, v, batch, seq, heads, d)
		checkGrad(t, "window attention dq", q, dq, loss)
		checkGrad(t, "window attention dk", k, dk, loss)
		checkGrad(t, "window attention dv", v, dv, loss)
	}
}

// TestModernBERTDirectionalGrad checks the whole model's backward pass,
// every bias and dropout switched on (the fixture has neither), for both
// poolings and the span head: along a random direction in each parameter,
// the central difference of Σ r⊙logits (float32, the same dropout masks on
// both sides) must match the gradient's projection.
func TestModernBERTDirectionalGrad(t *testing.T) {
	cfg := TinyModernBERTConfig(50)
	cfg.HiddenSize, cfg.IntermediateSize = 16, 24
	cfg.PadTokenID = 3
	for _, k := range []string{"norm_bias", "attention_bias", "mlp_bias", "classifier_bias"} {
		cfg.Extra[k] = json.RawMessage("true")
	}
	cfg.Extra["local_attention"] = json.RawMessage("2")
	cfg.Extra["global_attn_every_n_layers"] = json.RawMessage("2")
	b := idsBatch([][]int{{1, 5, 9, 11, 40, 7, 2}, {1, 6, 2}, {1, 8, 30, 2}})
	for _, tc := range []struct {
		name    string
		span    bool
		pooling string
	}{{"cls", false, "cls"}, {"mean", false, "mean"}, {"span", true, "cls"}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg.Extra["classifier_pooling"] = json.RawMessage(`"` + tc.pooling + `"`)
			var m interface {
				Classifier
				SetDropout(hidden, attention float64)
				SeedDropout(seed uint64)
			}
			var err error
			if tc.span {
				m, _, err = NewSpanModel(cfg, nil, 3)
			} else {
				m, _, err = NewClassifier(cfg, 3, nil, 3)
			}
			if err != nil {
				t.Fatal(err)
			}
			m.SetDropout(0.1, 0.1)
			r := &rng{16}
			// Larger weights than the initialisation's, so that every
			// path carries a gradient well above float32 rounding.
			for _, p := range m.Params() {
				for i := range p.Value {
					p.Value[i] += float32(0.3 * r.f())
				}
			}
			var rw []float64
			loss := func() float64 {
				m.SeedDropout(9)
				pass, err := m.Forward(b, true)
				if err != nil {
					t.Fatal(err)
				}
				defer pass.Release()
				z := pass.Logits()
				if rw == nil {
					rw = randVec(r, len(z))
					if tc.span {
						// Padding positions far from every token see
						// no key in local layers: see TestWindowAttentionGrad.
						L := b.SeqLen
						for i := range rw {
							if b.Mask[(i/(2*L))*L+i%L] == 0 {
								rw[i] = 0
							}
						}
					}
				}
				s := 0.0
				for i, v := range z {
					s += float64(v) * rw[i]
				}
				return s
			}
			loss()
			m.SeedDropout(9)
			pass, err := m.Forward(b, true)
			if err != nil {
				t.Fatal(err)
			}
			dz := make([]float32, len(rw))
			for i, v := range rw {
				dz[i] = float32(v)
			}
			if err := pass.Backward(dz); err != nil {
				t.Fatal(err)
			}
			pass.Release()
			const eps = 3e-3
			for _, p := range m.Params() {
				// a unit direction, so that every step is as long
				dir := make([]float32, len(p.Value))
				var norm float64
				for i := range dir {
					dir[i] = float32(r.f())
					norm += float64(dir[i]) * float64(dir[i])
				}
				ana := 0.0
				for i := range dir {
					dir[i] /= float32(math.Sqrt(norm))
					ana += float64(dir[i]) * float64(p.Grad[i])
				}
				orig := append([]float32(nil), p.Value...)
				shift := func(s float32) {
					for i := range p.Value {
						p.Value[i] = orig[i] + s*dir[i]
					}
				}
				shift(eps)
				up := loss()
				shift(-eps)
				down := loss()
				copy(p.Value, orig)
				num := (up - down) / (2 * eps)
				if math.Abs(num-ana) > 1e-3*math.Max(1, math.Abs(ana)) {
					t.Errorf("%s: directional derivative %.6g, backward gives %.6g", p.Name, num, ana)
				}
			}
		})
	}
}

// TestModernBERTConfigErrors checks that config fields ModernBERT cannot
// honour are refused by name.
func TestModernBERTConfigErrors(t *testing.T) {
	for _, tc := range []struct{ field, value, want string }{
		{"hidden_activation", `"silu"`, `"hidden_activation"`},
		{"classifier_activation", `"tanh"`, `"classifier_activation"`},
		{"classifier_pooling", `"max"`, `"classifier_pooling"`},
		{"global_attn_every_n_layers", `0`, `"global_attn_every_n_layers"`},
		{"layer_types", `["full_attention"]`, `"layer_types"`},
		{"rope_parameters", `{"full_attention": {"rope_type": "yarn"}}`, `"rope_parameters"`},
		{"mlp_dropout", `1.5`, `"mlp_dropout"`},
	} {
		cfg := TinyModernBERTConfig(20)
		cfg.Extra[tc.field] = json.RawMessage(tc.value)
		_, _, err := NewClassifier(cfg, 2, nil, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s = %s: error %v, want one naming %s", tc.field, tc.value, err, tc.want)
		}
	}
	cfg := TinyModernBERTConfig(20)
	w := checkpoint.Tensors{"model.final_norm.weight": {Shape: []int{3}, Data: make([]float32, 3)}}
	if _, _, err := NewClassifier(cfg, 2, w, 1); err == nil || !strings.Contains(err.Error(), "model.final_norm.weight") {
		t.Errorf("mis-shaped tensor: error %v, want one naming it", err)
	}
}
