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
	// Pooled is Size × hidden: the pooler's output (tanh), what the
	// classifier reads (after dropout when training): the features a
	// linear probe can cache, its encoder being frozen.
	Pooled []float32
}

// Infer runs the model in evaluation mode (no dropout) on b.
func (m *BERT) Infer(b Batch) (Output, error) {
	p, err := m.forward(b, false)
	if err != nil {
		return Output{}, err
	}
	out := Output{Logits: append([]float32(nil), p.logits...), CLSHidden: append([]float32(nil), p.cls...),
		Pooled: append([]float32(nil), p.pooled...)}
	p.Release()
	return out, nil
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
	bufs              [][]float32 // from m.pool, returned by Release
}

func (p *bertPass) Logits() []float32 { return p.logits }

// Release returns the pass's buffers to the model for the next pass.
func (p *bertPass) Release() {
	if p.m != nil {
		p.m.pool.put(p.bufs...)
	}
	*p = bertPass{}
}

// alloc returns a buffer of n floats (arbitrary contents) that the pass owns.
func (p *bertPass) alloc(n int) []float32 {
	b := p.m.pool.get(n)
	p.bufs = append(p.bufs, b)
	return b
}

// keepMask draws dropout multipliers into a buffer from alloc: 0 with
// probability rate, else 1/(1−rate); nil when rate is 0.
func (m *BERT) keepMask(alloc func(int) []float32, n int, rate float64) []float32 {
	if rate <= 0 {
		return nil
	}
	k := alloc(n)
	scale := float32(1 / (1 - rate))
	for i := range k {
		k[i] = 0
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
	x := p.alloc(n * h)
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
	p.embXhat, p.embRstd = p.alloc(n*h), p.alloc(n)
	layerNormForward(x, p.embXhat, p.embRstd, x, m.byName["bert.embeddings.LayerNorm.weight"].Value, m.byName["bert.embeddings.LayerNorm.bias"].Value, h, eps)
	p.embKeep = m.keepMask(p.alloc, n*h, hidRate)
	applyKeep(x, p.embKeep)
	for l := 0; l < c.NumHiddenLayers; l++ {
		var acts layerActs
		if train {
			x = m.layerForward(l, x, b, hidRate, attnRate, &acts, p.alloc)
			p.layers = append(p.layers, acts)
			continue
		}
		// Evaluation keeps no activations: a layer's buffers go back to
		// the pool as soon as the next layer has its input.
		var scratch [][]float32
		out := m.layerForward(l, x, b, 0, 0, &acts, func(n int) []float32 {
			buf := m.pool.get(n)
			scratch = append(scratch, buf)
			return buf
		})
		for i, buf := range scratch {
			if sameBuffer(buf, out) {
				scratch[i] = nil
			}
		}
		m.pool.put(scratch...)
		if l > 0 {
			m.pool.put(x)
		}
		x = out
	}
	if !train && c.NumHiddenLayers > 0 {
		p.bufs = append(p.bufs, x)
	}
	p.out = x
	p.cls = p.alloc(b.Size * h)
	for i := 0; i < b.Size; i++ {
		copy(p.cls[i*h:(i+1)*h], x[i*L*h:])
	}
	pw, pb := m.byName["bert.pooler.dense.weight"], m.byName["bert.pooler.dense.bias"]
	p.pooled = p.alloc(b.Size * h)
	linearForward(p.pooled, p.cls, pw.Value, pb.Value, b.Size, h, h)
	for i, v := range p.pooled {
		p.pooled[i] = float32(math.Tanh(float64(v)))
	}
	p.pooledD = p.alloc(len(p.pooled))
	copy(p.pooledD, p.pooled)
	p.poolKeep = m.keepMask(p.alloc, len(p.pooledD), hidRate)
	applyKeep(p.pooledD, p.poolKeep)
	cw, cb := m.byName["classifier.weight"], m.byName["classifier.bias"]
	p.logits = p.alloc(b.Size * m.numLabels)
	linearForward(p.logits, p.pooledD, cw.Value, cb.Value, b.Size, h, m.numLabels)
	return p, nil
}

func (m *BERT) layerParam(l int, s string) *Param {
	return m.byName[fmt.Sprintf("bert.encoder.layer.%d.%s", l, s)]
}

// layerForward runs layer l on x, keeping its activations in a; its buffers
// come from alloc.
func (m *BERT) layerForward(l int, x []float32, b Batch, hidRate, attnRate float64, a *layerActs, alloc func(int) []float32) []float32 {
	c := &m.Config
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	n, L := b.Size*b.SeqLen, b.SeqLen
	pr := func(s string) []float32 { return m.layerParam(l, s).Value }
	a.x = x
	a.q, a.k, a.v = alloc(n*h), alloc(n*h), alloc(n*h)
	linearForward(a.q, x, pr("attention.self.query.weight"), pr("attention.self.query.bias"), n, h, h)
	linearForward(a.k, x, pr("attention.self.key.weight"), pr("attention.self.key.bias"), n, h, h)
	linearForward(a.v, x, pr("attention.self.value.weight"), pr("attention.self.value.bias"), n, h, h)
	a.probs = alloc(b.Size * heads * L * L)
	a.attnKeep = m.keepMask(alloc, len(a.probs), attnRate)
	a.ctx = alloc(n * h)
	attentionForward(a.ctx, a.probs, a.q, a.k, a.v, b.Mask, a.attnKeep, b.Size, L, heads, h/heads)
	res := alloc(n * h)
	linearForward(res, a.ctx, pr("attention.output.dense.weight"), pr("attention.output.dense.bias"), n, h, h)
	a.hidKeep1 = m.keepMask(alloc, n*h, hidRate)
	applyKeep(res, a.hidKeep1)
	for i := range res {
		res[i] += x[i]
	}
	a.y1, a.xhat1, a.rstd1 = alloc(n*h), alloc(n*h), alloc(n)
	layerNormForward(a.y1, a.xhat1, a.rstd1, res, pr("attention.output.LayerNorm.weight"), pr("attention.output.LayerNorm.bias"), h, c.LayerNormEps)
	a.u, a.g = alloc(n*f), alloc(n*f)
	linearForward(a.u, a.y1, pr("intermediate.dense.weight"), pr("intermediate.dense.bias"), n, h, f)
	geluForward(a.g, a.u)
	out := alloc(n * h)
	linearForward(out, a.g, pr("output.dense.weight"), pr("output.dense.bias"), n, f, h)
	a.hidKeep2 = m.keepMask(alloc, n*h, hidRate)
	applyKeep(out, a.hidKeep2)
	for i := range out {
		out[i] += a.y1[i]
	}
	a.xhat2, a.rstd2 = alloc(n*h), alloc(n)
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
	pool := &m.pool
	dPooled := pool.get(b.Size * h)
	defer pool.put(dPooled)
	linearBackward(dPooled, cw.Grad, cb.Grad, dLogits, p.pooledD, cw.Value, b.Size, h, m.numLabels)
	if m.frozen {
		return nil
	}
	applyKeep(dPooled, p.poolKeep)
	for i, v := range p.pooled {
		dPooled[i] *= 1 - v*v
	}
	pw, pb := m.byName["bert.pooler.dense.weight"], m.byName["bert.pooler.dense.bias"]
	dCLS := pool.get(b.Size * h)
	defer pool.put(dCLS)
	linearBackward(dCLS, pw.Grad, pb.Grad, dPooled, p.cls, pw.Value, b.Size, h, h)
	dx := pool.zeroed(n * h)
	for i := 0; i < b.Size; i++ {
		copy(dx[i*L*h:], dCLS[i*h:(i+1)*h])
	}
	p.encoderBackward(dx)
	return nil
}

// encoderBackward back-propagates dx, the gradient of the last layer's
// output (a buffer of the pool, which it takes over), through the layers
// and the embeddings into the parameters' gradients. The classifier's and
// the span head's backward passes end here.
func (p *bertPass) encoderBackward(dx []float32) {
	m, b := p.m, p.b
	pool := &m.pool
	c := &m.Config
	h, L, n := c.HiddenSize, b.SeqLen, b.Size*b.SeqLen
	for l := c.NumHiddenLayers - 1; l >= 0; l-- {
		dIn := m.layerBackward(l, dx, b, &p.layers[l])
		pool.put(dx)
		dx = dIn
	}
	defer pool.put(dx)
	applyKeep(dx, p.embKeep)
	ln := m.byName["bert.embeddings.LayerNorm.weight"]
	dsum := pool.get(n * h)
	defer pool.put(dsum)
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
}

// layerBackward back-propagates dout through layer l and returns the
// gradient of its input, in a buffer from the model's pool.
func (m *BERT) layerBackward(l int, dout []float32, b Batch, a *layerActs) []float32 {
	c := &m.Config
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	n, L := b.Size*b.SeqLen, b.SeqLen
	pool := &m.pool
	pr := func(s string) *Param { return m.layerParam(l, s) }
	// second LayerNorm: out = LN(dropout(FFN(y1)) + y1)
	ln2 := pr("output.LayerNorm.weight")
	dy1 := pool.get(n * h)
	defer pool.put(dy1)
	layerNormBackward(dy1, ln2.Grad, pr("output.LayerNorm.bias").Grad, dout, a.xhat2, a.rstd2, ln2.Value, h)
	dres2 := dy1
	if a.hidKeep2 != nil {
		dres2 = pool.get(n * h)
		defer pool.put(dres2)
		copy(dres2, dy1)
		applyKeep(dres2, a.hidKeep2)
	}
	dg := pool.get(n * f)
	defer pool.put(dg)
	ow := pr("output.dense.weight")
	linearBackward(dg, ow.Grad, pr("output.dense.bias").Grad, dres2, a.g, ow.Value, n, f, h)
	geluBackward(dg, dg, a.u)
	iw := pr("intermediate.dense.weight")
	linearBackwardAdd(dy1, iw.Grad, pr("intermediate.dense.bias").Grad, dg, a.y1, iw.Value, n, h, f)
	// first LayerNorm: y1 = LN(dropout(attention(x)) + x)
	ln1 := pr("attention.output.LayerNorm.weight")
	dx := pool.get(n * h)
	layerNormBackward(dx, ln1.Grad, pr("attention.output.LayerNorm.bias").Grad, dy1, a.xhat1, a.rstd1, ln1.Value, h)
	dres1 := dx
	if a.hidKeep1 != nil {
		dres1 = pool.get(n * h)
		defer pool.put(dres1)
		copy(dres1, dx)
		applyKeep(dres1, a.hidKeep1)
	}
	dctx := pool.get(n * h)
	defer pool.put(dctx)
	aw := pr("attention.output.dense.weight")
	linearBackward(dctx, aw.Grad, pr("attention.output.dense.bias").Grad, dres1, a.ctx, aw.Value, n, h, h)
	dq, dk, dv := pool.get(n*h), pool.get(n*h), pool.get(n*h)
	defer pool.put(dq, dk, dv)
	attentionBackward(dq, dk, dv, dctx, a.probs, a.attnKeep, a.q, a.k, a.v, b.Size, L, heads, h/heads)
	for _, s := range []struct {
		name string
		d    []float32
	}{{"query", dq}, {"key", dk}, {"value", dv}} {
		w := pr("attention.self." + s.name + ".weight")
		linearBackwardAdd(dx, w.Grad, pr("attention.self."+s.name+".bias").Grad, s.d, a.x, w.Value, n, h, h)
	}
	return dx
}

// SetDropout sets the training-time dropout rates of hidden states and
// attention probabilities.
func (m *BERT) SetDropout(hidden, attention float64) {
	m.HiddenDropout, m.AttentionDropout = hidden, attention
}

// sameBuffer says whether a and b start at the same element.
func sameBuffer(a, b []float32) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}
