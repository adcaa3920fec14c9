package models

import (
	"fmt"
	"math"
)

// NumLabels implements Classifier.
func (m *BERT) NumLabels() int { return m.numLabels }

// SetFrozenEncoder implements Classifier: a frozen encoder (linear probing)
// gets no gradients, and Backward stops at the classifier.
func (m *BERT) SetFrozenEncoder(frozen bool) { m.frozen = frozen }

// SeedDropout restarts the dropout stream.
func (m *BERT) SeedDropout(seed uint64) { m.dropout = newInitStream(seed ^ 0x5eed) }

// Output is the result of an inference pass.
type Output struct {
	Logits    []float32 // Size × NumLabels
	CLSHidden []float32 // Size × hidden: the final layer's [CLS] states
}

// Infer runs the model in evaluation mode (no dropout) on b.
func (m *BERT) Infer(b Batch) (Output, error) {
	p, err := m.forward(b, false)
	if err != nil {
		return Output{}, err
	}
	return Output{Logits: p.logits, CLSHidden: p.cls}, nil
}

// Forward implements Classifier.
func (m *BERT) Forward(b Batch, train bool) (Pass, error) {
	return m.forward(b, train)
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

// bertPass is one forward pass and what its backward pass needs.
type bertPass struct {
	m                 *BERT
	b                 Batch
	train             bool
	embKeep           []float32
	embXhat, embRstd  []float32
	layers            []layerActs
	out               []float32 // final hidden states
	cls, pooled       []float32
	poolKeep, pooledD []float32
	logits            []float32
}

func (p *bertPass) Logits() []float32 { return p.logits }

// Release drops the pass's activations.
func (p *bertPass) Release() { *p = bertPass{} }

// keepMask draws dropout multipliers: 0 with probability rate, else 1/(1−rate).
func (m *BERT) keepMask(n int, rate float64) []float32 {
	if rate <= 0 {
		return nil
	}
	k := make([]float32, n)
	scale := float32(1 / (1 - rate))
	for i := range k {
		if m.dropout.float() >= rate {
			k[i] = scale
		}
	}
	return k
}

func applyKeep(x, keep []float32) {
	for i := range keep {
		x[i] *= keep[i]
	}
}

func (m *BERT) forward(b Batch, train bool) (*bertPass, error) {
	c := &m.Config
	h, L := c.HiddenSize, b.SeqLen
	if L > c.MaxPositionEmbeddings {
		return nil, fmt.Errorf("sequence of %d tokens exceeds max_position_embeddings %d", L, c.MaxPositionEmbeddings)
	}
	if len(b.IDs) != b.Size*L || len(b.Types) != b.Size*L || len(b.Mask) != b.Size*L {
		return nil, fmt.Errorf("batch of %d×%d has %d ids, %d types, %d mask values", b.Size, L, len(b.IDs), len(b.Types), len(b.Mask))
	}
	n := b.Size * L
	p := &bertPass{m: m, b: b, train: train}
	hidRate, attnRate := 0.0, 0.0
	if train {
		hidRate, attnRate = m.HiddenDropout, m.AttentionDropout
	}
	x := make([]float32, n*h)
	word, pos, typ := m.byName["bert.embeddings.word_embeddings.weight"].Value,
		m.byName["bert.embeddings.position_embeddings.weight"].Value,
		m.byName["bert.embeddings.token_type_embeddings.weight"].Value
	for r := 0; r < n; r++ {
		id, t, j := b.IDs[r], b.Types[r], r%L
		if id < 0 || id >= c.VocabSize {
			return nil, fmt.Errorf("token id %d outside the vocabulary of %d", id, c.VocabSize)
		}
		if t < 0 || t >= c.TypeVocabSize {
			return nil, fmt.Errorf("token type %d outside the %d types", t, c.TypeVocabSize)
		}
		row := x[r*h : (r+1)*h]
		for k := range row {
			row[k] = word[id*h+k] + pos[j*h+k] + typ[t*h+k]
		}
	}
	eps := c.LayerNormEps
	p.embXhat, p.embRstd = make([]float32, n*h), make([]float32, n)
	layerNormForward(x, p.embXhat, p.embRstd, x, m.byName["bert.embeddings.LayerNorm.weight"].Value, m.byName["bert.embeddings.LayerNorm.bias"].Value, h, eps)
	p.embKeep = m.keepMask(n*h, hidRate)
	applyKeep(x, p.embKeep)
	for l := 0; l < c.NumHiddenLayers; l++ {
		var acts layerActs
		x = m.layerForward(l, x, b, hidRate, attnRate, &acts)
		if train {
			p.layers = append(p.layers, acts)
		}
	}
	p.out = x
	p.cls = make([]float32, b.Size*h)
	for i := 0; i < b.Size; i++ {
		copy(p.cls[i*h:(i+1)*h], x[i*L*h:])
	}
	pw, pb := m.byName["bert.pooler.dense.weight"], m.byName["bert.pooler.dense.bias"]
	p.pooled = make([]float32, b.Size*h)
	linearForward(p.pooled, p.cls, pw.Value, pb.Value, b.Size, h, h)
	for i, v := range p.pooled {
		p.pooled[i] = float32(math.Tanh(float64(v)))
	}
	p.pooledD = append([]float32(nil), p.pooled...)
	p.poolKeep = m.keepMask(len(p.pooledD), hidRate)
	applyKeep(p.pooledD, p.poolKeep)
	cw, cb := m.byName["classifier.weight"], m.byName["classifier.bias"]
	p.logits = make([]float32, b.Size*m.numLabels)
	linearForward(p.logits, p.pooledD, cw.Value, cb.Value, b.Size, h, m.numLabels)
	return p, nil
}

func (m *BERT) layerParam(l int, s string) *Param {
	return m.byName[fmt.Sprintf("bert.encoder.layer.%d.%s", l, s)]
}

func (m *BERT) layerForward(l int, x []float32, b Batch, hidRate, attnRate float64, a *layerActs) []float32 {
	c := &m.Config
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	n, L := b.Size*b.SeqLen, b.SeqLen
	pr := func(s string) []float32 { return m.layerParam(l, s).Value }
	a.x = x
	a.q, a.k, a.v = make([]float32, n*h), make([]float32, n*h), make([]float32, n*h)
	linearForward(a.q, x, pr("attention.self.query.weight"), pr("attention.self.query.bias"), n, h, h)
	linearForward(a.k, x, pr("attention.self.key.weight"), pr("attention.self.key.bias"), n, h, h)
	linearForward(a.v, x, pr("attention.self.value.weight"), pr("attention.self.value.bias"), n, h, h)
	a.probs = make([]float32, b.Size*heads*L*L)
	a.attnKeep = m.keepMask(len(a.probs), attnRate)
	a.ctx = make([]float32, n*h)
	attentionForward(a.ctx, a.probs, a.q, a.k, a.v, b.Mask, a.attnKeep, b.Size, L, heads, h/heads)
	res := make([]float32, n*h)
	linearForward(res, a.ctx, pr("attention.output.dense.weight"), pr("attention.output.dense.bias"), n, h, h)
	a.hidKeep1 = m.keepMask(n*h, hidRate)
	applyKeep(res, a.hidKeep1)
	for i := range res {
		res[i] += x[i]
	}
	a.y1, a.xhat1, a.rstd1 = make([]float32, n*h), make([]float32, n*h), make([]float32, n)
	layerNormForward(a.y1, a.xhat1, a.rstd1, res, pr("attention.output.LayerNorm.weight"), pr("attention.output.LayerNorm.bias"), h, c.LayerNormEps)
	a.u, a.g = make([]float32, n*f), make([]float32, n*f)
	linearForward(a.u, a.y1, pr("intermediate.dense.weight"), pr("intermediate.dense.bias"), n, h, f)
	geluForward(a.g, a.u)
	out := make([]float32, n*h)
	linearForward(out, a.g, pr("output.dense.weight"), pr("output.dense.bias"), n, f, h)
	a.hidKeep2 = m.keepMask(n*h, hidRate)
	applyKeep(out, a.hidKeep2)
	for i := range out {
		out[i] += a.y1[i]
	}
	a.xhat2, a.rstd2 = make([]float32, n*h), make([]float32, n)
	layerNormForward(out, a.xhat2, a.rstd2, out, pr("output.LayerNorm.weight"), pr("output.LayerNorm.bias"), h, c.LayerNormEps)
	return out
}

// Backward implements Pass: it adds d(loss)/d(params) into every Param.Grad
// (only the classifier's when the encoder is frozen).
func (p *bertPass) Backward(dLogits []float32) error {
	m, b := p.m, p.b
	if !p.train {
		return fmt.Errorf("backward of an evaluation pass: call Forward with train set")
	}
	if len(dLogits) != len(p.logits) {
		return fmt.Errorf("backward: %d logit gradients for %d logits", len(dLogits), len(p.logits))
	}
	c := &m.Config
	h, L, n := c.HiddenSize, b.SeqLen, b.Size*b.SeqLen
	cw, cb := m.byName["classifier.weight"], m.byName["classifier.bias"]
	dPooled := make([]float32, b.Size*h)
	linearBackward(dPooled, cw.Grad, cb.Grad, dLogits, p.pooledD, cw.Value, b.Size, h, m.numLabels)
	if m.frozen {
		return nil
	}
	applyKeep(dPooled, p.poolKeep)
	for i, v := range p.pooled {
		dPooled[i] *= 1 - v*v
	}
	pw, pb := m.byName["bert.pooler.dense.weight"], m.byName["bert.pooler.dense.bias"]
	dCLS := make([]float32, b.Size*h)
	linearBackward(dCLS, pw.Grad, pb.Grad, dPooled, p.cls, pw.Value, b.Size, h, h)
	dx := make([]float32, n*h)
	for i := 0; i < b.Size; i++ {
		copy(dx[i*L*h:], dCLS[i*h:(i+1)*h])
	}
	for l := c.NumHiddenLayers - 1; l >= 0; l-- {
		dx = m.layerBackward(l, dx, b, &p.layers[l])
	}
	applyKeep(dx, p.embKeep)
	ln := m.byName["bert.embeddings.LayerNorm.weight"]
	dsum := make([]float32, n*h)
	layerNormBackward(dsum, ln.Grad, m.byName["bert.embeddings.LayerNorm.bias"].Grad, dx, p.embXhat, p.embRstd, ln.Value, h)
	wg, pg, tg := m.byName["bert.embeddings.word_embeddings.weight"].Grad,
		m.byName["bert.embeddings.position_embeddings.weight"].Grad,
		m.byName["bert.embeddings.token_type_embeddings.weight"].Grad
	for r := 0; r < n; r++ {
		id, t, j := b.IDs[r], b.Types[r], r%L
		row := dsum[r*h : (r+1)*h]
		for k, v := range row {
			wg[id*h+k] += v
			pg[j*h+k] += v
			tg[t*h+k] += v
		}
	}
	return nil
}

func (m *BERT) layerBackward(l int, dout []float32, b Batch, a *layerActs) []float32 {
	c := &m.Config
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	n, L := b.Size*b.SeqLen, b.SeqLen
	pr := func(s string) *Param { return m.layerParam(l, s) }
	// second LayerNorm: out = LN(dropout(FFN(y1)) + y1)
	ln2 := pr("output.LayerNorm.weight")
	dres2 := make([]float32, n*h)
	layerNormBackward(dres2, ln2.Grad, pr("output.LayerNorm.bias").Grad, dout, a.xhat2, a.rstd2, ln2.Value, h)
	dy1 := append([]float32(nil), dres2...)
	applyKeep(dres2, a.hidKeep2)
	dg := make([]float32, n*f)
	ow := pr("output.dense.weight")
	linearBackward(dg, ow.Grad, pr("output.dense.bias").Grad, dres2, a.g, ow.Value, n, f, h)
	du := make([]float32, n*f)
	geluBackward(du, dg, a.u)
	iw := pr("intermediate.dense.weight")
	dy1b := make([]float32, n*h)
	linearBackward(dy1b, iw.Grad, pr("intermediate.dense.bias").Grad, du, a.y1, iw.Value, n, h, f)
	for i := range dy1 {
		dy1[i] += dy1b[i]
	}
	// first LayerNorm: y1 = LN(dropout(attention(x)) + x)
	ln1 := pr("attention.output.LayerNorm.weight")
	dres1 := make([]float32, n*h)
	layerNormBackward(dres1, ln1.Grad, pr("attention.output.LayerNorm.bias").Grad, dy1, a.xhat1, a.rstd1, ln1.Value, h)
	dx := append([]float32(nil), dres1...)
	applyKeep(dres1, a.hidKeep1)
	dctx := make([]float32, n*h)
	aw := pr("attention.output.dense.weight")
	linearBackward(dctx, aw.Grad, pr("attention.output.dense.bias").Grad, dres1, a.ctx, aw.Value, n, h, h)
	dq, dk, dv := make([]float32, n*h), make([]float32, n*h), make([]float32, n*h)
	attentionBackward(dq, dk, dv, dctx, a.probs, a.attnKeep, a.q, a.k, a.v, b.Size, L, heads, h/heads)
	tmp := make([]float32, n*h)
	for _, s := range []struct {
		name string
		d    []float32
	}{{"query", dq}, {"key", dk}, {"value", dv}} {
		w := pr("attention.self." + s.name + ".weight")
		linearBackward(tmp, w.Grad, pr("attention.self."+s.name+".bias").Grad, s.d, a.x, w.Value, n, h, h)
		for i := range dx {
			dx[i] += tmp[i]
		}
	}
	return dx
}

// SetDropout sets the training-time dropout rates of hidden states and
// attention probabilities.
func (m *BERT) SetDropout(hidden, attention float64) {
	m.HiddenDropout, m.AttentionDropout = hidden, attention
}
