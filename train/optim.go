package train

import (
	"math"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
)

// AdamW is torch.optim.AdamW, the optimiser of HuggingFace's Trainer:
// decoupled weight decay θ ← θ(1 − lr·λ) for parameters without NoDecay
// (biases and LayerNorm weights are exempt, as the Trainer groups them),
// then Adam with bias-corrected moments:
//
//	m ← β1·m + (1−β1)·g,   v ← β2·v + (1−β2)·g²
//	θ ← θ − lr/(1−β1ᵗ) · m / (√v/√(1−β2ᵗ) + ε)
type AdamW struct {
	Beta1, Beta2, Eps, WeightDecay float64
	step                           int
	m, v                           map[*models.Param][]float32
}

// NewAdamW returns AdamW with the Trainer's defaults (β = 0.9, 0.999;
// ε = 1e-8) and the given decoupled weight decay.
func NewAdamW(weightDecay float64) *AdamW {
	return &AdamW{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay,
		m: map[*models.Param][]float32{}, v: map[*models.Param][]float32{}}
}

// Steps is the number of updates made so far.
func (o *AdamW) Steps() int { return o.step }

// Reset forgets the moments and the step count (LP-FT's second phase starts
// a fresh optimiser).
func (o *AdamW) Reset() {
	o.step = 0
	o.m, o.v = map[*models.Param][]float32{}, map[*models.Param][]float32{}
}

// AdamWState is a copy of an optimiser's moments and step count.
type AdamWState struct {
	step int
	m, v map[*models.Param][]float32
}

// State returns a deep copy of the optimiser's state.
func (o *AdamW) State() AdamWState {
	be := models.Backend()
	cp := func(src map[*models.Param][]float32) map[*models.Param][]float32 {
		dst := make(map[*models.Param][]float32, len(src))
		for p, x := range src {
			dst[p] = be.Alloc(len(x))
			be.Copy(dst[p], x)
		}
		return dst
	}
	return AdamWState{step: o.step, m: cp(o.m), v: cp(o.v)}
}

// SetState restores a state returned by State (Fish restores the
// optimiser's state before every outer step, as BeLUGA does).
func (o *AdamW) SetState(s AdamWState) {
	o.step, o.m, o.v = s.step, s.m, s.v
}

// Step updates params from their gradients with learning rate lr, on the
// models' compute backend (which also holds the moments). Frozen
// parameters (skip returns true) keep their values and moments.
func (o *AdamW) Step(params []*models.Param, lr float64, skip func(*models.Param) bool) {
	o.step++
	bc1 := 1 - math.Pow(o.Beta1, float64(o.step))
	bc2 := math.Sqrt(1 - math.Pow(o.Beta2, float64(o.step)))
	be := models.Backend()
	s := backend.AdamWStep{Beta1: float32(o.Beta1), Beta2: float32(o.Beta2),
		Eps: float32(o.Eps), StepSize: float32(lr / bc1), InvBC2: float32(1 / bc2)}
	for _, p := range params {
		if skip != nil && skip(p) {
			continue
		}
		m, ok := o.m[p]
		if !ok {
			m, o.v[p] = be.Alloc(len(p.Value)), be.Alloc(len(p.Value))
			o.m[p] = m
		}
		s.Decay = 1
		if !p.NoDecay && o.WeightDecay != 0 {
			s.Decay = float32(1 - lr*o.WeightDecay)
		}
		be.AdamW(p.Value, p.Grad, m, o.v[p], s)
	}
}

// ClipGradNorm scales all gradients so that their global L2 norm is at most
// maxNorm, as torch.nn.utils.clip_grad_norm_ does (coefficient
// maxNorm/(norm + 1e-6), applied only when below 1). It returns the norm
// before clipping.
func ClipGradNorm(params []*models.Param, maxNorm float64) float64 {
	be := models.Backend()
	var sq float64
	for _, p := range params {
		sq = be.AddSquares(sq, p.Grad)
	}
	norm := math.Sqrt(sq)
	if coef := maxNorm / (norm + 1e-6); coef < 1 {
		for _, p := range params {
			be.Scale(p.Grad, float32(coef))
		}
	}
	return norm
}

// ZeroGrad clears every gradient.
func ZeroGrad(params []*models.Param) {
	be := models.Backend()
	for _, p := range params {
		be.Zero(p.Grad)
	}
}

// LinearDecay is HuggingFace's linear schedule without warm-up: the
// learning rate of update step (0-based) is lr·max(0, (total−step)/total).
func LinearDecay(lr float64, step, total int) float64 {
	if total <= 0 {
		return lr
	}
	return lr * math.Max(0, float64(total-step)/float64(total))
}
