package models

import (
	"math"
	"testing"
)

// TestHeadForwardMatchesForward: the head run on the pooler's output gives
// the model's logits and, with the encoder frozen and dropout off, the
// classifier gradients of a full training pass.
func TestHeadForwardMatchesForward(t *testing.T) {
	cfg := TinyConfig(200)
	cfg.HiddenSize, cfg.IntermediateSize = 32, 64
	b := NewBatch([]Encoding{{IDs: []int{1, 5, 9, 2}, TypeIDs: make([]int, 4)}, {IDs: []int{1, 7, 2}, TypeIDs: make([]int, 3)}})
	dz := []float32{0.3, -0.1, -0.7, 0.2}
	grads := func(m *BERT) [][]float32 {
		var g [][]float32
		for _, name := range []string{"classifier.weight", "classifier.bias"} {
			g = append(g, append([]float32(nil), m.Param(name).Grad...))
		}
		return g
	}
	full, _, err := NewBERT(cfg, 2, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	full.SetDropout(0, 0)
	full.SetFrozenEncoder(true)
	out, err := full.Infer(b)
	if err != nil {
		t.Fatal(err)
	}
	head, err := full.HeadForward(out.Pooled, b.Size, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range head.Logits() {
		if math.Abs(float64(v-out.Logits[i])) > 1e-6 {
			t.Fatalf("head logits %v, model logits %v", head.Logits(), out.Logits)
		}
	}
	pass, err := full.Forward(b, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := pass.Backward(dz); err != nil {
		t.Fatal(err)
	}
	want := grads(full)
	probe, _, _ := NewBERT(cfg, 2, nil, 4)
	probe.SetDropout(0, 0)
	hp, err := probe.HeadForward(out.Pooled, b.Size, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := hp.Backward(dz); err != nil {
		t.Fatal(err)
	}
	for i, g := range grads(probe) {
		for j, v := range g {
			if math.Abs(float64(v-want[i][j])) > 1e-6 {
				t.Fatalf("head gradient %d[%d] = %v, full pass %v", i, j, v, want[i][j])
			}
		}
	}
	for _, p := range probe.Params() {
		if !p.Encoder {
			continue
		}
		for _, v := range p.Grad {
			if v != 0 {
				t.Fatalf("the head's backward touched %s", p.Name)
			}
		}
	}
	if _, err := probe.HeadForward(out.Pooled[1:], b.Size, false); err == nil {
		t.Error("features of the wrong length accepted")
	}
}
