package models

import (
	"encoding/json"
	"fmt"
	"github.com/beluga-nlp/beluga/models/backend"
	"math"
	"strings"

	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// This file is the BERT-shaped encoder — embeddings, then post-LayerNorm
// transformer layers of multi-head self-attention with the padding mask and
// a GELU feed-forward block — that bert, electra, roberta, xlm-roberta and
// distilbert share, each spelling its parameters its own way (bertLayout),
// and the bert family itself: HuggingFace's BertForSequenceClassification
// (a tanh pooler on [CLS], dropout, a linear classifier) and
// BertForQuestionAnswering (qa_outputs on every token).

func init() {
	Register(Family{
		ModelType:  "bert",
		Prefix:     "bert",
		Classifier: "BertForSequenceClassification",
		Span:       SpanArchitecture,
		NewEncoder: func(cfg *checkpoint.Config) (Encoder, error) {
			return newBERTEncoder(cfg, bertNames("bert", cfg))
		},
		NewPooler: newBERTPooler,
		NewHead: func(cfg *checkpoint.Config, features, labels int) Head {
			return &linearHead{dropout: classifierDropout(cfg), out: newLinear("classifier", features, labels)}
		},
		NewSpanHead:     newQAOutputs(nil),
		Tokenizer:       TokenizerDefaults{Class: "BertTokenizer"},
		spanDrawsPooler: true,
	})
}

// BERT is the bert family's classifier, HuggingFace's
// BertForSequenceClassification.
type BERT = SequenceClassifier

// NewBERT is NewClassifier for a config whose model_type is bert (or
// empty).
func NewBERT(cfg *checkpoint.Config, labels int, weights checkpoint.Tensors, seed uint64) (*BERT, LoadReport, error) {
	if cfg.ModelType != "" && cfg.ModelType != "bert" {
		return nil, LoadReport{}, fmt.Errorf("model_type %q: not a bert config", cfg.ModelType)
	}
	return NewClassifier(cfg, labels, weights, seed)
}

// bertLayout spells a BERT-shaped encoder's parameter names and its
// variations on BERT's graph.
type bertLayout struct {
	// Embedding tensors (full names); typ is empty without token types.
	word, pos, typ, ln string
	// embeddings is the embeddings module's path ("bert.embeddings."),
	// under which HuggingFace keeps the position_ids buffer (and
	// token_type_ids with token types).
	embeddings string
	// project is ELECTRA's embeddings_project (embedding size → hidden),
	// empty when there is none.
	project string
	// layer is the layer prefix, a format with the layer's number.
	layer string
	// Layer parts, under layer: attention query, key, value and output,
	// the LayerNorm after attention, the feed-forward in and out, the
	// LayerNorm after it.
	q, k, v, o, ln1, ffnIn, ffnOut, ln2 string
	// attnOutDropout: dropout on the attention output before the residual
	// (all but DistilBERT).
	attnOutDropout bool
	// ignoreTypes: the token type of every token is 0 whatever the batch
	// says (RoBERTa's tokenizers give none).
	ignoreTypes bool
	// positionOffset: position ids count non-padding tokens from
	// padding_idx+1, padding gets padding_idx (RoBERTa's
	// create_position_ids_from_input_ids); otherwise they are 0, 1, 2, …
	positionOffset bool
}

// bertNames is BERT's (and ELECTRA's, RoBERTa's) spelling under prefix.
func bertNames(prefix string, _ *checkpoint.Config) *bertLayout {
	p := prefix + ".embeddings."
	return &bertLayout{
		embeddings: p,
		word:       p + "word_embeddings", pos: p + "position_embeddings", typ: p + "token_type_embeddings", ln: p + "LayerNorm",
		layer: prefix + ".encoder.layer.%d.",
		q:     "attention.self.query", k: "attention.self.key", v: "attention.self.value",
		o: "attention.output.dense", ln1: "attention.output.LayerNorm",
		ffnIn: "intermediate.dense", ffnOut: "output.dense", ln2: "output.LayerNorm",
		attnOutDropout: true,
	}
}

// bertLayer is one layer's parameters.
type bertLayer struct {
	qW, qB, kW, kB, vW, vB, oW, oB, ln1W, ln1B, iW, iB, fW, fB, ln2W, ln2B *Param
}

// bertEncoder is the BERT-shaped encoder.
type bertEncoder struct {
	cfg                    checkpoint.Config
	lay                    *bertLayout
	e                      int // embedding width (ELECTRA's embedding_size; else hidden)
	word, pos, typ         *Param
	lnW, lnB, projW, projB *Param
	layers                 []bertLayer
}

func newBERTEncoder(cfg *checkpoint.Config, lay *bertLayout) (*bertEncoder, error) {
	if cfg.HiddenAct != "gelu" {
		return nil, fmt.Errorf("field \"hidden_act\": %q (only the exact erf gelu is supported)", cfg.HiddenAct)
	}
	if raw, ok := cfg.Extra["position_embedding_type"]; ok {
		var kind *string
		if err := json.Unmarshal(raw, &kind); err != nil || (kind != nil && *kind != "absolute") {
			return nil, fmt.Errorf("field \"position_embedding_type\": %s (only absolute position embeddings are supported)", raw)
		}
	}
	if lay.typ != "" && cfg.TypeVocabSize <= 0 {
		return nil, fmt.Errorf("field \"type_vocab_size\": %d, want a positive size", cfg.TypeVocabSize)
	}
	e := cfg.HiddenSize
	if lay.project != "" && cfg.EmbeddingSize > 0 {
		e = cfg.EmbeddingSize
	}
	if lay.positionOffset && cfg.PadTokenID+1 >= cfg.MaxPositionEmbeddings {
		return nil, fmt.Errorf("field \"pad_token_id\": %d leaves no positions below max_position_embeddings %d", cfg.PadTokenID, cfg.MaxPositionEmbeddings)
	}
	return &bertEncoder{cfg: *cfg, lay: lay, e: e}, nil
}

func (m *bertEncoder) HiddenSize() int { return m.cfg.HiddenSize }

// Buffers are HuggingFace's position_ids and, with token types,
// token_type_ids.
func (m *bertEncoder) Buffers() []BufferSpec {
	out := []BufferSpec{positionIDs(m.lay.embeddings, &m.cfg)}
	if m.lay.typ != "" {
		out = append(out, tokenTypeIDs(m.lay.embeddings, &m.cfg))
	}
	return out
}

func (m *bertEncoder) hasProjection() bool { return m.lay.project != "" && m.e != m.cfg.HiddenSize }

// Specs lists the encoder's parameters in HuggingFace's order.
func (m *bertEncoder) Specs() []ParamSpec {
	c, lay := &m.cfg, m.lay
	h, f, e := c.HiddenSize, c.IntermediateSize, m.e
	out := []ParamSpec{
		{Name: lay.word + ".weight", Shape: []int{c.VocabSize, e}},
		{Name: lay.pos + ".weight", Shape: []int{c.MaxPositionEmbeddings, e}},
	}
	if lay.typ != "" {
		out = append(out, ParamSpec{Name: lay.typ + ".weight", Shape: []int{c.TypeVocabSize, e}})
	}
	out = append(out, ParamSpec{Name: lay.ln + ".weight", Shape: []int{e}, Norm: true},
		ParamSpec{Name: lay.ln + ".bias", Shape: []int{e}, Norm: true})
	if m.hasProjection() {
		out = append(out, linearSpecs(lay.project, e, h)...)
	}
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf(lay.layer, l)
		out = append(out, linearSpecs(p+lay.q, h, h)...)
		out = append(out, linearSpecs(p+lay.k, h, h)...)
		out = append(out, linearSpecs(p+lay.v, h, h)...)
		out = append(out, linearSpecs(p+lay.o, h, h)...)
		out = append(out, normSpecs(p+lay.ln1, h)...)
		out = append(out, linearSpecs(p+lay.ffnIn, h, f)...)
		out = append(out, linearSpecs(p+lay.ffnOut, f, h)...)
		out = append(out, normSpecs(p+lay.ln2, h)...)
	}
	return out
}

// linearSpecs are a Linear(in, out)'s weight [out, in] and bias [out].
func linearSpecs(name string, in, out int) []ParamSpec {
	return []ParamSpec{{Name: name + ".weight", Shape: []int{out, in}}, {Name: name + ".bias", Shape: []int{out}}}
}

// normSpecs are a LayerNorm(h)'s weight and bias.
func normSpecs(name string, h int) []ParamSpec {
	return []ParamSpec{{Name: name + ".weight", Shape: []int{h}, Norm: true}, {Name: name + ".bias", Shape: []int{h}, Norm: true}}
}

func (m *bertEncoder) Bind(param func(string) *Param) {
	lay := m.lay
	m.word, m.pos = param(lay.word+".weight"), param(lay.pos+".weight")
	if lay.typ != "" {
		m.typ = param(lay.typ + ".weight")
	}
	m.lnW, m.lnB = param(lay.ln+".weight"), param(lay.ln+".bias")
	if m.hasProjection() {
		m.projW, m.projB = param(lay.project+".weight"), param(lay.project+".bias")
	}
	m.layers = make([]bertLayer, m.cfg.NumHiddenLayers)
	for l := range m.layers {
		p := fmt.Sprintf(lay.layer, l)
		w := func(s string) *Param { return param(p + s + ".weight") }
		b := func(s string) *Param { return param(p + s + ".bias") }
		m.layers[l] = bertLayer{
			qW: w(lay.q), qB: b(lay.q), kW: w(lay.k), kB: b(lay.k), vW: w(lay.v), vB: b(lay.v),
			oW: w(lay.o), oB: b(lay.o), ln1W: w(lay.ln1), ln1B: b(lay.ln1),
			iW: w(lay.ffnIn), iB: b(lay.ffnIn), fW: w(lay.ffnOut), fB: b(lay.ffnOut), ln2W: w(lay.ln2), ln2B: b(lay.ln2),
		}
	}
}

// layerActs holds one transformer layer's activations for the backward pass.
type layerActs struct {
	x                  []float32 // layer input
	q, k, v, ctx       []float32
	probs, attnKeep    []float32
	hidKeep1, hidKeep2 []float32 // dropout multipliers after attention and FFN
	xhat1, rstd1, y1   []float32 // first LayerNorm
	u, g               []float32 // FFN pre-activation and GELU output
	xhat2, rstd2       []float32 // second LayerNorm
}

// bertPass is one forward pass of the encoder and what its backward needs.
type bertPass struct {
	m                *bertEncoder
	b                Batch
	train            bool
	types, positions []int // the token type and position id of every token
	embKeep          []float32
	embXhat, embRstd []float32
	embOut           []float32 // the embeddings after dropout (projection's input)
	layers           []layerActs
	out              []float32 // final hidden states
}

func (p *bertPass) Hidden() []float32 { return p.out }

// positionIDs are the position ids of b's tokens: j in each row, or
// RoBERTa's count of the row's non-padding tokens from padding_idx+1
// (padding_idx for padding: a token whose mask is 0 or whose id is the
// pad token's).
func (m *bertEncoder) positionIDs(b Batch) ([]int, error) {
	L := b.SeqLen
	pos := make([]int, b.Size*L)
	if !m.lay.positionOffset {
		if L > m.cfg.MaxPositionEmbeddings {
			return nil, fmt.Errorf("sequence of %d tokens exceeds max_position_embeddings %d", L, m.cfg.MaxPositionEmbeddings)
		}
		for r := range pos {
			pos[r] = r % L
		}
		return pos, nil
	}
	pad := m.cfg.PadTokenID
	for i := 0; i < b.Size; i++ {
		count := 0
		for j := 0; j < L; j++ {
			r := i*L + j
			if b.Mask[r] == 0 || b.IDs[r] == pad {
				pos[r] = pad
				continue
			}
			count++
			pos[r] = pad + count
			if pos[r] >= m.cfg.MaxPositionEmbeddings {
				return nil, fmt.Errorf("sequence of %d tokens exceeds max_position_embeddings %d (positions start at padding_idx+1 = %d)", count, m.cfg.MaxPositionEmbeddings, pad+1)
			}
		}
	}
	return pos, nil
}

func (m *bertEncoder) Forward(r *Run, b Batch) (EncoderPass, error) {
	c, be := &m.cfg, r.m.be
	h, e, L := c.HiddenSize, m.e, b.SeqLen
	if len(b.IDs) != b.Size*L || len(b.Types) != b.Size*L || len(b.Mask) != b.Size*L {
		return nil, fmt.Errorf("batch of %d×%d has %d ids, %d types, %d mask values", b.Size, L, len(b.IDs), len(b.Types), len(b.Mask))
	}
	positions, err := m.positionIDs(b)
	if err != nil {
		return nil, err
	}
	n := b.Size * L
	p := &bertPass{m: m, b: b, train: r.Train, positions: positions, types: b.Types}
	if m.typ == nil || m.lay.ignoreTypes {
		p.types = nil
	}
	x := r.Alloc(n * e)
	word, pos := m.word.Value, m.pos.Value
	var typ []float32
	if m.typ != nil {
		typ = m.typ.Value
	}
	for row := 0; row < n; row++ {
		if id := b.IDs[row]; id < 0 || id >= c.VocabSize {
			return nil, fmt.Errorf("token id %d outside the vocabulary of %d", id, c.VocabSize)
		}
		if p.types != nil {
			if t := p.types[row]; t < 0 || t >= c.TypeVocabSize {
				return nil, fmt.Errorf("token type %d outside the %d types", t, c.TypeVocabSize)
			}
		}
	}
	vec32.ParallelFor(n, max(1, elementGrain/e), func(lo, hi int) {
		for row := lo; row < hi; row++ {
			id, j := b.IDs[row], positions[row]
			dst := x[row*e : (row+1)*e]
			switch {
			case p.types != nil:
				t := p.types[row]
				for k := range dst {
					dst[k] = word[id*e+k] + pos[j*e+k] + typ[t*e+k]
				}
			case typ != nil: // token types not in use: every token is of type 0
				for k := range dst {
					dst[k] = word[id*e+k] + pos[j*e+k] + typ[k]
				}
			default:
				for k := range dst {
					dst[k] = word[id*e+k] + pos[j*e+k]
				}
			}
		}
	})
	p.embXhat, p.embRstd = r.Alloc(n*e), r.Alloc(n)
	layerNormForward(be, x, p.embXhat, p.embRstd, x, m.lnW.Value, m.lnB.Value, e, c.LayerNormEps)
	p.embKeep = r.Keep(n*e, r.HiddenRate)
	applyKeep(be, x, p.embKeep)
	if m.projW != nil {
		p.embOut = x
		x = r.Alloc(n * h)
		linearForward(be, x, p.embOut, m.projW.Value, m.projB.Value, n, e, h)
	}
	x = r.stack(x, len(m.layers), func(l int, x []float32, lr *Run) []float32 {
		var acts layerActs
		out := m.layerForward(l, x, b, lr.HiddenRate, lr.AttentionRate, &acts, lr)
		if lr.Train {
			p.layers = append(p.layers, acts)
		}
		return out
	})
	p.out = x
	return p, nil
}

// layerForward runs layer l on x, keeping its activations in a; its buffers
// come from r.
func (m *bertEncoder) layerForward(l int, x []float32, b Batch, hidRate, attnRate float64, a *layerActs, r *Run) []float32 {
	c, be := &m.cfg, r.m.be
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	n, L := b.Size*b.SeqLen, b.SeqLen
	P := &m.layers[l]
	alloc := r.Alloc
	a.x = x
	a.q, a.k, a.v = alloc(n*h), alloc(n*h), alloc(n*h)
	linearForward(be, a.q, x, P.qW.Value, P.qB.Value, n, h, h)
	linearForward(be, a.k, x, P.kW.Value, P.kB.Value, n, h, h)
	linearForward(be, a.v, x, P.vW.Value, P.vB.Value, n, h, h)
	a.probs = alloc(b.Size * heads * L * L)
	a.attnKeep = r.m.keepMask(alloc, len(a.probs), attnRate)
	a.ctx = alloc(n * h)
	attentionForward(be, a.ctx, a.probs, a.q, a.k, a.v, b.Mask, a.attnKeep, b.Size, L, heads, h/heads)
	res := alloc(n * h)
	linearForward(be, res, a.ctx, P.oW.Value, P.oB.Value, n, h, h)
	if m.lay.attnOutDropout {
		a.hidKeep1 = r.m.keepMask(alloc, n*h, hidRate)
	}
	keptAdd(be, res, a.hidKeep1, x)
	a.y1, a.xhat1, a.rstd1 = alloc(n*h), alloc(n*h), alloc(n)
	layerNormForward(be, a.y1, a.xhat1, a.rstd1, res, P.ln1W.Value, P.ln1B.Value, h, c.LayerNormEps)
	a.u, a.g = alloc(n*f), alloc(n*f)
	linearForward(be, a.u, a.y1, P.iW.Value, P.iB.Value, n, h, f)
	geluForward(be, a.g, a.u)
	out := alloc(n * h)
	linearForward(be, out, a.g, P.fW.Value, P.fB.Value, n, f, h)
	a.hidKeep2 = r.m.keepMask(alloc, n*h, hidRate)
	keptAdd(be, out, a.hidKeep2, a.y1)
	a.xhat2, a.rstd2 = alloc(n*h), alloc(n)
	layerNormForward(be, out, a.xhat2, a.rstd2, out, P.ln2W.Value, P.ln2B.Value, h, c.LayerNormEps)
	return out
}

// Backward back-propagates dx, the gradient of the last layer's output (a
// buffer of the pool, which it takes over), through the layers and the
// embeddings into the parameters' gradients.
func (p *bertPass) Backward(r *Run, dx []float32) {
	m, b := p.m, p.b
	pool, be := &r.m.pool, r.m.be
	c := &m.cfg
	h, e, n := c.HiddenSize, m.e, b.Size*b.SeqLen
	for l := len(m.layers) - 1; l >= 0; l-- {
		dIn := m.layerBackward(l, dx, b, &p.layers[l], pool, be)
		pool.put(dx)
		dx = dIn
	}
	if m.projW != nil {
		de := pool.get(n * e)
		linearBackward(be, de, m.projW.Grad, m.projB.Grad, dx, p.embOut, m.projW.Value, n, e, h)
		pool.put(dx)
		dx = de
	}
	defer pool.put(dx)
	applyKeep(be, dx, p.embKeep)
	dsum := pool.get(n * e)
	defer pool.put(dsum)
	layerNormBackward(be, dsum, m.lnW.Grad, m.lnB.Grad, dx, p.embXhat, p.embRstd, m.lnW.Value, e)
	wg, pg := m.word.Grad, m.pos.Grad
	var tg []float32
	if m.typ != nil {
		tg = m.typ.Grad
	}
	// Rows may share a token: the cores take ranges of columns, each
	// element summed over the rows in order.
	vec32.ParallelFor(e, max(16, elementGrain/max(1, n)), func(lo, hi int) {
		for row := 0; row < n; row++ {
			id, j := b.IDs[row], p.positions[row]
			t := 0
			if p.types != nil {
				t = p.types[row]
			}
			d := dsum[row*e+lo : row*e+hi]
			w, ps := wg[id*e+lo:id*e+hi], pg[j*e+lo:j*e+hi]
			for k, v := range d {
				w[k] += v
				ps[k] += v
			}
			if tg != nil {
				ts := tg[t*e+lo : t*e+hi]
				for k, v := range d {
					ts[k] += v
				}
			}
		}
	})
}

// layerBackward back-propagates dout through layer l and returns the
// gradient of its input, in a buffer from the pool.
func (m *bertEncoder) layerBackward(l int, dout []float32, b Batch, a *layerActs, pool *bufPool, be backend.Backend) []float32 {
	c := &m.cfg
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	n, L := b.Size*b.SeqLen, b.SeqLen
	P := &m.layers[l]
	dx, dctx := P.outputBackward(dout, a, n, h, f, pool, be)
	defer pool.put(dctx)
	dq, dk, dv := pool.get(n*h), pool.get(n*h), pool.get(n*h)
	defer pool.put(dq, dk, dv)
	attentionBackward(be, dq, dk, dv, dctx, a.probs, a.attnKeep, a.q, a.k, a.v, b.Size, L, heads, h/heads)
	for _, s := range []struct {
		w, b *Param
		d    []float32
	}{{P.qW, P.qB, dq}, {P.kW, P.kB, dk}, {P.vW, P.vB, dv}} {
		linearBackwardAdd(be, dx, s.w.Grad, s.b.Grad, s.d, a.x, s.w.Value, n, h, h)
	}
	return dx
}

// outputBackward back-propagates dout through the part of a post-norm
// layer after its attention — out = LN₂(dropout(FFN(y1)) + y1),
// y1 = LN₁(dropout(ctx·Wₒ) + x) — as BERT and DeBERTa share it. It returns
// dx, the gradient of the layer input through the first residual (a pool
// buffer the caller returns up, to which the attention's input gradients
// are then added), and dctx, the gradient of the attention context (a pool
// buffer the caller puts back).
func (P *bertLayer) outputBackward(dout []float32, a *layerActs, n, h, f int, pool *bufPool, be backend.Backend) (dx, dctx []float32) {
	// second LayerNorm: out = LN(dropout(FFN(y1)) + y1)
	dy1 := pool.get(n * h)
	defer pool.put(dy1)
	layerNormBackward(be, dy1, P.ln2W.Grad, P.ln2B.Grad, dout, a.xhat2, a.rstd2, P.ln2W.Value, h)
	dres2 := dy1
	if a.hidKeep2 != nil {
		dres2 = pool.get(n * h)
		defer pool.put(dres2)
		keptCopy(be, dres2, dy1, a.hidKeep2)
	}
	dg := pool.get(n * f)
	defer pool.put(dg)
	linearBackward(be, dg, P.fW.Grad, P.fB.Grad, dres2, a.g, P.fW.Value, n, f, h)
	geluBackward(be, dg, dg, a.u)
	linearBackwardAdd(be, dy1, P.iW.Grad, P.iB.Grad, dg, a.y1, P.iW.Value, n, h, f)
	// first LayerNorm: y1 = LN(dropout(attention(x)) + x)
	dx = pool.get(n * h)
	layerNormBackward(be, dx, P.ln1W.Grad, P.ln1B.Grad, dy1, a.xhat1, a.rstd1, P.ln1W.Value, h)
	dres1 := dx
	if a.hidKeep1 != nil {
		dres1 = pool.get(n * h)
		defer pool.put(dres1)
		keptCopy(be, dres1, dx, a.hidKeep1)
	}
	dctx = pool.get(n * h)
	linearBackward(be, dctx, P.oW.Grad, P.oB.Grad, dres1, a.ctx, P.oW.Value, n, h, h)
	return dx, dctx
}

// sameBuffer says whether a and b start at the same element.
func sameBuffer(a, b []float32) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

// initParam is HuggingFace's _init_weights for BERT-like models: normal(0,
// initializer_range) for weights and embeddings, zeros for biases, ones for
// normalisation weights.
func initParam(p *Param, norm bool, std float64, s *initStream) {
	switch {
	case norm && !strings.HasSuffix(p.Name, ".bias"):
		for i := range p.Value {
			p.Value[i] = 1
		}
	case strings.HasSuffix(p.Name, ".bias"):
		for i := range p.Value {
			p.Value[i] = 0
		}
	default:
		for i := range p.Value {
			p.Value[i] = float32(std * s.normal())
		}
	}
}

// initStream is a small seeded source of normal deviates (SplitMix64 +
// Box-Muller), so initialisation does not depend on math/rand's algorithm.
type initStream struct {
	state uint64
	spare float64
	has   bool
}

func newInitStream(seed uint64) *initStream { return &initStream{state: seed} }

// skip moves the stream n draws ahead: SplitMix64's state after n draws is
// its state plus n times its increment, so a draw far ahead costs nothing.
func (s *initStream) skip(n int) { s.state += uint64(n) * vec32.Gamma }

func (s *initStream) uint64() uint64 {
	s.state += vec32.Gamma
	return vec32.SplitMix64(s.state)
}

// float returns a uniform number in [0, 1).
func (s *initStream) float() float64 { return float64(s.uint64()>>11) / (1 << 53) }

func (s *initStream) normal() float64 {
	if s.has {
		s.has = false
		return s.spare
	}
	u1 := (float64(s.uint64()>>11) + 0.5) / (1 << 53)
	u2 := float64(s.uint64()>>11) / (1 << 53)
	r := math.Sqrt(-2 * math.Log(u1))
	s.spare, s.has = r*math.Sin(2*math.Pi*u2), true
	return r * math.Cos(2*math.Pi*u2)
}

// TinyConfig is the BERT-tiny shape (google/bert_uncased_L-2_H-128_A-2):
// 2 layers, hidden 128, 2 heads, FFN 512, with HuggingFace's defaults.
func TinyConfig(vocabSize int) *checkpoint.Config {
	return &checkpoint.Config{ModelType: "bert", VocabSize: vocabSize, HiddenSize: 128, NumHiddenLayers: 2,
		NumAttentionHeads: 2, IntermediateSize: 512, MaxPositionEmbeddings: 512, TypeVocabSize: 2,
		LayerNormEps: 1e-12, HiddenDropoutProb: 0.1, AttentionProbsDropoutProb: 0.1, HiddenAct: "gelu",
		InitializerRange: 0.02}
}

// MiniConfig is the BERT-mini shape (google/bert_uncased_L-4_H-256_A-4):
// 4 layers, hidden 256, 4 heads, FFN 1024, with HuggingFace's defaults.
func MiniConfig(vocabSize int) *checkpoint.Config {
	c := TinyConfig(vocabSize)
	c.NumHiddenLayers, c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize = 4, 256, 4, 1024
	return c
}
