package models

import (
	"fmt"
	"github.com/beluga-nlp/beluga/models/backend"
	"math"
	"strings"

	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// LoadReport says how a checkpoint's tensors met the model's parameters, as
// HuggingFace reports it when loading a checkpoint into another head.
type LoadReport struct {
	Ignored     []string // checkpoint tensors the model has no use for
	Initialised []string // model parameters the checkpoint lacks, initialised afresh
	// Checked are the checkpoint's buffers (position_ids, token_type_ids)
	// that beluga computes itself, checked equal to what it computes
	// (Family.CheckBuffers).
	Checked []string
}

// core is what a family's classifier and span model share: the config, the
// parameters by name, the dropout settings and stream, the frozen flag and
// the buffers' pool.
type core struct {
	Config checkpoint.Config
	family *Family
	enc    Encoder
	params []*Param
	byName map[string]*Param
	// HiddenDropout and AttentionDropout are the training-time dropout rates
	// (from the config unless set otherwise).
	HiddenDropout, AttentionDropout float64
	frozen                          bool
	dropout                         *initStream
	pool                            bufPool // the passes' buffers
	computeCtx
}

// paramGroup is a run of parameters loaded and drawn together.
type paramGroup struct {
	specs   []ParamSpec
	encoder bool        // frozen by linear probing
	init    *initStream // draws those the checkpoint lacks
}

func newCore(cfg *checkpoint.Config, seed uint64) (*core, error) {
	f, err := LookupFamily(cfg.ModelType)
	if err != nil {
		return nil, err
	}
	enc, err := f.encoder(cfg)
	if err != nil {
		return nil, err
	}
	c := &core{Config: *cfg, family: f, enc: enc, byName: map[string]*Param{},
		HiddenDropout: cfg.HiddenDropoutProb, AttentionDropout: cfg.AttentionProbsDropoutProb,
		dropout: newInitStream(seed ^ 0x5eed), computeCtx: newCompute()}
	c.pool.ctx = &c.computeCtx
	return c, nil
}

// load allocates the groups' parameters in order, copying each from
// weights when it is there (its shape checked) and drawing it otherwise;
// used collects the tensors taken.
func (c *core) load(groups []paramGroup, weights checkpoint.Tensors, rep *LoadReport, used map[string]bool) error {
	params, need := paramBytes(groups)
	cfg := &c.Config
	if err := checkFits(fmt.Sprintf("the %s model's %.3g parameters (hidden_size %d, num_hidden_layers %d, vocab_size %d, intermediate_size %d)",
		c.family.ModelType, params, cfg.HiddenSize, cfg.NumHiddenLayers, cfg.VocabSize, cfg.IntermediateSize), need); err != nil {
		return err
	}
	for _, g := range groups {
		for _, s := range g.specs {
			p := &Param{Name: s.Name, Shape: s.Shape, Encoder: g.encoder,
				NoDecay: s.Norm || strings.HasSuffix(s.Name, ".bias")}
			n := checkpoint.NumElements(s.Shape)
			if t, ok := weights[s.Name]; ok {
				if !sameShape(t.Shape, s.Shape) {
					return fmt.Errorf("checkpoint tensor %s has shape %v, the config needs %v", s.Name, t.Shape, s.Shape)
				}
				p.Value = c.be.Alloc(n)
				copy(p.Value, t.Data)
				used[s.Name] = true
			} else {
				p.Value = c.be.Alloc(n)
				std := c.Config.InitializerRange
				if s.Std > 0 {
					std = s.Std
				}
				initParam(p, s.Norm, std, g.init)
				rep.Initialised = append(rep.Initialised, s.Name)
			}
			p.Grad = c.be.Alloc(n)
			c.params = append(c.params, p)
			c.byName[s.Name] = p
		}
	}
	for _, name := range weights.Names() {
		if !used[name] {
			rep.Ignored = append(rep.Ignored, name)
		}
	}
	return nil
}

// bind gives the parameters to the parts that declared them.
func (c *core) bind(parts ...interface{ Bind(func(string) *Param) }) {
	for _, p := range parts {
		p.Bind(func(name string) *Param { return c.byName[name] })
	}
}

// newRun starts a pass.
func (c *core) newRun(train bool) *Run {
	r := &Run{Train: train, m: c}
	if train {
		r.HiddenRate, r.AttentionRate = c.HiddenDropout, c.AttentionDropout
	}
	return r
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Params lists the parameters in HuggingFace's order.
func (c *core) Params() []*Param { return c.params }

// Param returns the parameter called name, or nil.
func (c *core) Param(name string) *Param { return c.byName[name] }

// Family is the model's family.
func (c *core) Family() *Family { return c.family }

// Weights returns the parameters as checkpoint tensors (sharing memory).
func (c *core) Weights() checkpoint.Tensors {
	ts := checkpoint.Tensors{}
	for _, p := range c.params {
		ts[p.Name] = &checkpoint.Tensor{Shape: p.Shape, Data: p.Value}
	}
	return ts
}

// SetFrozenEncoder implements Classifier: a frozen encoder (linear probing)
// gets no gradients, and Backward stops at the head.
func (c *core) SetFrozenEncoder(frozen bool) { c.frozen = frozen }

// SeedDropout restarts the dropout stream.
func (c *core) SeedDropout(seed uint64) { c.dropout = newInitStream(seed ^ 0x5eed) }

// SetDropout sets the training-time dropout rates of hidden states and
// attention probabilities.
func (c *core) SetDropout(hidden, attention float64) {
	c.HiddenDropout, c.AttentionDropout = hidden, attention
}

// Run is one forward pass's dropout and buffers, lent by the model to its
// encoder and heads. Buffers from Alloc and Keep belong to the pass and go
// back to the model's pool when the pass is released.
type Run struct {
	// Train is set for a training pass: dropout is active and the pass can
	// be back-propagated.
	Train bool
	// HiddenRate and AttentionRate are the dropout rates in force (zero in
	// evaluation).
	HiddenRate, AttentionRate float64
	m                         *core
	bufs                      [][]float32
	alloc                     func(n int) []float32 // replaces the pool's buffers (evaluation's scratch)
}

// Alloc returns a buffer of n floats (arbitrary contents) owned by the pass.
func (r *Run) Alloc(n int) []float32 {
	if r.alloc != nil {
		return r.alloc(n)
	}
	b := r.m.pool.get(n)
	r.bufs = append(r.bufs, b)
	return b
}

// layerScratch returns the Run for one layer of an evaluation pass, which
// keeps no activations: done(out) gives every buffer the layer allocated
// back to the pool as soon as the layer has returned out, its output, which
// the caller keeps.
func (r *Run) layerScratch() (layer *Run, done func(out []float32)) {
	pool := &r.m.pool
	var bufs [][]float32
	layer = &Run{m: r.m, alloc: func(n int) []float32 {
		b := pool.get(n)
		bufs = append(bufs, b)
		return b
	}}
	return layer, func(out []float32) {
		for i, b := range bufs {
			if sameBuffer(b, out) {
				bufs[i] = nil
			}
		}
		pool.put(bufs...)
	}
}

// stack runs count layers on x in order, layer(l, x, r) returning layer
// l's output with its buffers from r. A training pass keeps every layer's
// buffers for the backward pass; evaluation keeps none: a layer's buffers go
// back to the pool as soon as the next layer has its input (layerScratch),
// and the last output belongs to the pass.
func (r *Run) stack(x []float32, count int, layer func(l int, x []float32, r *Run) []float32) []float32 {
	pool := &r.m.pool
	for l := 0; l < count; l++ {
		if r.Train {
			x = layer(l, x, r)
			continue
		}
		lr, done := r.layerScratch()
		out := layer(l, x, lr)
		done(out)
		if l > 0 {
			pool.put(x)
		}
		x = out
	}
	if !r.Train && count > 0 {
		r.bufs = append(r.bufs, x)
	}
	return x
}

// Zeroed returns a zeroed buffer of n floats from the pool that the caller
// owns (an EncoderPass.Backward takes it over).
func (r *Run) Zeroed(n int) []float32 { return r.m.pool.zeroed(n) }

// Keep draws n dropout multipliers into a buffer of the pass: 0 with
// probability rate, else 1/(1−rate); nil when rate is 0 or the pass does
// not train.
func (r *Run) Keep(n int, rate float64) []float32 {
	if !r.Train {
		return nil
	}
	return r.m.keepMask(r.Alloc, n, rate)
}

// release returns the pass's buffers to the pool.
func (r *Run) release() {
	if r != nil && r.m != nil {
		r.m.pool.put(r.bufs...)
		r.bufs = nil
	}
}

// keepMask draws dropout multipliers into a buffer from alloc: 0 with
// probability rate, else 1/(1−rate); nil when rate is 0. Element i takes the
// stream's i-th draw, as a serial loop would; the backend spreads the draws
// over the cores, the stream jumping ahead (Backend.DropoutMask).
func (c *core) keepMask(alloc func(int) []float32, n int, rate float64) []float32 {
	if rate <= 0 {
		return nil
	}
	k := alloc(n)
	// A draw u = float() = (x>>11)/2⁵³ is exact, so u ≥ rate is the
	// integer test x>>11 ≥ ⌈rate·2⁵³⌉.
	least := uint64(math.Ceil(rate * (1 << 53)))
	c.be.DropoutMask(k, c.dropout.state, least, float32(1/(1-rate)))
	c.dropout.skip(n)
	return k
}

// applyKeep multiplies x by the dropout multipliers keep, on all cores.
func applyKeep(be backend.Backend, x, keep []float32) { keptCopy(be, x, x, keep) }

// keptCopy sets dst = src·keep (a copy with dropout applied), on all cores.
func keptCopy(be backend.Backend, dst, src, keep []float32) {
	be.Mul(dst[:len(keep)], src[:len(keep)], keep)
}

// keptAdd sets y = y·keep + x (dropout, then a residual connection; keep
// nil for no dropout) in one pass on all cores, the bits of applyKeep then
// addTo.
func keptAdd(be backend.Backend, y, keep, x []float32) {
	if keep == nil {
		addTo(y, x)
		return
	}
	be.MulAdd(y, keep, x)
}

// addTo adds x into y element-wise (a residual connection), on all cores.
func addTo[T Float](y, x []T) {
	vec32.ParallelFor(len(y), 4*elementGrain, func(lo, hi int) {
		y, x := y[lo:hi], x[lo:hi]
		for i := range y {
			y[i] += x[i]
		}
	})
}
