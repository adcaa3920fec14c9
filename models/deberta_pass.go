package models

import (
	"fmt"
	"math"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// debertaEncoder is DebertaV2Model: embeddings and layers of disentangled
// self-attention (see relAttentionForward), post-LayerNorm like BERT's.
type debertaEncoder struct {
	cfg                       DebertaConfig
	word, pos, typ, proj      *Param
	lnW, lnB, rel, relW, relB *Param
	layers                    []bertLayer // BERT's parameters under DeBERTa's names
}

func newDebertaEncoder(cfg *checkpoint.Config) (*debertaEncoder, error) {
	dc, err := ParseDebertaConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &debertaEncoder{cfg: *dc}, nil
}

func (m *debertaEncoder) HiddenSize() int { return m.cfg.HiddenSize }

// Buffers is HuggingFace's position_ids.
func (m *debertaEncoder) Buffers() []BufferSpec {
	return []BufferSpec{positionIDs("deberta.embeddings.", &m.cfg.Config)}
}

func (m *debertaEncoder) Specs() []ParamSpec { return debertaEncoderSpecs(&m.cfg) }

func (m *debertaEncoder) Bind(param func(string) *Param) {
	c := &m.cfg
	m.word = param("deberta.embeddings.word_embeddings.weight")
	if c.PositionBiasedInput {
		m.pos = param("deberta.embeddings.position_embeddings.weight")
	}
	if c.TypeVocabSize > 0 {
		m.typ = param("deberta.embeddings.token_type_embeddings.weight")
	}
	if c.EmbeddingSize != c.HiddenSize {
		m.proj = param("deberta.embeddings.embed_proj.weight")
	}
	m.lnW, m.lnB = param("deberta.embeddings.LayerNorm.weight"), param("deberta.embeddings.LayerNorm.bias")
	if c.RelativeAttention {
		m.rel = param("deberta.encoder.rel_embeddings.weight")
		if c.NormRelEmbedding {
			m.relW, m.relB = param("deberta.encoder.LayerNorm.weight"), param("deberta.encoder.LayerNorm.bias")
		}
	}
	m.layers = make([]bertLayer, c.NumHiddenLayers)
	for l := range m.layers {
		p := fmt.Sprintf("deberta.encoder.layer.%d.", l)
		w := func(s string) *Param { return param(p + s + ".weight") }
		b := func(s string) *Param { return param(p + s + ".bias") }
		m.layers[l] = bertLayer{
			qW: w("attention.self.query_proj"), qB: b("attention.self.query_proj"),
			kW: w("attention.self.key_proj"), kB: b("attention.self.key_proj"),
			vW: w("attention.self.value_proj"), vB: b("attention.self.value_proj"),
			oW: w("attention.output.dense"), oB: b("attention.output.dense"),
			ln1W: w("attention.output.LayerNorm"), ln1B: b("attention.output.LayerNorm"),
			iW: w("intermediate.dense"), iB: b("intermediate.dense"),
			fW: w("output.dense"), fB: b("output.dense"),
			ln2W: w("output.LayerNorm"), ln2B: b("output.LayerNorm"),
		}
	}
}

// debertaLayer holds one layer's activations for the backward pass.
type debertaLayer struct {
	layerActs                // what BERT's layer keeps, and:
	relIn, relKeep []float32 // the rows of the relative embeddings in reach, as the layer saw them; their dropout multipliers
	posQ, posK     []float32 // query_proj and key_proj of relIn
}

// debertaPass is one forward pass of the encoder and what its backward
// needs.
type debertaPass struct {
	m                *debertaEncoder
	b                Batch
	att              relAttention
	emb              []float32 // summed embeddings (embedding_size wide)
	embXhat, embRstd []float32
	embKeep          []float32
	relE             []float32 // normalised relative embeddings
	relXhat, relRstd []float32
	relLo            int // the first row of relE the attention reaches (p.att.rows of them)
	layers           []debertaLayer
	out              []float32 // final hidden states
}

func (p *debertaPass) Hidden() []float32 { return p.out }

// Forward runs the embeddings and the layers on b.
func (m *debertaEncoder) Forward(r *Run, b Batch) (EncoderPass, error) {
	c, be := &m.cfg, r.m.be
	h, e, L := c.HiddenSize, c.EmbeddingSize, b.SeqLen
	if len(b.IDs) != b.Size*L || len(b.Mask) != b.Size*L || (c.TypeVocabSize > 0 && len(b.Types) != b.Size*L) {
		return nil, fmt.Errorf("batch of %d×%d has %d ids, %d types, %d mask values", b.Size, L, len(b.IDs), len(b.Types), len(b.Mask))
	}
	if c.PositionBiasedInput && L > c.MaxPositionEmbeddings {
		return nil, fmt.Errorf("sequence of %d tokens exceeds max_position_embeddings %d", L, c.MaxPositionEmbeddings)
	}
	n := b.Size * L
	p := &debertaPass{m: m, b: b}
	p.emb = r.Alloc(n * e)
	word := m.word.Value
	var pos, typ []float32
	if m.pos != nil {
		pos = m.pos.Value
	}
	if m.typ != nil {
		typ = m.typ.Value
	}
	for r := 0; r < n; r++ {
		id := b.IDs[r]
		if id < 0 || id >= c.VocabSize {
			return nil, fmt.Errorf("token id %d outside the vocabulary of %d", id, c.VocabSize)
		}
		row := p.emb[r*e : (r+1)*e]
		copy(row, word[id*e:(id+1)*e])
		if pos != nil {
			j := r % L
			for k := range row {
				row[k] += pos[j*e+k]
			}
		}
		if typ != nil {
			t := b.Types[r]
			if t < 0 || t >= c.TypeVocabSize {
				return nil, fmt.Errorf("token type %d outside the %d types", t, c.TypeVocabSize)
			}
			for k := range row {
				row[k] += typ[t*e+k]
			}
		}
	}
	x, proj := r.Alloc(n*h), p.emb
	if m.proj != nil {
		proj = r.Alloc(n * h)
		zero := r.Alloc(h)
		clear(zero)
		linearForward(be, proj, p.emb, m.proj.Value, zero, n, e, h)
	}
	p.embXhat, p.embRstd = r.Alloc(n*h), r.Alloc(n)
	layerNormForward(be, x, p.embXhat, p.embRstd, proj, m.lnW.Value, m.lnB.Value, h, c.LayerNormEps)
	for r := 0; r < n; r++ {
		if b.Mask[r] == 0 {
			clear(x[r*h : (r+1)*h])
		}
	}
	p.embKeep = r.Keep(n*h, r.HiddenRate)
	applyKeep(be, x, p.embKeep)

	p.att = relAttention{batch: b.Size, seq: L, heads: c.NumAttentionHeads, d: h / c.NumAttentionHeads, be: r.m.be,
		scale: 1 / float64(float32(math.Sqrt(float64(h/c.NumAttentionHeads*c.scaleFactor()))))}
	if c.RelativeAttention {
		c2p, p2c, lo, rows := relativeIndices(L, c.span(), c.PositionBuckets, c.maxRelative())
		p.att.rows, p.relLo = rows, lo
		if c.hasPos("c2p") {
			p.att.c2p = c2p
		}
		if c.hasPos("p2c") {
			p.att.p2c = p2c
		}
		rel := m.rel.Value
		p.relE = rel
		if m.relW != nil {
			p.relE, p.relXhat, p.relRstd = r.Alloc(len(rel)), r.Alloc(len(rel)), r.Alloc(len(rel)/h)
			layerNormForward(be, p.relE, p.relXhat, p.relRstd, rel, m.relW.Value, m.relB.Value, h, c.LayerNormEps)
		}
	}
	x = r.stack(x, len(m.layers), func(l int, x []float32, lr *Run) []float32 {
		var acts debertaLayer
		out := m.layerForward(l, x, p, &acts, lr)
		if lr.Train {
			p.layers = append(p.layers, acts)
		}
		return out
	})
	p.out = x
	return p, nil
}

// layerForward runs layer l on x, keeping its activations in a; its
// buffers and dropout come from r.
func (m *debertaEncoder) layerForward(l int, x []float32, p *debertaPass, a *debertaLayer, r *Run) []float32 {
	c, be := &m.cfg, r.m.be
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	b, w := p.b, &m.layers[l]
	n, L := b.Size*b.SeqLen, b.SeqLen
	a.x = x
	a.q, a.k, a.v = r.Alloc(n*h), r.Alloc(n*h), r.Alloc(n*h)
	linearForward(be, a.q, x, w.qW.Value, w.qB.Value, n, h, h)
	linearForward(be, a.k, x, w.kW.Value, w.kB.Value, n, h, h)
	linearForward(be, a.v, x, w.vW.Value, w.vB.Value, n, h, h)
	if c.RelativeAttention {
		// Each layer drops out its own copy of the relative embeddings
		// (DisentangledSelfAttention.pos_dropout, the hidden rate), and
		// projects them with its query_proj and key_proj (share_att_key).
		s2 := p.att.rows
		a.relIn = p.relE[p.relLo*h : (p.relLo+s2)*h]
		if a.relKeep = r.Keep(s2*h, r.HiddenRate); a.relKeep != nil {
			win := a.relIn
			a.relIn = r.Alloc(s2 * h)
			copy(a.relIn, win)
			applyKeep(be, a.relIn, a.relKeep)
		}
		if p.att.p2c != nil {
			a.posQ = r.Alloc(s2 * h)
			linearForward(be, a.posQ, a.relIn, w.qW.Value, w.qB.Value, s2, h, h)
		}
		if p.att.c2p != nil {
			a.posK = r.Alloc(s2 * h)
			linearForward(be, a.posK, a.relIn, w.kW.Value, w.kB.Value, s2, h, h)
		}
	}
	a.probs = r.Alloc(b.Size * heads * L * L)
	a.attnKeep = r.Keep(len(a.probs), r.AttentionRate)
	a.ctx = r.Alloc(n * h)
	var cAll, pAll []float32
	if p.att.c2p != nil {
		cAll = r.Alloc(p.att.scratch())
	}
	if p.att.p2c != nil {
		pAll = r.Alloc(p.att.scratch())
	}
	relAttentionForward(p.att, a.ctx, a.probs, a.q, a.k, a.v, a.posQ, a.posK, b.Mask, a.attnKeep, cAll, pAll)
	y1 := r.Alloc(n * h)
	linearForward(be, y1, a.ctx, w.oW.Value, w.oB.Value, n, h, h)
	a.hidKeep1 = r.Keep(n*h, r.HiddenRate)
	keptAdd(be, y1, a.hidKeep1, x)
	a.xhat1, a.rstd1 = r.Alloc(n*h), r.Alloc(n)
	layerNormForward(be, y1, a.xhat1, a.rstd1, y1, w.ln1W.Value, w.ln1B.Value, h, c.LayerNormEps)
	a.y1 = y1
	a.u, a.g = r.Alloc(n*f), r.Alloc(n*f)
	linearForward(be, a.u, y1, w.iW.Value, w.iB.Value, n, h, f)
	geluForward(be, a.g, a.u)
	out := r.Alloc(n * h)
	linearForward(be, out, a.g, w.fW.Value, w.fB.Value, n, f, h)
	a.hidKeep2 = r.Keep(n*h, r.HiddenRate)
	keptAdd(be, out, a.hidKeep2, y1)
	a.xhat2, a.rstd2 = r.Alloc(n*h), r.Alloc(n)
	layerNormForward(be, out, a.xhat2, a.rstd2, out, w.ln2W.Value, w.ln2B.Value, h, c.LayerNormEps)
	return out
}

// Backward implements EncoderPass: it back-propagates dHidden (a pool
// buffer it takes over) through the layers and the embeddings.
func (p *debertaPass) Backward(r *Run, dHidden []float32) {
	m, b := p.m, p.b
	pool, be := &r.m.pool, r.m.be
	c := &m.cfg
	dx := dHidden
	h, e, L, n := c.HiddenSize, c.EmbeddingSize, b.SeqLen, b.Size*b.SeqLen
	var dRel []float32 // gradient of the normalised relative embeddings, summed over layers
	if c.RelativeAttention {
		dRel = pool.zeroed(len(p.relE))
		defer pool.put(dRel)
	}
	for l := len(m.layers) - 1; l >= 0; l-- {
		dIn := m.layerBackward(l, dx, p, &p.layers[l], dRel, pool)
		pool.put(dx)
		dx = dIn
	}
	defer pool.put(dx)
	applyKeep(be, dx, p.embKeep)
	for row := 0; row < n; row++ {
		if b.Mask[row] == 0 {
			clear(dx[row*h : (row+1)*h])
		}
	}
	dsum := pool.get(n * h)
	defer pool.put(dsum)
	layerNormBackward(be, dsum, m.lnW.Grad, m.lnB.Grad, dx, p.embXhat, p.embRstd, m.lnW.Value, h)
	dEmb := dsum
	if m.proj != nil {
		dEmb = pool.get(n * e)
		defer pool.put(dEmb)
		scratch := pool.get(h) // embed_proj has no bias
		defer pool.put(scratch)
		linearBackward(be, dEmb, m.proj.Grad, scratch, dsum, p.emb, m.proj.Value, n, e, h)
	}
	wg := m.word.Grad
	var pg, tg []float32
	if m.pos != nil {
		pg = m.pos.Grad
	}
	if m.typ != nil {
		tg = m.typ.Grad
	}
	for row := 0; row < n; row++ {
		d := dEmb[row*e : (row+1)*e]
		// nn.Embedding(padding_idx=pad_token_id) gives its padding row no gradient.
		if id := b.IDs[row]; id != c.PadTokenID {
			for k, v := range d {
				wg[id*e+k] += v
			}
		}
		if pg != nil {
			j := row % L
			for k, v := range d {
				pg[j*e+k] += v
			}
		}
		if tg != nil {
			t := b.Types[row]
			for k, v := range d {
				tg[t*e+k] += v
			}
		}
	}
	if dRel == nil {
		return
	}
	rg := m.rel.Grad
	if m.relW == nil {
		for i, v := range dRel {
			rg[i] += v
		}
		return
	}
	dr := pool.get(len(dRel))
	defer pool.put(dr)
	layerNormBackward(be, dr, m.relW.Grad, m.relB.Grad, dRel, p.relXhat, p.relRstd, m.relW.Value, h)
	for i, v := range dr {
		rg[i] += v
	}
}

// layerBackward back-propagates dout through layer l, adds the gradient of
// the relative embeddings it saw into dRel, and returns the gradient of its
// input in a pool buffer.
func (m *debertaEncoder) layerBackward(l int, dout []float32, p *debertaPass, a *debertaLayer, dRel []float32, pool *bufPool) []float32 {
	c, be := &m.cfg, p.att.be
	h, f := c.HiddenSize, c.IntermediateSize
	n := p.b.Size * p.b.SeqLen
	w := &m.layers[l]
	dx, dctx := w.outputBackward(dout, &a.layerActs, n, h, f, pool, be)
	defer pool.put(dctx)
	dq, dk, dv := pool.get(n*h), pool.get(n*h), pool.get(n*h)
	defer pool.put(dq, dk, dv)
	var dPosQ, dPosK, dC, dP []float32
	s2 := p.att.rows
	if a.posQ != nil {
		dPosQ, dP = pool.get(s2*h), pool.get(p.att.scratch())
		defer pool.put(dPosQ, dP)
	}
	if a.posK != nil {
		dPosK, dC = pool.get(s2*h), pool.get(p.att.scratch())
		defer pool.put(dPosK, dC)
	}
	relAttentionBackward(p.att, dq, dk, dv, dPosQ, dPosK, dctx, a.probs, a.attnKeep, a.q, a.k, a.v, a.posQ, a.posK, dC, dP)
	linearBackwardAdd(be, dx, w.qW.Grad, w.qB.Grad, dq, a.x, w.qW.Value, n, h, h)
	linearBackwardAdd(be, dx, w.kW.Grad, w.kB.Grad, dk, a.x, w.kW.Value, n, h, h)
	linearBackwardAdd(be, dx, w.vW.Grad, w.vB.Grad, dv, a.x, w.vW.Value, n, h, h)
	if dRel == nil || (dPosQ == nil && dPosK == nil) {
		return dx
	}
	// The position projections reuse query_proj and key_proj
	// (share_att_key): their gradients add to the same weights.
	dIn := pool.zeroed(s2 * h)
	defer pool.put(dIn)
	if dPosQ != nil {
		linearBackwardAdd(be, dIn, w.qW.Grad, w.qB.Grad, dPosQ, a.relIn, w.qW.Value, s2, h, h)
	}
	if dPosK != nil {
		linearBackwardAdd(be, dIn, w.kW.Grad, w.kB.Grad, dPosK, a.relIn, w.kW.Value, s2, h, h)
	}
	applyKeep(be, dIn, a.relKeep)
	win := dRel[p.relLo*h:]
	for i, v := range dIn {
		win[i] += v
	}
	return dx
}
