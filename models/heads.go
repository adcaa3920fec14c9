package models

import (
	"github.com/beluga-nlp/beluga/models/backend"
	"math"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// This file holds the poolers and heads the families share, each as
// HuggingFace writes it.

// dropoutRate is the rate a head's dropout uses in a run.
type dropoutRate func(r *Run) float64

// classifierDropout is HuggingFace's rule for BERT-like heads: the
// config's classifier_dropout when set, else the hidden dropout rate in
// force (which BeLUGA's dropout method sets).
func classifierDropout(cfg *checkpoint.Config) dropoutRate {
	if cfg.ClassifierDropout != nil {
		return fixedDropout(*cfg.ClassifierDropout)
	}
	return func(r *Run) float64 { return r.HiddenRate }
}

// fixedDropout is a rate of the config's that BeLUGA's dropout settings do
// not change (DistilBERT's seq_classif_dropout and qa_dropout).
func fixedDropout(rate float64) dropoutRate {
	return func(r *Run) float64 {
		if !r.Train {
			return 0
		}
		return rate
	}
}

// linear is a named nn.Linear(in, out).
type linear struct {
	name    string
	in, out int
	w, b    *Param
}

func newLinear(name string, in, out int) *linear { return &linear{name: name, in: in, out: out} }

func (l *linear) specs() []ParamSpec { return linearSpecs(l.name, l.in, l.out) }

func (l *linear) bind(param func(string) *Param) {
	l.w, l.b = param(l.name+".weight"), param(l.name+".bias")
}

func (l *linear) forward(be backend.Backend, y, x []float32, rows int) {
	linearForward(be, y, x, l.w.Value, l.b.Value, rows, l.in, l.out)
}

// backward adds the weight and bias gradients and sets dx (when not nil).
func (l *linear) backward(be backend.Backend, dx, dy, x []float32, rows int) {
	linearBackward(be, dx, l.w.Grad, l.b.Grad, dy, x, l.w.Value, rows, l.in, l.out)
}

// dropoutCopy returns x after dropout (a copy owned by the run when a
// dropout mask is drawn, x itself otherwise) and the mask.
func dropoutCopy(r *Run, x []float32, rate float64) (y, keep []float32) {
	keep = r.Keep(len(x), rate)
	if keep == nil {
		return x, nil
	}
	y = r.Alloc(len(x))
	copy(y, x)
	applyKeep(r.m.be, y, keep)
	return y, keep
}

// bertPooler is BertPooler: dense and tanh on the first token's final
// hidden state.
type bertPooler struct {
	h     int
	dense *linear
}

func newBERTPooler(cfg *checkpoint.Config, hidden int) Pooler {
	return &bertPooler{h: hidden, dense: newLinear("bert.pooler.dense", hidden, hidden)}
}

func (p *bertPooler) Specs() []ParamSpec             { return p.dense.specs() }
func (p *bertPooler) Bind(param func(string) *Param) { p.dense.bind(param) }
func (p *bertPooler) Width() int                     { return p.h }
func (p *bertPooler) Forward(r *Run, hidden []float32, b Batch) PoolPass {
	h := p.h
	pp := &bertPoolPass{p: p, b: b, cls: firstTokens(r, hidden, b, h)}
	pp.pooled = r.Alloc(b.Size * h)
	p.dense.forward(r.m.be, pp.pooled, pp.cls, b.Size)
	for i, v := range pp.pooled {
		pp.pooled[i] = float32(math.Tanh(float64(v)))
	}
	return pp
}

type bertPoolPass struct {
	p           *bertPooler
	b           Batch
	cls, pooled []float32
}

func (pp *bertPoolPass) Features() []float32 { return pp.pooled }

func (pp *bertPoolPass) Backward(r *Run, dFeatures, dHidden []float32) {
	for i, v := range pp.pooled {
		dFeatures[i] *= 1 - v*v
	}
	pool := &r.m.pool
	dCLS := pool.get(len(pp.cls))
	defer pool.put(dCLS)
	pp.p.dense.backward(r.m.be, dCLS, dFeatures, pp.cls, pp.b.Size)
	scatterFirstTokens(dHidden, dCLS, pp.b, pp.p.h)
}

// firstTokens copies every row's first-token state ([CLS], <s>) out of
// hidden (Size×SeqLen×h) into a buffer of the run.
func firstTokens(r *Run, hidden []float32, b Batch, h int) []float32 {
	out := r.Alloc(b.Size * h)
	for i := 0; i < b.Size; i++ {
		copy(out[i*h:(i+1)*h], hidden[i*b.SeqLen*h:])
	}
	return out
}

// scatterFirstTokens adds d (Size×h) into the first token of each row of
// dHidden.
func scatterFirstTokens(dHidden, d []float32, b Batch, h int) {
	for i := 0; i < b.Size; i++ {
		dst := dHidden[i*b.SeqLen*h : i*b.SeqLen*h+h]
		for k, v := range d[i*h : (i+1)*h] {
			dst[k] += v
		}
	}
}

// firstToken is the pooling of heads that read the first token's state as
// it is (hidden_states[:, 0, :]): RoBERTa's, ELECTRA's, DistilBERT's.
type firstToken struct{ h int }

func newFirstToken(_ *checkpoint.Config, hidden int) Pooler { return firstToken{h: hidden} }

func (f firstToken) Specs() []ParamSpec       { return nil }
func (f firstToken) Bind(func(string) *Param) {}
func (f firstToken) Width() int               { return f.h }
func (f firstToken) Forward(r *Run, hidden []float32, b Batch) PoolPass {
	return firstTokenPass{f: f, b: b, x: firstTokens(r, hidden, b, f.h)}
}

type firstTokenPass struct {
	f firstToken
	b Batch
	x []float32
}

func (p firstTokenPass) Features() []float32 { return p.x }
func (p firstTokenPass) Backward(_ *Run, dFeatures, dHidden []float32) {
	scatterFirstTokens(dHidden, dFeatures, p.b, p.f.h)
}

// linearHead is dropout then a linear layer: BERT's classifier (dropout,
// classifier) and the span heads (qa_outputs, with DistilBERT's qa_dropout
// before it).
type linearHead struct {
	dropout dropoutRate // nil: none
	out     *linear
}

func (h *linearHead) Specs() []ParamSpec             { return h.out.specs() }
func (h *linearHead) Bind(param func(string) *Param) { h.out.bind(param) }
func (h *linearHead) In() int                        { return h.out.in }
func (h *linearHead) Out() int                       { return h.out.out }

func (h *linearHead) Forward(r *Run, x []float32, rows int) HeadPass {
	p := &linearHeadPass{h: h, rows: rows, in: x}
	if h.dropout != nil {
		p.in, p.keep = dropoutCopy(r, x, h.dropout(r))
	}
	p.y = r.Alloc(rows * h.out.out)
	h.out.forward(r.m.be, p.y, p.in, rows)
	return p
}

type linearHeadPass struct {
	h        *linearHead
	rows     int
	in, keep []float32
	y        []float32
}

func (p *linearHeadPass) Out() []float32 { return p.y }

func (p *linearHeadPass) Backward(r *Run, dOut, dx []float32) {
	p.h.out.backward(r.m.be, dx, dOut, p.in, p.rows)
	if dx != nil {
		applyKeep(r.m.be, dx, p.keep)
	}
}

// newQAOutputs is the span head of HuggingFace's …ForQuestionAnswering: a
// linear qa_outputs (hidden → start, end) on every token, after dropout at
// rate when one is given.
func newQAOutputs(rate func(cfg *checkpoint.Config) dropoutRate) func(cfg *checkpoint.Config, hidden int) Head {
	return func(cfg *checkpoint.Config, hidden int) Head {
		h := &linearHead{out: newLinear("qa_outputs", hidden, 2)}
		if rate != nil {
			h.dropout = rate(cfg)
		}
		return h
	}
}

// activation is a head's nonlinearity.
type activation int

const (
	actTanh activation = iota
	actGELU
	actReLU
)

func (a activation) forward(be backend.Backend, y, x []float32) {
	switch a {
	case actTanh:
		for i, v := range x {
			y[i] = float32(math.Tanh(float64(v)))
		}
	case actGELU:
		geluForward(be, y, x)
	case actReLU:
		for i, v := range x {
			y[i] = max(v, 0)
		}
	}
}

// backward sets du = dy·act'(u), given u and y = act(u); du may be dy.
func (a activation) backward(be backend.Backend, du, dy, u, y []float32) {
	switch a {
	case actTanh:
		for i, v := range y {
			du[i] = dy[i] * (1 - v*v)
		}
	case actGELU:
		geluBackward(be, du, dy, u)
	case actReLU:
		for i, v := range u {
			if v <= 0 {
				du[i] = 0
			} else {
				du[i] = dy[i]
			}
		}
	}
}

// denseHead is dropout, dense, activation, dropout, out: RoBERTa's
// RobertaClassificationHead (tanh; classifier.dense, classifier.out_proj),
// ELECTRA's ElectraClassificationHead (GELU) and, with no first dropout,
// DistilBERT's pre_classifier, ReLU, dropout, classifier.
type denseHead struct {
	drop1, drop2 dropoutRate // drop1 nil: none
	dense, out   *linear
	act          activation
}

func (h *denseHead) Specs() []ParamSpec { return append(h.dense.specs(), h.out.specs()...) }
func (h *denseHead) Bind(param func(string) *Param) {
	h.dense.bind(param)
	h.out.bind(param)
}
func (h *denseHead) In() int  { return h.dense.in }
func (h *denseHead) Out() int { return h.out.out }

func (h *denseHead) Forward(r *Run, x []float32, rows int) HeadPass {
	p := &denseHeadPass{h: h, rows: rows, a: x}
	if h.drop1 != nil {
		p.a, p.keep1 = dropoutCopy(r, x, h.drop1(r))
	}
	w := h.dense.out
	p.u, p.g = r.Alloc(rows*w), r.Alloc(rows*w)
	h.dense.forward(r.m.be, p.u, p.a, rows)
	h.act.forward(r.m.be, p.g, p.u)
	p.gd, p.keep2 = dropoutCopy(r, p.g, h.drop2(r))
	p.y = r.Alloc(rows * h.out.out)
	h.out.forward(r.m.be, p.y, p.gd, rows)
	return p
}

type denseHeadPass struct {
	h         *denseHead
	rows      int
	a, keep1  []float32 // input after the first dropout
	u, g      []float32 // dense output and its activation
	gd, keep2 []float32 // activation after the second dropout
	y         []float32
}

func (p *denseHeadPass) Out() []float32 { return p.y }

func (p *denseHeadPass) Backward(r *Run, dOut, dx []float32) {
	pool := &r.m.pool
	dg := pool.get(len(p.g))
	defer pool.put(dg)
	p.h.out.backward(r.m.be, dg, dOut, p.gd, p.rows)
	applyKeep(r.m.be, dg, p.keep2)
	p.h.act.backward(r.m.be, dg, dg, p.u, p.g)
	p.h.dense.backward(r.m.be, dx, dg, p.a, p.rows)
	if dx != nil {
		applyKeep(r.m.be, dx, p.keep1)
	}
}
