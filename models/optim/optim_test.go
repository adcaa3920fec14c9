package optim_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/optim"
)

func TestAdamWMatchesTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/adamw.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Init, Final map[string][]float32
		Grads       []map[string][]float32
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	w := &models.Param{Name: "w", Value: append([]float32(nil), ref.Init["w"]...), Grad: make([]float32, 6)}
	b := &models.Param{Name: "b", Value: append([]float32(nil), ref.Init["b"]...), Grad: make([]float32, 3), NoDecay: true}
	params := []*models.Param{w, b}
	opt := optim.NewAdamW(backend.Reference(), 0.1)
	for step, g := range ref.Grads {
		copy(w.Grad, g["w"])
		copy(b.Grad, g["b"])
		optim.ClipGradNorm(backend.Reference(), params, 1.0)
		opt.Step(params, optim.LinearDecay(1e-2, step, len(ref.Grads)), nil)
	}
	for _, p := range params {
		for i, v := range p.Value {
			if want := ref.Final[p.Name][i]; math.Abs(float64(v-want)) > 1e-6 {
				t.Errorf("%s[%d] = %g, torch %g", p.Name, i, v, want)
			}
		}
	}
}

func TestAdamWDecoupledDecay(t *testing.T) {
	// With zero gradients Adam's update is zero, so only the decay acts:
	// θ ← θ(1 − lr·λ) for decayed parameters, unchanged for NoDecay ones.
	w := &models.Param{Value: []float32{2, -4}, Grad: []float32{0, 0}}
	b := &models.Param{Value: []float32{3}, Grad: []float32{0}, NoDecay: true}
	opt := optim.NewAdamW(backend.Reference(), 0.1)
	for i := 0; i < 3; i++ {
		opt.Step([]*models.Param{w, b}, 0.5, nil)
	}
	want := 2 * math.Pow(1-0.05, 3)
	if math.Abs(float64(w.Value[0])-want) > 1e-6 || b.Value[0] != 3 {
		t.Errorf("after 3 steps: w %v (want %g), b %v (want 3)", w.Value, want, b.Value)
	}
}
