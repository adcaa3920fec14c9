package models

import "fmt"

// mbLayer holds one ModernBERT layer's activations for the backward pass.
type mbLayer struct {
	x               []float32 // layer input (the residual stream)
	a               []float32 // attention input: attn_norm(x), or x in layer 0
	xhatA, rstdA    []float32
	q, k, v, ctx    []float32 // q and k rotated
	probs, attnKeep []float32
	outKeep         []float32 // dropout after the attention's Wo
	x1              []float32 // x + attention
	mIn             []float32 // mlp_norm(x1)
	xhatM, rstdM    []float32
	u, act          []float32 // Wi's output [input, gate]; GELU(input)
	g               []float32 // GELU(input)·gate after dropout: Wo's input
	mlpKeep         []float32
}

// modernPass is one forward pass and what its backward pass needs.
type modernPass struct {
	m                *ModernBERT
	b                Batch
	ids              []int // b.IDs with padding read as pad_token_id
	train            bool
	embXhat, embRstd []float32
	embKeep          []float32
	layers           []mbLayer
	cosG, sinG       []float32 // rotary tables of global and local layers
	cosL, sinL       []float32
	xFinal           []float32 // the last layer's output
	finXhat, finRstd []float32
	out              []float32 // final_norm's output: the sequence output
	rows             int       // rows through the head: Size, or Size·SeqLen for spans
	pooled           []float32 // the head's input (rows × hidden)
	dense            []float32 // head.dense's output, before the activation
	act              []float32 // its activation
	hXhat, hRstd     []float32
	feat             []float32 // head.norm's output
	featD            []float32 // after the classifier's dropout
	clsKeep          []float32
	logits           []float32 // in the layout Logits returns
	bufs             [][]float32
}

func (p *modernPass) Logits() []float32 { return p.logits }

// Release returns the pass's buffers to the model for the next pass.
func (p *modernPass) Release() {
	if p.m != nil {
		p.m.pool.put(p.bufs...)
	}
	*p = modernPass{}
}

func (p *modernPass) alloc(n int) []float32 {
	b := p.m.pool.get(n)
	p.bufs = append(p.bufs, b)
	return b
}

// norm returns a LayerNorm's γ and β (zeros without norm_bias) and their
// gradients (a scratch β gradient without norm_bias).
func (m *ModernBERT) norm(name string) (g, b *Param) {
	g, b = m.byName[name+".weight"], m.byName[name+".bias"]
	if b == nil {
		b = &Param{Value: m.zeros}
	}
	return g, b
}

// linear returns a linear layer's weight and its bias's values and
// gradient (without a bias: zeros, and a scratch gradient that is
// thrown away).
func (m *ModernBERT) linear(name string, out int) (w *Param, bv, bg []float32) {
	w = m.byName[name+".weight"]
	if b := m.byName[name+".bias"]; b != nil {
		return w, b.Value, b.Grad
	}
	return w, m.zeros[:out], m.discard[:out]
}

// Forward implements Classifier.
func (m *ModernBERT) Forward(b Batch, train bool) (Pass, error) {
	return m.forward(b, train)
}

func (m *ModernBERT) forward(b Batch, train bool) (*modernPass, error) {
	c, a := &m.Config, &m.Arch
	h, L := c.HiddenSize, b.SeqLen
	if len(b.IDs) != b.Size*L || len(b.Mask) != b.Size*L {
		return nil, fmt.Errorf("batch of %d×%d has %d ids and %d mask values", b.Size, L, len(b.IDs), len(b.Mask))
	}
	n := b.Size * L
	p := &modernPass{m: m, b: b, train: train, ids: make([]int, n)}
	rate := func(r float64) float64 {
		if train {
			return r
		}
		return 0
	}
	x := p.alloc(n * h)
	tok := m.byName["model.embeddings.tok_embeddings.weight"].Value
	for r := 0; r < n; r++ {
		id := b.IDs[r]
		// Batches pad with 0; HuggingFace's tokenizer pads with
		// pad_token_id, whose embedding the padding positions carry.
		if b.Mask[r] == 0 {
			id = c.PadTokenID
		}
		if id < 0 || id >= c.VocabSize {
			return nil, fmt.Errorf("token id %d outside the vocabulary of %d", id, c.VocabSize)
		}
		p.ids[r] = id
		copy(x[r*h:(r+1)*h], tok[id*h:(id+1)*h])
	}
	eps := a.NormEps
	g, be := m.norm("model.embeddings.norm")
	p.embXhat, p.embRstd = p.alloc(n*h), p.alloc(n)
	layerNormForward(x, p.embXhat, p.embRstd, x, g.Value, be.Value, h, eps)
	p.embKeep = drawKeep(m.dropout, p.alloc, n*h, rate(a.EmbeddingDropout))
	applyKeep(x, p.embKeep)
	d := h / c.NumAttentionHeads
	p.cosG, p.sinG = ropeTable[float32](a.GlobalRopeTheta, L, d)
	p.cosL, p.sinL = ropeTable[float32](a.LocalRopeTheta, L, d)
	p.layers = make([]mbLayer, c.NumHiddenLayers)
	for l := range p.layers {
		x = m.layerForward(l, x, p, rate(a.AttentionDropout), rate(a.MLPDropout), &p.layers[l])
	}
	p.xFinal = x
	p.out, p.finXhat, p.finRstd = p.alloc(n*h), p.alloc(n*h), p.alloc(n)
	g, be = m.norm("model.final_norm")
	layerNormForward(p.out, p.finXhat, p.finRstd, x, g.Value, be.Value, h, eps)
	m.headForward(p, rate(a.ClassifierDropout))
	return p, nil
}

// rope returns layer l's rotary tables.
func (p *modernPass) rope(l int) (cos, sin []float32) {
	if p.m.Arch.LayerTypes[l] == "full_attention" {
		return p.cosG, p.sinG
	}
	return p.cosL, p.sinL
}

// layerForward runs layer l on x, keeping its activations in s.
func (m *ModernBERT) layerForward(l int, x []float32, p *modernPass, attnRate, mlpRate float64, s *mbLayer) []float32 {
	c, a := &m.Config, &m.Arch
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	b := p.b
	n, L, d := b.Size*b.SeqLen, b.SeqLen, h/heads
	pre := fmt.Sprintf("model.layers.%d.", l)
	s.x, s.a = x, x
	if l > 0 {
		s.a, s.xhatA, s.rstdA = p.alloc(n*h), p.alloc(n*h), p.alloc(n)
		g, be := m.norm(pre + "attn_norm")
		layerNormForward(s.a, s.xhatA, s.rstdA, x, g.Value, be.Value, h, a.NormEps)
	}
	qkv := m.pool.get(n * 3 * h)
	defer m.pool.put(qkv)
	w, bv, _ := m.linear(pre+"attn.Wqkv", 3*h)
	linearForward(qkv, s.a, w.Value, bv, n, h, 3*h)
	s.q, s.k, s.v = p.alloc(n*h), p.alloc(n*h), p.alloc(n*h)
	for r := 0; r < n; r++ {
		row := qkv[r*3*h:]
		copy(s.q[r*h:(r+1)*h], row[:h])
		copy(s.k[r*h:(r+1)*h], row[h:2*h])
		copy(s.v[r*h:(r+1)*h], row[2*h:3*h])
	}
	cos, sin := p.rope(l)
	rotary(s.q, cos, sin, b.Size, L, heads, d, false)
	rotary(s.k, cos, sin, b.Size, L, heads, d, false)
	s.probs = p.alloc(b.Size * heads * L * L)
	s.attnKeep = drawKeep(m.dropout, p.alloc, len(s.probs), attnRate)
	s.ctx = p.alloc(n * h)
	windowAttentionForward(s.ctx, s.probs, s.q, s.k, s.v, b.Mask, s.attnKeep, b.Size, L, heads, d, a.window(l))
	s.x1 = p.alloc(n * h)
	w, bv, _ = m.linear(pre+"attn.Wo", h)
	linearForward(s.x1, s.ctx, w.Value, bv, n, h, h)
	s.outKeep = drawKeep(m.dropout, p.alloc, n*h, attnRate)
	applyKeep(s.x1, s.outKeep)
	for i, v := range x {
		s.x1[i] += v
	}
	s.mIn, s.xhatM, s.rstdM = p.alloc(n*h), p.alloc(n*h), p.alloc(n)
	g, be := m.norm(pre + "mlp_norm")
	layerNormForward(s.mIn, s.xhatM, s.rstdM, s.x1, g.Value, be.Value, h, a.NormEps)
	s.u = p.alloc(n * 2 * f)
	w, bv, _ = m.linear(pre+"mlp.Wi", 2*f)
	linearForward(s.u, s.mIn, w.Value, bv, n, h, 2*f)
	s.act, s.g = p.alloc(n*f), p.alloc(n*f)
	gegluForward(s.g, s.act, s.u, n, f)
	s.mlpKeep = drawKeep(m.dropout, p.alloc, n*f, mlpRate)
	applyKeep(s.g, s.mlpKeep)
	out := p.alloc(n * h)
	w, bv, _ = m.linear(pre+"mlp.Wo", h)
	linearForward(out, s.g, w.Value, bv, n, f, h)
	for i, v := range s.x1 {
		out[i] += v
	}
	return out
}

// headForward pools (or, for spans, takes every token), runs the
// prediction head, dropout and the classifier.
func (m *ModernBERT) headForward(p *modernPass, clsRate float64) {
	c, a := &m.Config, &m.Arch
	h, L, B := c.HiddenSize, p.b.SeqLen, p.b.Size
	switch {
	case m.span:
		p.rows, p.pooled = B*L, p.out
	case a.ClassifierPooling == "mean":
		p.rows, p.pooled = B, p.alloc(B*h)
		clear(p.pooled)
		for i := 0; i < B; i++ {
			dst := p.pooled[i*h : (i+1)*h]
			var cnt float32
			for j := 0; j < L; j++ {
				mk := p.b.Mask[i*L+j]
				if mk == 0 {
					continue
				}
				cnt += mk
				for k, v := range p.out[(i*L+j)*h : (i*L+j+1)*h] {
					dst[k] += v * mk
				}
			}
			for k := range dst {
				dst[k] /= cnt
			}
		}
	default:
		p.rows, p.pooled = B, p.alloc(B*h)
		for i := 0; i < B; i++ {
			copy(p.pooled[i*h:(i+1)*h], p.out[i*L*h:])
		}
	}
	rows := p.rows
	w, bv, _ := m.linear("head.dense", h)
	p.dense, p.act = p.alloc(rows*h), p.alloc(rows*h)
	linearForward(p.dense, p.pooled, w.Value, bv, rows, h, h)
	geluForward(p.act, p.dense)
	p.feat, p.hXhat, p.hRstd = p.alloc(rows*h), p.alloc(rows*h), p.alloc(rows)
	g, be := m.norm("head.norm")
	layerNormForward(p.feat, p.hXhat, p.hRstd, p.act, g.Value, be.Value, h, a.NormEps)
	p.featD = p.feat
	if p.clsKeep = drawKeep(m.dropout, p.alloc, rows*h, clsRate); p.clsKeep != nil {
		p.featD = p.alloc(rows * h)
		copy(p.featD, p.feat)
		applyKeep(p.featD, p.clsKeep)
	}
	cw, cb := m.byName["classifier.weight"], m.byName["classifier.bias"]
	z := p.alloc(rows * m.numLabels)
	linearForward(z, p.featD, cw.Value, cb.Value, rows, h, m.numLabels)
	if !m.span {
		p.logits = z
		return
	}
	// rows × 2 → per row of the batch: L start logits, then L end logits
	p.logits = p.alloc(rows * 2)
	for i := 0; i < B; i++ {
		for j := 0; j < L; j++ {
			p.logits[i*2*L+j] = z[(i*L+j)*2]
			p.logits[i*2*L+L+j] = z[(i*L+j)*2+1]
		}
	}
}

// Backward implements Pass.
func (p *modernPass) Backward(dLogits []float32) error {
	m := p.m
	if !p.train {
		return fmt.Errorf("backward of an evaluation pass: call Forward with train set")
	}
	if len(dLogits) != len(p.logits) {
		return fmt.Errorf("backward: %d logit gradients for %d logits", len(dLogits), len(p.logits))
	}
	c, a := &m.Config, &m.Arch
	h, L, B, rows := c.HiddenSize, p.b.SeqLen, p.b.Size, p.rows
	pool := &m.pool
	dz := dLogits
	if m.span {
		dz = pool.get(rows * 2)
		defer pool.put(dz)
		for i := 0; i < B; i++ {
			for j := 0; j < L; j++ {
				dz[(i*L+j)*2] = dLogits[i*2*L+j]
				dz[(i*L+j)*2+1] = dLogits[i*2*L+L+j]
			}
		}
	}
	cw, cb := m.byName["classifier.weight"], m.byName["classifier.bias"]
	if m.frozen {
		linearBackward(nil, cw.Grad, cb.Grad, dz, p.featD, cw.Value, rows, h, m.numLabels)
		return nil
	}
	df := pool.get(rows * h)
	defer pool.put(df)
	linearBackward(df, cw.Grad, cb.Grad, dz, p.featD, cw.Value, rows, h, m.numLabels)
	applyKeep(df, p.clsKeep)
	dact := pool.get(rows * h)
	defer pool.put(dact)
	m.normBackward("head.norm", dact, df, p.hXhat, p.hRstd)
	geluBackward(dact, dact, p.dense)
	dpool := pool.get(rows * h)
	defer pool.put(dpool)
	w, _, bg := m.linear("head.dense", h)
	linearBackward(dpool, w.Grad, bg, dact, p.pooled, w.Value, rows, h, h)
	n := B * L
	dout := pool.zeroed(n * h)
	defer pool.put(dout)
	switch {
	case m.span:
		copy(dout, dpool)
	case a.ClassifierPooling == "mean":
		for i := 0; i < B; i++ {
			var cnt float32
			for j := 0; j < L; j++ {
				cnt += p.b.Mask[i*L+j]
			}
			src := dpool[i*h : (i+1)*h]
			for j := 0; j < L; j++ {
				mk := p.b.Mask[i*L+j]
				if mk == 0 {
					continue
				}
				dst := dout[(i*L+j)*h : (i*L+j+1)*h]
				for k, v := range src {
					dst[k] = v * mk / cnt
				}
			}
		}
	default:
		for i := 0; i < B; i++ {
			copy(dout[i*L*h:], dpool[i*h:(i+1)*h])
		}
	}
	p.backwardFromOutput(dout)
	return nil
}

// normBackward back-propagates dy through the LayerNorm called name into
// dx and its parameters' gradients.
func (m *ModernBERT) normBackward(name string, dx, dy, xhat, rstd []float32) {
	g, b := m.norm(name)
	dbeta := b.Grad
	if dbeta == nil {
		dbeta = m.pool.get(len(g.Grad))
		defer m.pool.put(dbeta)
	}
	layerNormBackward(dx, g.Grad, dbeta, dy, xhat, rstd, g.Value, m.Config.HiddenSize)
}

// backwardFromOutput back-propagates dout, the gradient of final_norm's
// output, through the encoder into the parameters' gradients.
func (p *modernPass) backwardFromOutput(dout []float32) {
	m, b := p.m, p.b
	h, n := m.Config.HiddenSize, b.Size*b.SeqLen
	pool := &m.pool
	dx := pool.get(n * h)
	m.normBackward("model.final_norm", dx, dout, p.finXhat, p.finRstd)
	for l := len(p.layers) - 1; l >= 0; l-- {
		m.layerBackward(l, dx, p, &p.layers[l])
	}
	defer pool.put(dx)
	applyKeep(dx, p.embKeep)
	de := pool.get(n * h)
	defer pool.put(de)
	m.normBackward("model.embeddings.norm", de, dx, p.embXhat, p.embRstd)
	tg := m.byName["model.embeddings.tok_embeddings.weight"].Grad
	pad := m.Config.PadTokenID
	for r, id := range p.ids {
		// nn.Embedding(padding_idx=pad_token_id): the padding row learns nothing
		if id == pad {
			continue
		}
		row := tg[id*h : (id+1)*h]
		for k, v := range de[r*h : (r+1)*h] {
			row[k] += v
		}
	}
}

// layerBackward replaces dx, the gradient of layer l's output, by the
// gradient of its input.
func (m *ModernBERT) layerBackward(l int, dx []float32, p *modernPass, s *mbLayer) {
	c := &m.Config
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	b := p.b
	n, L, d := b.Size*b.SeqLen, b.SeqLen, h/heads
	pool := &m.pool
	pre := fmt.Sprintf("model.layers.%d.", l)
	// out = x1 + Wo(drop(GELU(in)·gate)), [in, gate] = Wi(mlp_norm(x1))
	dg := pool.get(n * f)
	defer pool.put(dg)
	w, _, bg := m.linear(pre+"mlp.Wo", h)
	linearBackward(dg, w.Grad, bg, dx, s.g, w.Value, n, f, h)
	applyKeep(dg, s.mlpKeep)
	du := pool.get(n * 2 * f)
	defer pool.put(du)
	gegluBackward(du, dg, s.act, s.u, n, f)
	dm := pool.get(n * h)
	defer pool.put(dm)
	w, _, bg = m.linear(pre+"mlp.Wi", 2*f)
	linearBackward(dm, w.Grad, bg, du, s.mIn, w.Value, n, h, 2*f)
	dx1 := pool.get(n * h)
	defer pool.put(dx1)
	m.normBackward(pre+"mlp_norm", dx1, dm, s.xhatM, s.rstdM)
	for i := range dx {
		dx[i] += dx1[i] // dx now holds d(x1)
	}
	// x1 = x + drop(Wo(attention(a))), a = attn_norm(x) or x
	do := dx1 // reuse: the gradient of Wo's output
	copy(do, dx)
	applyKeep(do, s.outKeep)
	dctx := pool.get(n * h)
	defer pool.put(dctx)
	w, _, bg = m.linear(pre+"attn.Wo", h)
	linearBackward(dctx, w.Grad, bg, do, s.ctx, w.Value, n, h, h)
	dq, dk, dv := pool.get(n*h), pool.get(n*h), pool.get(n*h)
	defer pool.put(dq, dk, dv)
	attentionBackward(dq, dk, dv, dctx, s.probs, s.attnKeep, s.q, s.k, s.v, b.Size, L, heads, d)
	cos, sin := p.rope(l)
	rotary(dq, cos, sin, b.Size, L, heads, d, true)
	rotary(dk, cos, sin, b.Size, L, heads, d, true)
	dqkv := pool.get(n * 3 * h)
	defer pool.put(dqkv)
	for r := 0; r < n; r++ {
		row := dqkv[r*3*h:]
		copy(row[:h], dq[r*h:(r+1)*h])
		copy(row[h:2*h], dk[r*h:(r+1)*h])
		copy(row[2*h:3*h], dv[r*h:(r+1)*h])
	}
	w, _, bg = m.linear(pre+"attn.Wqkv", 3*h)
	if l == 0 {
		linearBackwardAdd(dx, w.Grad, bg, dqkv, s.a, w.Value, n, h, 3*h)
		return
	}
	da := dm // reuse
	linearBackward(da, w.Grad, bg, dqkv, s.a, w.Value, n, h, 3*h)
	dn := dctx // reuse
	m.normBackward(pre+"attn_norm", dn, da, s.xhatA, s.rstdA)
	for i := range dx {
		dx[i] += dn[i]
	}
}

// Infer runs the model in evaluation mode on b. Output.CLSHidden holds the
// final [CLS] states, Output.Pooled the prediction head's output (the
// classifier's input) per row; for the span model only Logits is set.
func (m *ModernBERT) Infer(b Batch) (Output, error) {
	p, err := m.forward(b, false)
	if err != nil {
		return Output{}, err
	}
	defer p.Release()
	out := Output{Logits: append([]float32(nil), p.logits...)}
	if !m.span {
		h, L := m.Config.HiddenSize, b.SeqLen
		out.CLSHidden = make([]float32, b.Size*h)
		for i := 0; i < b.Size; i++ {
			copy(out.CLSHidden[i*h:(i+1)*h], p.out[i*L*h:])
		}
		out.Pooled = append([]float32(nil), p.feat...)
	}
	return out, nil
}

// ModernSequencePass is a forward pass read at the sequence output (every
// token's final_norm state), for token-level heads outside the model.
type ModernSequencePass struct{ p *modernPass }

// ForwardSequence runs the encoder on b (with dropout when train is set).
// The model's own head runs too but takes no part in what the pass returns
// or back-propagates.
func (m *ModernBERT) ForwardSequence(b Batch, train bool) (*ModernSequencePass, error) {
	p, err := m.forward(b, train)
	if err != nil {
		return nil, err
	}
	return &ModernSequencePass{p: p}, nil
}

// Hidden returns the final hidden states, Size×SeqLen×hidden row-major.
func (s *ModernSequencePass) Hidden() []float32 { return s.p.out }

// Release drops the pass's activations.
func (s *ModernSequencePass) Release() { s.p.Release() }

// BackwardHidden adds d(loss)/d(encoder params) into each Param.Grad, given
// dHidden = d(loss)/d(Hidden()). A frozen encoder gets nothing.
func (s *ModernSequencePass) BackwardHidden(dHidden []float32) error {
	p := s.p
	if !p.train {
		return fmt.Errorf("backward of an evaluation pass: call ForwardSequence with train set")
	}
	if len(dHidden) != len(p.out) {
		return fmt.Errorf("backward: %d hidden-state gradients for %d hidden states", len(dHidden), len(p.out))
	}
	if p.m.frozen {
		return nil
	}
	p.backwardFromOutput(dHidden)
	return nil
}

// HeadForward runs the classifier alone on features (rows × hidden, the
// prediction head's output: Output.Pooled): the classifier's dropout when
// train is set, then the linear classifier. Its Backward adds into the
// classifier's gradients only. Linear probing trains the classifier this
// way on features of the frozen encoder computed once.
func (m *ModernBERT) HeadForward(features []float32, rows int, train bool) (Pass, error) {
	h := m.Config.HiddenSize
	if m.span {
		return nil, fmt.Errorf("head: the span model has no pooled features")
	}
	if rows < 0 || len(features) != rows*h {
		return nil, fmt.Errorf("head: %d features for %d rows of width %d", len(features), rows, h)
	}
	p := &modernHeadPass{m: m, rows: rows, train: train, in: append([]float32(nil), features...)}
	if train {
		p.keep = drawKeep(m.dropout, func(n int) []float32 { return make([]float32, n) }, len(p.in), m.Arch.ClassifierDropout)
		applyKeep(p.in, p.keep)
	}
	cw, cb := m.byName["classifier.weight"], m.byName["classifier.bias"]
	p.logits = make([]float32, rows*m.numLabels)
	linearForward(p.logits, p.in, cw.Value, cb.Value, rows, h, m.numLabels)
	return p, nil
}

type modernHeadPass struct {
	m        *ModernBERT
	rows     int
	train    bool
	in, keep []float32
	logits   []float32
}

func (p *modernHeadPass) Logits() []float32 { return p.logits }

func (p *modernHeadPass) Release() { *p = modernHeadPass{} }

func (p *modernHeadPass) Backward(dLogits []float32) error {
	if !p.train {
		return fmt.Errorf("backward of an evaluation pass: call HeadForward with train set")
	}
	if len(dLogits) != len(p.logits) {
		return fmt.Errorf("backward: %d logit gradients for %d logits", len(dLogits), len(p.logits))
	}
	cw, cb := p.m.byName["classifier.weight"], p.m.byName["classifier.bias"]
	linearBackward(nil, cw.Grad, cb.Grad, dLogits, p.in, cw.Value, p.rows, p.m.Config.HiddenSize, p.m.numLabels)
	return nil
}
