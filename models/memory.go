package models

import (
	"fmt"

	"github.com/beluga-nlp/beluga/internal/memlimit"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// Sizes are checked before anything is allocated: a config.json whose
// parameters (hidden_size 1e9, num_hidden_layers 1e6) or whose activations
// for a batch would not fit in memory is refused with the estimate and the
// limit, instead of dying in an out-of-memory crash. The estimates count
// float32s: a parameter's value and gradient (8 bytes); a pass's buffers,
// per layer, hidden-wide and FFN-wide states of every token and two
// attention matrices per head (every layer's kept when training, one
// layer's at a time in evaluation). They are estimates, meant to catch
// sizes off by orders of magnitude, not to budget memory to the byte.

// checkFits refuses what needs more bytes than the limit (memlimit, the
// check checkpoint reading passes too).
func checkFits(what string, need float64) error { return memlimit.Check(what, need) }

// paramBytes is the memory of the groups' parameters: value and gradient,
// float32 each. Shapes too large to multiply give +Inf.
func paramBytes(groups []paramGroup) (params, bytes float64) {
	tensors := 0.0
	for _, g := range groups {
		for _, s := range g.specs {
			n := 1.0
			for _, d := range s.Shape {
				n *= float64(d)
			}
			params += n
			tensors++
		}
	}
	return params, 8*params + tensorOverhead*tensors
}

// configBytes is the memory of a config's parameters (its estimate,
// checkpoint.Config.ParamEstimate), value and gradient, so that an absurd
// config is refused before its parameters are even listed.
func configBytes(c *checkpoint.Config) (params, bytes float64) {
	params = c.ParamEstimate()
	return params, 8*params + tensorOverhead*16*(float64(c.NumHiddenLayers)+1)
}

// tensorOverhead is what a parameter costs beside its values: its name,
// shape and bookkeeping (a layer has some 16 tensors), which dominates a
// config of very many very narrow layers.
const tensorOverhead = 512

// passBytes estimates the buffers of one forward pass (and its backward,
// when training) over a batch of rows×seq tokens.
func (c *core) passBytes(rows, seq int, train bool) float64 {
	cfg := &c.Config
	b, s := float64(rows), float64(seq)
	h, f, a := float64(cfg.HiddenSize), float64(cfg.IntermediateSize), float64(cfg.NumAttentionHeads)
	layer := 8*b*s*h + 2*b*s*f + 2*b*a*s*s
	kept := 1.0
	if train {
		// Every layer's activations are kept for the backward pass, which
		// needs as much again.
		kept = 2 * float64(cfg.NumHiddenLayers)
	}
	return 4 * (2*b*s*h + kept*layer)
}

// checkPass refuses a batch whose pass would not fit in memory.
func (c *core) checkPass(b Batch, train bool) error {
	return checkFits(fmt.Sprintf("a pass over a batch of %d×%d tokens (hidden_size %d, intermediate_size %d, %d heads, %d layers)",
		b.Size, b.SeqLen, c.Config.HiddenSize, c.Config.IntermediateSize, c.Config.NumAttentionHeads, c.Config.NumHiddenLayers),
		c.passBytes(b.Size, b.SeqLen, train))
}
