package models

import (
	"math"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
)

var _ Classifier = (*BERT)(nil)

func fixtureBatch() Batch {
	return NewBatch([]Encoding{
		{IDs: []int{101, 2023, 3185, 2003, 2307, 102}, TypeIDs: []int{0, 0, 0, 0, 0, 0}},
		{IDs: []int{101, 2129, 2214, 102, 2054, 2287, 102}, TypeIDs: []int{0, 0, 0, 0, 1, 1, 1}},
		{IDs: []int{101, 2919, 102}, TypeIDs: []int{0, 0, 0}},
	})
}

func loadFixtureBERT(t *testing.T) *BERT {
	t.Helper()
	m, _, err := LoadBERT(fixture.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBERTGradientDirectional checks the whole model's backward pass.
func TestBERTGradientDirectional(t *testing.T) {
	m := loadFixtureBERT(t)
	m.HiddenDropout, m.AttentionDropout = 0, 0
	checkDirectional(t, m, fixtureBatch(), 9, rmsStep)
}

// rmsStep is a step small against the tensor's own scale, which keeps the
// difference quotient in the linear regime (embeddings are ~0.02).
func rmsStep(orig []float32) float64 {
	var rms float64
	for _, v := range orig {
		rms += float64(v) * float64(v)
	}
	return math.Min(1e-2, 0.05*math.Sqrt(rms/float64(len(orig))))
}

// checkDirectional checks m's backward pass on b: for L = Σ r⊙logits and a
// random direction u per parameter tensor (so a wrong gradient anywhere
// shows), (L(θ+εu) − L(θ−εu))/2ε must equal Σ ∇L·u; stepOf chooses ε from
// the tensor's values. It serves every model whose logits are a function
// of its parameters, whatever their layout (classes per row, or start and
// end logits per token).
func checkDirectional(t *testing.T, m Classifier, b Batch, seed uint64, stepOf func(orig []float32) float64) {
	t.Helper()
	r := &rng{seed}
	pass, err := m.Forward(b, true)
	if err != nil {
		t.Fatal(err)
	}
	weights := randVec(r, len(pass.Logits()))
	loss := func() float64 {
		p, err := m.Forward(b, false)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Release()
		return dot(float64s(p.Logits()), weights)
	}
	dl := make([]float32, len(weights))
	for i, w := range weights {
		dl[i] = float32(w)
	}
	if err := pass.Backward(dl); err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() {
		u := randVec(r, len(p.Value))
		analytic := 0.0
		for i := range u {
			analytic += float64(p.Grad[i]) * u[i]
		}
		orig := append([]float32(nil), p.Value...)
		eps := stepOf(orig)
		central := func(h float64) float64 {
			for i := range p.Value {
				p.Value[i] = orig[i] + float32(h*u[i])
			}
			up := loss()
			for i := range p.Value {
				p.Value[i] = orig[i] - float32(h*u[i])
			}
			down := loss()
			copy(p.Value, orig)
			return (up - down) / (2 * h)
		}
		// Richardson's extrapolation of two central differences cancels
		// their h² error, so the step can stay large enough that float32
		// rounding of the loss (which a BLAS's summation order changes)
		// does not swamp the difference.
		num := (4*central(eps/2) - central(eps)) / 3
		if math.Abs(num-analytic) > 2e-3*math.Max(1, math.Abs(num)) {
			t.Errorf("%s: directional derivative %.6g, backward gives %.6g", p.Name, num, analytic)
		}
	}
}

func TestBERTFrozenEncoderGetsNoGradient(t *testing.T) {
	m := loadFixtureBERT(t)
	m.SetFrozenEncoder(true)
	pass, err := m.Forward(fixtureBatch(), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := pass.Backward(make([]float32, 3*m.NumLabels())); err != nil {
		t.Fatal(err)
	}
	ones := []float32{1, -1, 0.5, 2, -3, 1}
	pass, _ = m.Forward(fixtureBatch(), true)
	pass.Backward(ones)
	for _, p := range m.Params() {
		nonzero := false
		for _, g := range p.Grad {
			nonzero = nonzero || g != 0
		}
		if p.Encoder && nonzero {
			t.Errorf("frozen encoder parameter %s got a gradient", p.Name)
		}
		if !p.Encoder && !nonzero {
			t.Errorf("classifier parameter %s got no gradient", p.Name)
		}
	}
}

func TestBERTDropout(t *testing.T) {
	m := loadFixtureBERT(t)
	b := fixtureBatch()
	eval, _ := m.Infer(b)
	evalPass, _ := m.Forward(b, false)
	for i, v := range evalPass.Logits() {
		if v != eval.Logits[i] {
			t.Fatal("Forward without training differs from Infer")
		}
	}
	m.HiddenDropout, m.AttentionDropout = 0.3, 0.3
	again, _ := m.Infer(b)
	for i, v := range again.Logits {
		if v != eval.Logits[i] {
			t.Fatal("dropout changed an evaluation pass")
		}
	}
	trainPass, _ := m.Forward(b, true)
	same := true
	for i, v := range trainPass.Logits() {
		same = same && v == eval.Logits[i]
	}
	if same {
		t.Error("dropout at 0.3 left the training logits unchanged")
	}
	// The kept fraction of a large mask is close to 1 − rate, also in a
	// recycled buffer.
	keep := m.keepMask(func(n int) []float32 {
		dirty := make([]float32, n)
		for i := range dirty {
			dirty[i] = 5
		}
		return dirty
	}, 100000, 0.3)
	kept := 0
	for _, k := range keep {
		if k != 0 {
			kept++
			if math.Abs(float64(k)-1/0.7) > 1e-6 {
				t.Fatalf("kept value %g, want 1/0.7", k)
			}
		}
	}
	if frac := float64(kept) / 1e5; math.Abs(frac-0.7) > 0.01 {
		t.Errorf("kept %.3f of the units, want 0.7", frac)
	}
}

// TestInferPooledFeedsTheClassifier checks that Output.Pooled is what the
// classifier reads: the logits are its affine image.
func TestInferPooledFeedsTheClassifier(t *testing.T) {
	m := loadFixtureBERT(t)
	out, err := m.Infer(fixtureBatch())
	if err != nil {
		t.Fatal(err)
	}
	h, k := m.Config.HiddenSize, m.NumLabels()
	w, b := m.Param("classifier.weight").Value, m.Param("classifier.bias").Value
	for i := 0; i < len(out.Logits)/k; i++ {
		for j := 0; j < k; j++ {
			z := float64(b[j])
			for c := 0; c < h; c++ {
				z += float64(w[j*h+c]) * float64(out.Pooled[i*h+c])
			}
			if math.Abs(z-float64(out.Logits[i*k+j])) > 1e-5 {
				t.Fatalf("row %d logit %d: %g from Pooled, %g from Infer", i, j, z, out.Logits[i*k+j])
			}
		}
	}
}
