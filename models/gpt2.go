package models

import (
	"encoding/json"
	"fmt"
	"github.com/beluga-nlp/beluga/models/backend"
	"math"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// This file is the gpt2 family (openai-community/gpt2 and its kind) as
// transformers' modeling_gpt2.py computes it:
//
//   - embeddings: wte[token] + wpe[position], dropout;
//   - N pre-norm blocks: x += drop(c_proj(attention(ln_1(x)))), then
//     x += drop(mlp.c_proj(gelu_new(mlp.c_fc(ln_2(x))))); attention is
//     causal, with q, k, v from one c_attn projection; GPT-2's linear layers
//     are Conv1D, whose weight is [in, out] (the transpose of nn.Linear's);
//   - ln_f;
//   - GPT2ForSequenceClassification: score (no bias) on the last real
//     token's state; GPT2LMHeadModel: the logits wte·state (lm_head tied
//     to wte unless tie_word_embeddings is false).
//
// Dropout follows BeLUGA's two rates: Run.HiddenRate (resid_pdrop) after
// the embeddings and both residual branches, Run.AttentionRate (attn_pdrop)
// on the attention probabilities; embd_pdrop (resid_pdrop's value in every
// released checkpoint) is not read. Positions are those of the real tokens
// (decoderPositions): 0, 1, 2, … for a right-padded row, as HuggingFace's
// default, and the same for a left-padded one, as generate() passes them.

func init() {
	Register(Family{
		ModelType:  "gpt2",
		Prefix:     "transformer",
		Classifier: "GPT2ForSequenceClassification",
		CausalLM:   "GPT2LMHeadModel",
		NewEncoder: func(cfg *checkpoint.Config) (Encoder, error) { return newGPT2Encoder(cfg) },
		NewPooler:  newLastToken,
		NewHead:    newScoreHead,
		Config: checkpoint.FamilyConfig{
			Keys: map[string]string{"hidden_size": "n_embd", "num_hidden_layers": "n_layer",
				"num_attention_heads": "n_head", "intermediate_size": "n_inner", "max_position_embeddings": "n_positions",
				"hidden_dropout_prob": "resid_pdrop", "attention_probs_dropout_prob": "attn_pdrop",
				"hidden_act": "activation_function"},
			// GPT2Config's defaults (GPT-2 small).
			Defaults: func(c *checkpoint.Config) {
				c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads = 50257, 768, 12, 12
				c.MaxPositionEmbeddings, c.HiddenAct = 1024, "gelu_new"
				c.HiddenDropoutProb, c.AttentionProbsDropoutProb, c.LayerNormEps = 0.1, 0.1, 1e-5
			},
			Derive: func(c *checkpoint.Config) {
				if c.IntermediateSize == 0 { // n_inner null
					c.IntermediateSize = 4 * c.HiddenSize
				}
			},
			Omit: []string{"hidden_dropout_prob", "attention_probs_dropout_prob", "type_vocab_size", "layer_norm_eps"},
		},
		Tokenizer: TokenizerDefaults{Class: "GPT2Tokenizer", ByteLevelBPE: true, BPENoSpecials: true},
	})
}

// GPT2Config holds config.json's GPT-2 fields beside BERT's, with
// GPT2Config's defaults.
type GPT2Config struct {
	LayerNormEpsilon           float64 `json:"layer_norm_epsilon"`
	ScaleAttnWeights           bool    `json:"scale_attn_weights"`
	ScaleAttnByInverseLayerIdx bool    `json:"scale_attn_by_inverse_layer_idx"`
	AddCrossAttention          bool    `json:"add_cross_attention"`
	TieWordEmbeddings          bool    `json:"tie_word_embeddings"`
}

// ParseGPT2Config reads and checks the GPT-2 fields of cfg (its Extra).
func ParseGPT2Config(cfg *checkpoint.Config) (GPT2Config, error) {
	a := GPT2Config{LayerNormEpsilon: 1e-5, ScaleAttnWeights: true, TieWordEmbeddings: true}
	if err := parseExtra(cfg, &a); err != nil {
		return a, fmt.Errorf("gpt2 config: %w", err)
	}
	switch {
	case !a.ScaleAttnWeights:
		return a, fmt.Errorf("field \"scale_attn_weights\": false is not supported")
	case a.ScaleAttnByInverseLayerIdx:
		return a, fmt.Errorf("field \"scale_attn_by_inverse_layer_idx\": true is not supported")
	case a.AddCrossAttention:
		return a, fmt.Errorf("field \"add_cross_attention\": true is not supported (no encoder-decoder models)")
	case a.LayerNormEpsilon <= 0:
		return a, fmt.Errorf("field \"layer_norm_epsilon\": %g, want a positive value", a.LayerNormEpsilon)
	}
	switch cfg.HiddenAct {
	case "gelu_new", "gelu_pytorch_tanh":
	default:
		return a, fmt.Errorf("field \"activation_function\": %q (only gelu_new, the tanh GELU, is supported)", cfg.HiddenAct)
	}
	return a, nil
}

// parseExtra reads a family's own fields, kept in cfg.Extra, into dst.
func parseExtra(cfg *checkpoint.Config, dst any) error {
	if len(cfg.Extra) == 0 {
		return nil
	}
	raw, err := json.Marshal(cfg.Extra)
	if err != nil {
		return err
	}
	return checkpoint.UnmarshalFields(raw, dst)
}

// gpt2Block is one block's parameters; Conv1D weights are [in, out].
type gpt2Block struct {
	ln1w, ln1b, attnW, attnB, projW, projB *Param
	ln2w, ln2b, fcW, fcB, fc2W, fc2B       *Param
}

type gpt2Encoder struct {
	cfg        checkpoint.Config
	a          GPT2Config
	wte, wpe   *Param
	blocks     []gpt2Block
	lnfW, lnfB *Param
}

func newGPT2Encoder(cfg *checkpoint.Config) (*gpt2Encoder, error) {
	a, err := ParseGPT2Config(cfg)
	if err != nil {
		return nil, err
	}
	return &gpt2Encoder{cfg: *cfg, a: a}, nil
}

func (m *gpt2Encoder) HiddenSize() int        { return m.cfg.HiddenSize }
func (m *gpt2Encoder) embedding() *Param      { return m.wte }
func (m *gpt2Encoder) tied() bool             { return m.a.TieWordEmbeddings }
func (m *gpt2Encoder) blockName(l int) string { return fmt.Sprintf("transformer.h.%d.", l) }

// Specs lists GPT2Model's parameters; c_proj weights are drawn at
// initializer_range/√(2·n_layer), as GPT2PreTrainedModel._init_weights
// draws them.
func (m *gpt2Encoder) Specs() []ParamSpec {
	c := &m.cfg
	h, f := c.HiddenSize, c.IntermediateSize
	proj := c.InitializerRange / math.Sqrt(2*float64(c.NumHiddenLayers))
	s := []ParamSpec{{Name: "transformer.wte.weight", Shape: []int{c.VocabSize, h}},
		{Name: "transformer.wpe.weight", Shape: []int{c.MaxPositionEmbeddings, h}}}
	norm := func(name string) []ParamSpec {
		return []ParamSpec{{Name: name + ".weight", Shape: []int{h}, Norm: true}, {Name: name + ".bias", Shape: []int{h}, Norm: true}}
	}
	conv := func(name string, in, out int, std float64) []ParamSpec {
		return []ParamSpec{{Name: name + ".weight", Shape: []int{in, out}, Std: std}, {Name: name + ".bias", Shape: []int{out}}}
	}
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := m.blockName(l)
		s = append(s, norm(p+"ln_1")...)
		s = append(s, conv(p+"attn.c_attn", h, 3*h, 0)...)
		s = append(s, conv(p+"attn.c_proj", h, h, proj)...)
		s = append(s, norm(p+"ln_2")...)
		s = append(s, conv(p+"mlp.c_fc", h, f, 0)...)
		s = append(s, conv(p+"mlp.c_proj", f, h, proj)...)
	}
	return append(s, norm("transformer.ln_f")...)
}

// Buffers is GPT2Attention's causal mask "bias" in each block, which
// transformers 4.27 saves: lower-triangular ones, n_positions square.
// (Its float "masked_bias" is a tensor HuggingFace itself ignores on
// loading; the load report lists it as ignored.)
func (m *gpt2Encoder) Buffers() []BufferSpec {
	n := m.cfg.MaxPositionEmbeddings
	var out []BufferSpec
	for l := 0; l < m.cfg.NumHiddenLayers; l++ {
		out = append(out, BufferSpec{Name: m.blockName(l) + "attn.bias", Shape: []int{1, 1, n, n},
			Value: func(i int) int64 {
				if i%n <= i/n {
					return 1
				}
				return 0
			}})
	}
	return out
}

func (m *gpt2Encoder) Bind(param func(string) *Param) {
	m.wte, m.wpe = param("transformer.wte.weight"), param("transformer.wpe.weight")
	m.blocks = make([]gpt2Block, m.cfg.NumHiddenLayers)
	for l := range m.blocks {
		p := m.blockName(l)
		m.blocks[l] = gpt2Block{
			ln1w: param(p + "ln_1.weight"), ln1b: param(p + "ln_1.bias"),
			attnW: param(p + "attn.c_attn.weight"), attnB: param(p + "attn.c_attn.bias"),
			projW: param(p + "attn.c_proj.weight"), projB: param(p + "attn.c_proj.bias"),
			ln2w: param(p + "ln_2.weight"), ln2b: param(p + "ln_2.bias"),
			fcW: param(p + "mlp.c_fc.weight"), fcB: param(p + "mlp.c_fc.bias"),
			fc2W: param(p + "mlp.c_proj.weight"), fc2B: param(p + "mlp.c_proj.bias"),
		}
	}
	m.lnfW, m.lnfB = param("transformer.ln_f.weight"), param("transformer.ln_f.bias")
}

// conv1DForward is GPT-2's Conv1D: y (n×out) = x (n×in)·w + b, w [in, out].
func conv1DForward(be backend.Backend, y, x, w, b []float32, n, in, out int) {
	for r := 0; r < n; r++ {
		copy(y[r*out:(r+1)*out], b)
	}
	gemm(be, false, false, n, out, in, 1, x, in, w, out, 1, y, out)
}

// conv1DBackward adds dw += xᵀ·dy and db += Σ dy, and sets dx = dy·wᵀ
// when dx is not nil.
func conv1DBackward(be backend.Backend, dx, dw, db, dy, x, w []float32, n, in, out int) {
	gemm(be, true, false, in, out, n, 1, x, in, dy, out, 1, dw, out)
	biasGrad(be, db, dy, n, out)
	if dx != nil {
		gemm(be, false, true, n, in, out, 1, dy, out, w, out, 0, dx, in)
	}
}

// gpt2Acts holds one block's activations for the backward pass.
type gpt2Acts struct {
	x                 []float32 // block input
	a, xhat1, rstd1   []float32 // ln_1
	q, k, v, ctx      []float32
	probs, attnKeep   []float32
	projKeep          []float32
	x1                []float32 // x + attention
	mIn, xhat2, rstd2 []float32 // ln_2
	u, g              []float32 // c_fc's output, gelu_new of it
	mlpKeep           []float32
}

type gpt2Pass struct {
	m                *gpt2Encoder
	b                Batch
	pos              []int
	embKeep          []float32
	layers           []gpt2Acts
	finXhat, finRstd []float32
	out              []float32
}

func (p *gpt2Pass) Hidden() []float32 { return p.out }

func (m *gpt2Encoder) Forward(r *Run, b Batch) (EncoderPass, error) {
	p, _, err := m.forwardCached(r, b, nil, false)
	return p, err
}

func (m *gpt2Encoder) forwardCached(r *Run, b Batch, past *kvCache, save bool) (EncoderPass, *kvCache, error) {
	c := &m.cfg
	h := c.HiddenSize
	pos, err := decoderStart(r, b, c, past, save, c.MaxPositionEmbeddings)
	if err != nil {
		return nil, nil, err
	}
	n := b.Size * b.SeqLen
	p := &gpt2Pass{m: m, b: b, pos: pos, layers: make([]gpt2Acts, len(m.blocks))}
	x := r.Alloc(n * h)
	embedRows(x, m.wte.Value, b, h)
	wpe := m.wpe.Value
	for t, q := range pos {
		addTo(x[t*h:(t+1)*h], wpe[q*h:(q+1)*h])
	}
	p.embKeep = r.Keep(n*h, r.HiddenRate)
	applyKeep(r.m.be, x, p.embKeep)
	var cache *kvCache
	x = r.stack(x, len(m.blocks), func(l int, x []float32, lr *Run) []float32 {
		return m.blockForward(l, x, p, lr, &p.layers[l], past, saveTo(save, &cache))
	})
	p.out, p.finXhat, p.finRstd = r.Alloc(n*h), r.Alloc(n*h), r.Alloc(n)
	layerNormForward(r.m.be, p.out, p.finXhat, p.finRstd, x, m.lnfW.Value, m.lnfB.Value, h, m.a.LayerNormEpsilon)
	return p, cache, nil
}

// blockForward runs block l on x; with cache set, it appends the block's
// keys and values (of a one-row batch) to *cache.
func (m *gpt2Encoder) blockForward(l int, x []float32, p *gpt2Pass, r *Run, s *gpt2Acts, past *kvCache, cache **kvCache) []float32 {
	c := &m.cfg
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	b := p.b
	n, L, d := b.Size*b.SeqLen, b.SeqLen, h/heads
	P := &m.blocks[l]
	pool, be := &r.m.pool, r.m.be
	eps := m.a.LayerNormEpsilon
	s.x = x
	s.a, s.xhat1, s.rstd1 = r.Alloc(n*h), r.Alloc(n*h), r.Alloc(n)
	layerNormForward(be, s.a, s.xhat1, s.rstd1, x, P.ln1w.Value, P.ln1b.Value, h, eps)
	qkv := pool.get(n * 3 * h)
	defer pool.put(qkv)
	conv1DForward(be, qkv, s.a, P.attnW.Value, P.attnB.Value, n, h, 3*h)
	s.q, s.k, s.v = r.Alloc(n*h), r.Alloc(n*h), r.Alloc(n*h)
	for row := 0; row < n; row++ {
		src := qkv[row*3*h:]
		copy(s.q[row*h:(row+1)*h], src[:h])
		copy(s.k[row*h:(row+1)*h], src[h:2*h])
		copy(s.v[row*h:(row+1)*h], src[2*h:3*h])
	}
	var pk, pv []float32
	pastN := 0
	if past != nil {
		pk, pv, pastN = past.k[l], past.v[l], past.n
	}
	if cache != nil {
		*cache = (*cache).extend(past, l, len(m.blocks), L, h, s.k, s.v)
	}
	if r.Train {
		s.probs = r.Alloc(b.Size * heads * L * (pastN + L))
		s.attnKeep = r.Keep(len(s.probs), r.AttentionRate)
	}
	s.ctx = r.Alloc(n * h)
	causalAttentionForward(be, s.ctx, s.probs, s.q, s.k, s.v, pk, pv, pastN, b.Mask, s.attnKeep, b.Size, L, heads, heads, d)
	s.x1 = r.Alloc(n * h)
	conv1DForward(be, s.x1, s.ctx, P.projW.Value, P.projB.Value, n, h, h)
	s.projKeep = r.Keep(n*h, r.HiddenRate)
	keptAdd(be, s.x1, s.projKeep, x)
	s.mIn, s.xhat2, s.rstd2 = r.Alloc(n*h), r.Alloc(n*h), r.Alloc(n)
	layerNormForward(be, s.mIn, s.xhat2, s.rstd2, s.x1, P.ln2w.Value, P.ln2b.Value, h, eps)
	s.u, s.g = r.Alloc(n*f), r.Alloc(n*f)
	conv1DForward(be, s.u, s.mIn, P.fcW.Value, P.fcB.Value, n, h, f)
	geluTanhForward(s.g, s.u)
	out := r.Alloc(n * h)
	conv1DForward(be, out, s.g, P.fc2W.Value, P.fc2B.Value, n, f, h)
	s.mlpKeep = r.Keep(n*h, r.HiddenRate)
	keptAdd(be, out, s.mlpKeep, s.x1)
	return out
}

// Backward back-propagates dHidden (a buffer of the pool, which it takes
// over) through ln_f, the blocks and the embeddings.
func (p *gpt2Pass) Backward(r *Run, dHidden []float32) {
	m, b := p.m, p.b
	h, n := m.cfg.HiddenSize, b.Size*b.SeqLen
	pool := &r.m.pool
	defer pool.put(dHidden)
	dx := pool.get(n * h)
	defer pool.put(dx)
	layerNormBackward(r.m.be, dx, m.lnfW.Grad, m.lnfB.Grad, dHidden, p.finXhat, p.finRstd, m.lnfW.Value, h)
	for l := len(p.layers) - 1; l >= 0; l-- {
		m.blockBackward(l, dx, p, pool, r.m.be)
	}
	applyKeep(r.m.be, dx, p.embKeep)
	embedBackward(m.wte.Grad, dx, b, h)
	wg := m.wpe.Grad
	for t, q := range p.pos {
		if b.Mask[t] == 0 {
			continue
		}
		addTo(wg[q*h:(q+1)*h], dx[t*h:(t+1)*h])
	}
}

// blockBackward replaces dx, the gradient of block l's output, by the
// gradient of its input.
func (m *gpt2Encoder) blockBackward(l int, dx []float32, p *gpt2Pass, pool *bufPool, be backend.Backend) {
	c := &m.cfg
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	b, s, P := p.b, &p.layers[l], &m.blocks[l]
	n, L, d := b.Size*b.SeqLen, b.SeqLen, h/heads
	// out = x1 + drop(c_proj(gelu_new(c_fc(ln_2(x1)))))
	do := pool.get(n * h)
	defer pool.put(do)
	keptCopyOrCopy(be, do, dx, s.mlpKeep)
	dg := pool.get(n * f)
	defer pool.put(dg)
	conv1DBackward(be, dg, P.fc2W.Grad, P.fc2B.Grad, do, s.g, P.fc2W.Value, n, f, h)
	geluTanhBackward(dg, dg, s.u)
	dm := pool.get(n * h)
	defer pool.put(dm)
	conv1DBackward(be, dm, P.fcW.Grad, P.fcB.Grad, dg, s.mIn, P.fcW.Value, n, h, f)
	dx1 := pool.get(n * h)
	defer pool.put(dx1)
	layerNormBackward(be, dx1, P.ln2w.Grad, P.ln2b.Grad, dm, s.xhat2, s.rstd2, P.ln2w.Value, h)
	addTo(dx, dx1) // dx now holds d(x1)
	// x1 = x + drop(c_proj(attention(ln_1(x))))
	keptCopyOrCopy(be, do, dx, s.projKeep)
	dctx := pool.get(n * h)
	defer pool.put(dctx)
	conv1DBackward(be, dctx, P.projW.Grad, P.projB.Grad, do, s.ctx, P.projW.Value, n, h, h)
	dq, dk, dv := pool.get(n*h), pool.get(n*h), pool.get(n*h)
	defer pool.put(dq, dk, dv)
	causalAttentionBackward(be, pool, dq, dk, dv, dctx, s.probs, s.attnKeep, s.q, s.k, s.v, b.Size, L, heads, heads, d)
	dqkv := pool.get(n * 3 * h)
	defer pool.put(dqkv)
	for row := 0; row < n; row++ {
		dst := dqkv[row*3*h:]
		copy(dst[:h], dq[row*h:(row+1)*h])
		copy(dst[h:2*h], dk[row*h:(row+1)*h])
		copy(dst[2*h:3*h], dv[row*h:(row+1)*h])
	}
	conv1DBackward(be, dm, P.attnW.Grad, P.attnB.Grad, dqkv, s.a, P.attnW.Value, n, h, 3*h)
	layerNormBackward(be, dx1, P.ln1w.Grad, P.ln1b.Grad, dm, s.xhat1, s.rstd1, P.ln1w.Value, h)
	addTo(dx, dx1)
}

// keptCopyOrCopy sets dst = src·keep, or dst = src without dropout.
func keptCopyOrCopy(be backend.Backend, dst, src, keep []float32) {
	if keep == nil {
		copy(dst, src)
		return
	}
	keptCopy(be, dst, src, keep)
}

// TinyGPT2Config is a GPT-2 at BERT-tiny's scale for tests and benchmarks:
// hidden 128, 2 layers, 2 heads, MLP width 512, 1024 positions, GPT-2's
// defaults otherwise.
func TinyGPT2Config(vocabSize int) *checkpoint.Config {
	return &checkpoint.Config{ModelType: "gpt2", VocabSize: vocabSize, HiddenSize: 128, NumHiddenLayers: 2,
		NumAttentionHeads: 2, IntermediateSize: 512, MaxPositionEmbeddings: 1024, HiddenAct: "gelu_new",
		LayerNormEps: 1e-5, InitializerRange: 0.02, Extra: map[string]json.RawMessage{}}
}
