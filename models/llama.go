package models

import (
	"encoding/json"
	"fmt"
	"github.com/beluga-nlp/beluga/models/backend"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// This file is the Llama architecture as transformers' modeling_llama.py
// and modeling_qwen2.py compute it (eager attention), registered as two
// families that differ only in config switches:
//
//   - llama (Llama 2/3, SmolLM, TinyLlama …): q, k, v and o projections
//     with a bias only with attention_bias, the MLP's only with mlp_bias;
//   - qwen2 (Qwen2, Qwen2.5): q, k and v always with a bias, o without.
//
// Both: the token embedding (no position embedding); N pre-norm layers,
// x += o(attention(RMSNorm(x))) then x += down(SiLU(gate(m))·up(m)) with
// m = RMSNorm(x) (SwiGLU); attention is causal, q and k rotated by rotary
// position embeddings (θ = rope_theta, rotate_half form), with
// num_key_value_heads key/value heads each read by
// num_attention_heads/num_key_value_heads query heads (grouped-query
// attention); the final RMSNorm. …ForSequenceClassification: score (no
// bias) on the last real token's state; …ForCausalLM: lm_head, or the
// embedding itself with tie_word_embeddings (SmolLM, Qwen2.5's small ones).
// Dropout: attention_dropout on the attention probabilities
// (Run.AttentionRate); the architecture has no other. Positions are those
// of the real tokens (decoderPositions). rope_scaling (Llama 3.1's long
// context) and Qwen2's sliding window are refused, not approximated.

func init() {
	for _, f := range []struct{ modelType, class string }{{"llama", "Llama"}, {"qwen2", "Qwen2"}} {
		mt := f.modelType
		Register(Family{
			ModelType:  mt,
			Prefix:     "model",
			Classifier: f.class + "ForSequenceClassification",
			CausalLM:   f.class + "ForCausalLM",
			NewEncoder: func(cfg *checkpoint.Config) (Encoder, error) { return newLlamaEncoder(cfg) },
			NewPooler:  newLastToken,
			NewHead:    newScoreHead,
			Config: checkpoint.FamilyConfig{
				Keys: map[string]string{"attention_probs_dropout_prob": "attention_dropout"},
				// LlamaConfig's and Qwen2Config's defaults.
				Defaults: func(c *checkpoint.Config) {
					c.VocabSize, c.HiddenSize, c.IntermediateSize = 32000, 4096, 11008
					c.NumHiddenLayers, c.NumAttentionHeads, c.MaxPositionEmbeddings, c.HiddenAct = 32, 32, 2048, "silu"
					if mt == "qwen2" {
						c.VocabSize, c.IntermediateSize, c.MaxPositionEmbeddings = 151936, 22016, 32768
					}
				},
				Omit: []string{"hidden_dropout_prob", "attention_probs_dropout_prob", "type_vocab_size", "layer_norm_eps"},
			},
		})
	}
}

// LlamaConfig holds config.json's Llama and Qwen2 fields beside BERT's,
// with LlamaConfig's defaults.
type LlamaConfig struct {
	NumKeyValueHeads  int             `json:"num_key_value_heads"` // 0: num_attention_heads
	HeadDim           int             `json:"head_dim"`            // 0: hidden_size/num_attention_heads
	RMSNormEps        float64         `json:"rms_norm_eps"`
	RopeTheta         float64         `json:"rope_theta"`
	RopeScaling       json.RawMessage `json:"rope_scaling"`
	AttentionBias     bool            `json:"attention_bias"`
	MLPBias           bool            `json:"mlp_bias"`
	TieWordEmbeddings bool            `json:"tie_word_embeddings"`
	UseSlidingWindow  bool            `json:"use_sliding_window"`
	PadTokenID        *int            `json:"pad_token_id"`
}

// ParseLlamaConfig reads and checks the Llama fields of cfg (its Extra).
func ParseLlamaConfig(cfg *checkpoint.Config) (LlamaConfig, error) {
	a := LlamaConfig{RMSNormEps: 1e-6, RopeTheta: 10000}
	if err := parseExtra(cfg, &a); err != nil {
		return a, fmt.Errorf("%s config: %w", cfg.ModelType, err)
	}
	heads := cfg.NumAttentionHeads
	if a.NumKeyValueHeads == 0 {
		a.NumKeyValueHeads = heads
	}
	if a.HeadDim == 0 && heads > 0 {
		a.HeadDim = cfg.HiddenSize / heads
	}
	switch {
	case len(a.RopeScaling) > 0 && string(a.RopeScaling) != "null":
		return a, fmt.Errorf("field \"rope_scaling\": %s (only unscaled rotary embeddings are supported)", a.RopeScaling)
	case a.UseSlidingWindow:
		return a, fmt.Errorf("field \"use_sliding_window\": true is not supported")
	case a.NumKeyValueHeads <= 0 || heads%a.NumKeyValueHeads != 0:
		return a, fmt.Errorf("field \"num_key_value_heads\": %d does not divide num_attention_heads %d", a.NumKeyValueHeads, heads)
	case a.HeadDim <= 0 || a.HeadDim%2 != 0:
		return a, fmt.Errorf("field \"head_dim\": %d, want a positive even width (rotary embeddings rotate pairs)", a.HeadDim)
	case a.RMSNormEps <= 0 || a.RopeTheta <= 0:
		return a, fmt.Errorf("fields \"rms_norm_eps\", \"rope_theta\": %g, %g, want positive values", a.RMSNormEps, a.RopeTheta)
	case cfg.HiddenAct != "silu":
		return a, fmt.Errorf("field \"hidden_act\": %q (only silu, SwiGLU's, is supported)", cfg.HiddenAct)
	}
	return a, nil
}

type llamaLayer struct {
	inNorm, postNorm *Param
	q, k, v, o       modernLinear
	gate, up, down   modernLinear
}

// llamaEncoder is LlamaModel / Qwen2Model.
type llamaEncoder struct {
	cfg               checkpoint.Config
	a                 LlamaConfig
	qkvBias, oBias    bool
	heads, kvHeads, d int
	embed, norm       *Param
	layers            []llamaLayer
	z                 *modernBias // the biases a projection lacks
}

func newLlamaEncoder(cfg *checkpoint.Config) (*llamaEncoder, error) {
	a, err := ParseLlamaConfig(cfg)
	if err != nil {
		return nil, err
	}
	m := &llamaEncoder{cfg: *cfg, a: a, heads: cfg.NumAttentionHeads, kvHeads: a.NumKeyValueHeads, d: a.HeadDim,
		qkvBias: a.AttentionBias, oBias: a.AttentionBias}
	if cfg.ModelType == "qwen2" {
		m.qkvBias, m.oBias = true, false
	}
	n := max(m.heads*m.d, cfg.IntermediateSize, cfg.HiddenSize)
	m.z = &modernBias{h: cfg.HiddenSize, eps: a.RMSNormEps, zeros: make([]float32, n), discard: make([]float32, n)}
	return m, nil
}

func (m *llamaEncoder) HiddenSize() int   { return m.cfg.HiddenSize }
func (m *llamaEncoder) embedding() *Param { return m.embed }
func (m *llamaEncoder) tied() bool        { return m.a.TieWordEmbeddings }

func (m *llamaEncoder) Specs() []ParamSpec {
	c := &m.cfg
	h, f, qw, kw := c.HiddenSize, c.IntermediateSize, m.heads*m.d, m.kvHeads*m.d
	s := []ParamSpec{{Name: "model.embed_tokens.weight", Shape: []int{c.VocabSize, h}}}
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		s = append(s, modernLinearSpecs(p+"self_attn.q_proj", h, qw, m.qkvBias)...)
		s = append(s, modernLinearSpecs(p+"self_attn.k_proj", h, kw, m.qkvBias)...)
		s = append(s, modernLinearSpecs(p+"self_attn.v_proj", h, kw, m.qkvBias)...)
		s = append(s, modernLinearSpecs(p+"self_attn.o_proj", qw, h, m.oBias)...)
		s = append(s, modernLinearSpecs(p+"mlp.gate_proj", h, f, m.a.MLPBias)...)
		s = append(s, modernLinearSpecs(p+"mlp.up_proj", h, f, m.a.MLPBias)...)
		s = append(s, modernLinearSpecs(p+"mlp.down_proj", f, h, m.a.MLPBias)...)
		s = append(s, modernNormSpecs(p+"input_layernorm", h, false)...)
		s = append(s, modernNormSpecs(p+"post_attention_layernorm", h, false)...)
	}
	return append(s, modernNormSpecs("model.norm", h, false)...)
}

func (m *llamaEncoder) Bind(param func(string) *Param) {
	c := &m.cfg
	h, f, qw, kw := c.HiddenSize, c.IntermediateSize, m.heads*m.d, m.kvHeads*m.d
	m.embed, m.norm = param("model.embed_tokens.weight"), param("model.norm.weight")
	m.layers = make([]llamaLayer, c.NumHiddenLayers)
	for l := range m.layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		m.layers[l] = llamaLayer{
			inNorm: param(p + "input_layernorm.weight"), postNorm: param(p + "post_attention_layernorm.weight"),
			q: bindModernLinear(param, p+"self_attn.q_proj", h, qw), k: bindModernLinear(param, p+"self_attn.k_proj", h, kw),
			v: bindModernLinear(param, p+"self_attn.v_proj", h, kw), o: bindModernLinear(param, p+"self_attn.o_proj", qw, h),
			gate: bindModernLinear(param, p+"mlp.gate_proj", h, f), up: bindModernLinear(param, p+"mlp.up_proj", h, f),
			down: bindModernLinear(param, p+"mlp.down_proj", f, h),
		}
	}
}

// llamaActs holds one layer's activations for the backward pass.
type llamaActs struct {
	x, a, rstd1      []float32 // input, RMSNorm(x), its 1/rms
	q, k, v, ctx     []float32 // q and k rotated
	probs, attnKeep  []float32
	x1, mIn, rstd2   []float32 // x + attention, RMSNorm(x1)
	gate, up, sig, g []float32 // g = SiLU(gate)·up
}

type llamaPass struct {
	m        *llamaEncoder
	b        Batch
	pos      []int
	cos, sin []float32
	layers   []llamaActs
	last     []float32 // the last layer's output, the final norm's input
	rstd     []float32
	out      []float32
}

func (p *llamaPass) Hidden() []float32 { return p.out }

func (m *llamaEncoder) Forward(r *Run, b Batch) (EncoderPass, error) {
	p, _, err := m.forwardCached(r, b, nil, false)
	return p, err
}

func (m *llamaEncoder) forwardCached(r *Run, b Batch, past *kvCache, save bool) (EncoderPass, *kvCache, error) {
	c := &m.cfg
	h := c.HiddenSize
	pos, err := decoderStart(r, b, c, past, save, 0)
	if err != nil {
		return nil, nil, err
	}
	n := b.Size * b.SeqLen
	top := 0
	for _, q := range pos {
		top = max(top, q)
	}
	p := &llamaPass{m: m, b: b, pos: pos, layers: make([]llamaActs, len(m.layers))}
	p.cos, p.sin = ropeTable[float32](m.a.RopeTheta, top+1, m.d)
	x := r.Alloc(n * h)
	embedRows(x, m.embed.Value, b, h)
	var cache *kvCache
	x = r.stack(x, len(m.layers), func(l int, x []float32, lr *Run) []float32 {
		return m.layerForward(l, x, p, lr, &p.layers[l], past, saveTo(save, &cache))
	})
	p.last, p.out, p.rstd = x, r.Alloc(n*h), r.Alloc(n)
	rmsNormForward(p.out, p.rstd, x, m.norm.Value, h, m.a.RMSNormEps)
	return p, cache, nil
}

func (m *llamaEncoder) layerForward(l int, x []float32, p *llamaPass, r *Run, s *llamaActs, past *kvCache, cache **kvCache) []float32 {
	c := &m.cfg
	h, f := c.HiddenSize, c.IntermediateSize
	b := p.b
	n, L := b.Size*b.SeqLen, b.SeqLen
	qw, kw := m.heads*m.d, m.kvHeads*m.d
	P := &m.layers[l]
	be, eps := r.m.be, m.a.RMSNormEps
	at := func(row int) int { return p.pos[row] }
	s.x = x
	s.a, s.rstd1 = r.Alloc(n*h), r.Alloc(n)
	rmsNormForward(s.a, s.rstd1, x, P.inNorm.Value, h, eps)
	s.q, s.k, s.v = r.Alloc(n*qw), r.Alloc(n*kw), r.Alloc(n*kw)
	P.q.forward(be, m.z, s.q, s.a, n)
	P.k.forward(be, m.z, s.k, s.a, n)
	P.v.forward(be, m.z, s.v, s.a, n)
	rotaryAt(s.q, p.cos, p.sin, n, m.heads, m.d, false, at)
	rotaryAt(s.k, p.cos, p.sin, n, m.kvHeads, m.d, false, at)
	var pk, pv []float32
	pastN := 0
	if past != nil {
		pk, pv, pastN = past.k[l], past.v[l], past.n
	}
	if cache != nil {
		*cache = (*cache).extend(past, l, len(m.layers), L, kw, s.k, s.v)
	}
	if r.Train {
		s.probs = r.Alloc(b.Size * m.heads * L * (pastN + L))
		s.attnKeep = r.Keep(len(s.probs), r.AttentionRate)
	}
	s.ctx = r.Alloc(n * qw)
	causalAttentionForward(be, s.ctx, s.probs, s.q, s.k, s.v, pk, pv, pastN, b.Mask, s.attnKeep, b.Size, L, m.heads, m.kvHeads, m.d)
	s.x1 = r.Alloc(n * h)
	P.o.forward(be, m.z, s.x1, s.ctx, n)
	addTo(s.x1, x)
	s.mIn, s.rstd2 = r.Alloc(n*h), r.Alloc(n)
	rmsNormForward(s.mIn, s.rstd2, s.x1, P.postNorm.Value, h, eps)
	s.gate, s.up, s.sig, s.g = r.Alloc(n*f), r.Alloc(n*f), r.Alloc(n*f), r.Alloc(n*f)
	P.gate.forward(be, m.z, s.gate, s.mIn, n)
	P.up.forward(be, m.z, s.up, s.mIn, n)
	swigluForward(s.g, s.sig, s.gate, s.up)
	out := r.Alloc(n * h)
	P.down.forward(be, m.z, out, s.g, n)
	addTo(out, s.x1)
	return out
}

// Backward back-propagates dHidden (a buffer of the pool, which it takes
// over) through the final norm, the layers and the embedding.
func (p *llamaPass) Backward(r *Run, dHidden []float32) {
	m, b := p.m, p.b
	h, n := m.cfg.HiddenSize, b.Size*b.SeqLen
	pool := &r.m.pool
	defer pool.put(dHidden)
	dx := pool.get(n * h)
	defer pool.put(dx)
	rmsNormBackward(dx, m.norm.Grad, dHidden, p.last, p.rstd, m.norm.Value, h)
	for l := len(p.layers) - 1; l >= 0; l-- {
		m.layerBackward(l, dx, p, pool, r.m.be)
	}
	if pad := m.a.PadTokenID; pad != nil {
		// nn.Embedding(padding_idx=pad_token_id): its row learns nothing.
		for i, id := range b.IDs {
			if id == *pad {
				clear(dx[i*h : (i+1)*h])
			}
		}
	}
	embedBackward(m.embed.Grad, dx, b, h)
}

// layerBackward replaces dx, the gradient of layer l's output, by the
// gradient of its input.
func (m *llamaEncoder) layerBackward(l int, dx []float32, p *llamaPass, pool *bufPool, be backend.Backend) {
	c := &m.cfg
	h, f := c.HiddenSize, c.IntermediateSize
	b, s, P := p.b, &p.layers[l], &m.layers[l]
	n, L := b.Size*b.SeqLen, b.SeqLen
	qw, kw := m.heads*m.d, m.kvHeads*m.d
	at := func(row int) int { return p.pos[row] }
	// out = x1 + down(SiLU(gate(m))·up(m)), m = RMSNorm(x1)
	dg, dgate, dup := pool.get(n*f), pool.get(n*f), pool.get(n*f)
	defer pool.put(dg, dgate, dup)
	P.down.backward(be, m.z, dg, dx, s.g, n, false)
	swigluBackward(dgate, dup, dg, s.sig, s.gate, s.up)
	dm := pool.get(n * h)
	defer pool.put(dm)
	P.gate.backward(be, m.z, dm, dgate, s.mIn, n, false)
	P.up.backward(be, m.z, dm, dup, s.mIn, n, true)
	dx1 := pool.get(n * h)
	defer pool.put(dx1)
	rmsNormBackward(dx1, P.postNorm.Grad, dm, s.x1, s.rstd2, P.postNorm.Value, h)
	addTo(dx, dx1) // dx now holds d(x1)
	// x1 = x + o(attention(a)), a = RMSNorm(x)
	dctx, dq := pool.get(n*qw), pool.get(n*qw)
	dk, dv := pool.get(n*kw), pool.get(n*kw)
	defer pool.put(dctx, dq, dk, dv)
	P.o.backward(be, m.z, dctx, dx, s.ctx, n, false)
	causalAttentionBackward(be, pool, dq, dk, dv, dctx, s.probs, s.attnKeep, s.q, s.k, s.v, b.Size, L, m.heads, m.kvHeads, m.d)
	rotaryAt(dq, p.cos, p.sin, n, m.heads, m.d, true, at)
	rotaryAt(dk, p.cos, p.sin, n, m.kvHeads, m.d, true, at)
	P.q.backward(be, m.z, dm, dq, s.a, n, false)
	P.k.backward(be, m.z, dm, dk, s.a, n, true)
	P.v.backward(be, m.z, dm, dv, s.a, n, true)
	rmsNormBackward(dx1, P.inNorm.Grad, dm, s.x, s.rstd1, P.inNorm.Value, h)
	addTo(dx, dx1)
}

// TinyLlamaConfig is a Llama at BERT-tiny's scale for tests and
// benchmarks: hidden 128, 2 layers, 4 query heads sharing 2 key/value
// heads, SwiGLU width 384; qwen2 for Qwen2's switches (q/k/v biases, tied
// embeddings, θ 1e6).
func TinyLlamaConfig(modelType string, vocabSize int) *checkpoint.Config {
	extra := map[string]json.RawMessage{"num_key_value_heads": json.RawMessage("2"), "rms_norm_eps": json.RawMessage("1e-6")}
	if modelType == "qwen2" {
		extra["tie_word_embeddings"], extra["rope_theta"] = json.RawMessage("true"), json.RawMessage("1000000")
	}
	return &checkpoint.Config{ModelType: modelType, VocabSize: vocabSize, HiddenSize: 128, NumHiddenLayers: 2,
		NumAttentionHeads: 4, IntermediateSize: 384, MaxPositionEmbeddings: 2048, HiddenAct: "silu",
		InitializerRange: 0.02, Extra: extra}
}
