// Package optim holds what updates a model's parameters from their
// gradients — AdamW (torch.optim.AdamW, the optimiser of HuggingFace's
// Trainer) and its linear learning-rate schedule, gradient-norm clipping
// (torch.nn.utils.clip_grad_norm_) and clearing the gradients — on the
// compute backend that holds them.
//
// It sits below train, beside the backends, so that the backends'
// conformance suite checks the optimiser without importing the training
// loop: train drives it, the suite runs one step of it on each backend.
package optim

import (
	"math"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
)

// AdamW is torch.optim.AdamW: decoupled weight decay θ ← θ(1 − lr·λ) for
// parameters without NoDecay (biases and LayerNorm weights are exempt, as
// the Trainer groups them), then Adam with bias-corrected moments:
//
//	m ← β1·m + (1−β1)·g,   v ← β2·v + (1−β2)·g²
//	θ ← θ − lr/(1−β1ᵗ) · m / (√v/√(1−β2ᵗ) + ε)
//
// The moments live on the backend the optimiser was made for, the one
// holding the parameters it updates.
type AdamW struct {
	Beta1, Beta2, Eps, WeightDecay float64
	be                             backend.Backend
	step                           int
	m, v                           map[*models.Param][]float32
}

// NewAdamW returns AdamW on backend be with the Trainer's defaults (β =
// 0.9, 0.999; ε = 1e-8) and the given decoupled weight decay.
func NewAdamW(be backend.Backend, weightDecay float64) *AdamW {
	return &AdamW{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay, be: be,
		m: map[*models.Param][]float32{}, v: map[*models.Param][]float32{}}
}

// Backend is the backend the optimiser runs on (the parameters').
func (o *AdamW) Backend() backend.Backend { return o.be }

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
	cp := func(src map[*models.Param][]float32) map[*models.Param][]float32 {
		dst := make(map[*models.Param][]float32, len(src))
		for p, x := range src {
			dst[p] = o.be.Alloc(len(x))
			o.be.Copy(dst[p], x)
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

// Remap returns a copy of s with the moments of parameter from[i] given to
// to[i]: the state of the same optimiser over another copy of the model.
func (s AdamWState) Remap(from, to []*models.Param) AdamWState {
	out := AdamWState{step: s.step, m: map[*models.Param][]float32{}, v: map[*models.Param][]float32{}}
	for i, p := range from {
		if m, ok := s.m[p]; ok {
			out.m[to[i]] = append([]float32(nil), m...)
			out.v[to[i]] = append([]float32(nil), s.v[p]...)
		}
	}
	return out
}

// Step updates params from their gradients with learning rate lr. Frozen
// parameters (skip returns true) keep their values and moments.
func (o *AdamW) Step(params []*models.Param, lr float64, skip func(*models.Param) bool) {
	o.step++
	bc1 := 1 - math.Pow(o.Beta1, float64(o.step))
	bc2 := math.Sqrt(1 - math.Pow(o.Beta2, float64(o.step)))
	s := backend.AdamWStep{Beta1: float32(o.Beta1), Beta2: float32(o.Beta2),
		Eps: float32(o.Eps), StepSize: float32(lr / bc1), InvBC2: float32(1 / bc2)}
	for _, p := range params {
		if skip != nil && skip(p) {
			continue
		}
		m, ok := o.m[p]
		if !ok {
			m, o.v[p] = o.be.Alloc(len(p.Value)), o.be.Alloc(len(p.Value))
			o.m[p] = m
		}
		s.Decay = 1
		if !p.NoDecay && o.WeightDecay != 0 {
			s.Decay = float32(1 - lr*o.WeightDecay)
		}
		o.be.AdamW(p.Value, p.Grad, m, o.v[p], s)
	}
}

// ClipGradNorm scales all gradients so that their global L2 norm is at most
// maxNorm, as torch.nn.utils.clip_grad_norm_ does (coefficient
// maxNorm/(norm + 1e-6), applied only when below 1), on backend be. It
// returns the norm before clipping.
func ClipGradNorm(be backend.Backend, params []*models.Param, maxNorm float64) float64 {
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

// ZeroGrad clears every gradient, on backend be.
func ZeroGrad(be backend.Backend, params []*models.Param) {
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
