package models

import (
	"encoding/json"
	"fmt"
	"github.com/beluga-nlp/beluga/models/backend"
	"math"
	"strings"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// This file is the modernbert family (answerdotai/ModernBERT-base and
// -large) as transformers' modeling_modernbert.py computes it in its eager,
// padded path:
//
//   - embeddings: the token embedding (no position or type embeddings),
//     LayerNorm, dropout;
//   - N pre-norm layers: x += Wo(attention(attn_norm(x))), attn_norm being
//     the identity in layer 0, then x += Wo(GELU(in)·gate) with [in, gate] =
//     Wi(mlp_norm(x)) (GeGLU); attention takes q, k, v from one Wqkv
//     projection and rotates q and k by rotary position embeddings (θ =
//     global_rope_theta in global layers, local_rope_theta in local ones);
//     every global_attn_every_n_layers-th layer (layer 0 first) attends
//     globally, the others within a sliding window of local_attention/2
//     tokens either side;
//   - final_norm;
//   - ModernBertForSequenceClassification: the [CLS] state
//     (classifier_pooling "cls") or the mean of the tokens' states ("mean"),
//     then the head: ModernBertPredictionHead (dense, GELU, LayerNorm),
//     dropout (classifier_dropout), classifier — linear probing trains the
//     head on the cached pooled states;
//   - ModernBertForQuestionAnswering: the prediction head on every token,
//     dropout, and a classifier giving a start and an end logit.
//
// LayerNorms have a bias only with norm_bias, Wqkv and the attention's Wo
// only with attention_bias, Wi and the MLP's Wo only with mlp_bias, the
// head's dense layer only with classifier_bias, as in the checkpoints.
// Dropout follows BeLUGA's two rates (Run.HiddenRate for the embeddings and
// the MLP, Run.AttentionRate for the attention probabilities and the
// attention's output, as HuggingFace's attention_dropout does both); the
// config's embedding_, mlp_ and attention_dropout (0 in every released
// checkpoint) are not read.

func init() {
	Register(Family{
		ModelType:  "modernbert",
		Prefix:     "model",
		Classifier: "ModernBertForSequenceClassification",
		Span:       "ModernBertForQuestionAnswering",
		NewEncoder: func(cfg *checkpoint.Config) (Encoder, error) { return newModernEncoder(cfg) },
		NewPooler:  newModernPooler,
		NewHead:    newModernHead,
		NewSpanHead: func(cfg *checkpoint.Config, hidden int) Head {
			return newModernHead(cfg, hidden, 2)
		},
	})
}

// ModernBERTConfig holds config.json's ModernBERT fields, with
// HuggingFace's ModernBertConfig defaults for those a file leaves out.
type ModernBERTConfig struct {
	NormEps                float64 `json:"norm_eps"`
	NormBias               bool    `json:"norm_bias"`
	AttentionBias          bool    `json:"attention_bias"`
	MLPBias                bool    `json:"mlp_bias"`
	ClassifierBias         bool    `json:"classifier_bias"`
	HiddenActivation       string  `json:"hidden_activation"`
	ClassifierActivation   string  `json:"classifier_activation"`
	ClassifierPooling      string  `json:"classifier_pooling"`
	GlobalRopeTheta        float64 `json:"global_rope_theta"`
	LocalRopeTheta         float64 `json:"local_rope_theta"`
	GlobalAttnEveryNLayers int     `json:"global_attn_every_n_layers"`
	LocalAttention         int     `json:"local_attention"`
	EmbeddingDropout       float64 `json:"embedding_dropout"`
	AttentionDropout       float64 `json:"attention_dropout"`
	MLPDropout             float64 `json:"mlp_dropout"`
	ClassifierDropout      float64 `json:"classifier_dropout"`
	// LayerTypes is "full_attention" or "sliding_attention" per layer:
	// config.json's layer_types where newer transformers write it, else
	// derived from global_attn_every_n_layers.
	LayerTypes []string `json:"layer_types"`
	// RopeParameters is newer transformers' form of the two θ.
	RopeParameters map[string]struct {
		RopeType  string   `json:"rope_type"`
		RopeTheta *float64 `json:"rope_theta"`
	} `json:"rope_parameters"`
}

// ParseModernBERTConfig reads the ModernBERT fields of cfg (kept in its
// Extra) and checks them.
func ParseModernBERTConfig(cfg *checkpoint.Config) (ModernBERTConfig, error) {
	a := ModernBERTConfig{NormEps: 1e-5, HiddenActivation: "gelu", ClassifierActivation: "gelu",
		ClassifierPooling: "cls", GlobalRopeTheta: 160000, LocalRopeTheta: 10000,
		GlobalAttnEveryNLayers: 3, LocalAttention: 128}
	if len(cfg.Extra) > 0 {
		raw, err := json.Marshal(cfg.Extra)
		if err != nil {
			return a, err
		}
		if err := checkpoint.UnmarshalFields(raw, &a); err != nil {
			return a, fmt.Errorf("modernbert config: %w", err)
		}
	}
	for kind, p := range a.RopeParameters {
		if p.RopeType != "" && p.RopeType != "default" {
			return a, fmt.Errorf("field \"rope_parameters\": %s rope_type %q (only the default rotary embedding is supported)", kind, p.RopeType)
		}
		if p.RopeTheta == nil {
			continue
		}
		switch kind {
		case "full_attention":
			a.GlobalRopeTheta = *p.RopeTheta
		case "sliding_attention":
			a.LocalRopeTheta = *p.RopeTheta
		}
	}
	for _, f := range []struct{ name, v string }{{"hidden_activation", a.HiddenActivation}, {"classifier_activation", a.ClassifierActivation}} {
		if f.v != "gelu" {
			return a, fmt.Errorf("field %q: %q (only the exact erf gelu is supported)", f.name, f.v)
		}
	}
	if a.ClassifierPooling != "cls" && a.ClassifierPooling != "mean" {
		return a, fmt.Errorf("field \"classifier_pooling\": %q, want \"cls\" or \"mean\"", a.ClassifierPooling)
	}
	if a.GlobalAttnEveryNLayers <= 0 {
		return a, fmt.Errorf("field \"global_attn_every_n_layers\": %d, want a positive count", a.GlobalAttnEveryNLayers)
	}
	if a.LocalAttention < 0 {
		return a, fmt.Errorf("field \"local_attention\": %d, want a window of at least 0 tokens", a.LocalAttention)
	}
	if a.NormEps <= 0 || a.GlobalRopeTheta <= 0 || a.LocalRopeTheta <= 0 {
		return a, fmt.Errorf("fields \"norm_eps\", \"global_rope_theta\", \"local_rope_theta\": %g, %g, %g, want positive values", a.NormEps, a.GlobalRopeTheta, a.LocalRopeTheta)
	}
	if (cfg.HiddenSize/max(cfg.NumAttentionHeads, 1))%2 != 0 {
		return a, fmt.Errorf("field \"num_attention_heads\": head width %d is odd; rotary embeddings need an even one", cfg.HiddenSize/cfg.NumAttentionHeads)
	}
	if a.LayerTypes == nil {
		for l := 0; l < cfg.NumHiddenLayers; l++ {
			t := "full_attention"
			if l%a.GlobalAttnEveryNLayers != 0 {
				t = "sliding_attention"
			}
			a.LayerTypes = append(a.LayerTypes, t)
		}
	}
	if len(a.LayerTypes) != cfg.NumHiddenLayers {
		return a, fmt.Errorf("field \"layer_types\": %d types for %d layers", len(a.LayerTypes), cfg.NumHiddenLayers)
	}
	for l, t := range a.LayerTypes {
		if t != "full_attention" && t != "sliding_attention" {
			return a, fmt.Errorf("field \"layer_types\": layer %d is %q, want \"full_attention\" or \"sliding_attention\"", l, t)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"embedding_dropout", a.EmbeddingDropout}, {"attention_dropout", a.AttentionDropout},
		{"mlp_dropout", a.MLPDropout}, {"classifier_dropout", a.ClassifierDropout}} {
		if f.v < 0 || f.v >= 1 {
			return a, fmt.Errorf("field %q: %g, want a rate in [0, 1)", f.name, f.v)
		}
	}
	return a, nil
}

// window is layer l's sliding window, in tokens either side (−1: global).
func (a *ModernBERTConfig) window(l int) int {
	if a.LayerTypes[l] == "full_attention" {
		return -1
	}
	return a.LocalAttention / 2
}

// modernNorm is a LayerNorm; b is nil without norm_bias.
type modernNorm struct{ w, b *Param }

// modernLinear is an nn.Linear; b is nil without a bias.
type modernLinear struct {
	w, b    *Param
	in, out int
}

type modernLayer struct {
	attnNorm          modernNorm // w nil in layer 0 (nn.Identity)
	wqkv, wo, wi, wo2 modernLinear
	mlpNorm           modernNorm
}

// modernEncoder is ModernBertModel: embeddings, layers, final_norm.
type modernEncoder struct {
	cfg       checkpoint.Config
	a         ModernBERTConfig
	tok       *Param
	embNorm   modernNorm
	layers    []modernLayer
	finalNorm modernNorm
	z         *modernBias
}

// modernBias stands for the biases a layer lacks (zeros) and receives
// their gradients (discard), with the LayerNorms' width and eps.
type modernBias struct {
	h              int
	eps            float64
	zeros, discard []float32
}

func newModernBias(cfg *checkpoint.Config, a *ModernBERTConfig) *modernBias {
	n := max(3*cfg.HiddenSize, 2*cfg.IntermediateSize)
	return &modernBias{h: cfg.HiddenSize, eps: a.NormEps, zeros: make([]float32, n), discard: make([]float32, n)}
}

func newModernEncoder(cfg *checkpoint.Config) (*modernEncoder, error) {
	a, err := ParseModernBERTConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &modernEncoder{cfg: *cfg, a: a, z: newModernBias(cfg, &a)}, nil
}

func (m *modernEncoder) HiddenSize() int { return m.cfg.HiddenSize }

// modernOutStd is the deviation ModernBertPreTrainedModel._init_weights
// draws output projections (attention and MLP Wo, the head's dense layer)
// with: initializer_range/√(2·layers). The classifier's is hidden^−½
// (modernClassifier); the rest use initializer_range. HuggingFace truncates
// each normal at ±initializer_cutoff_factor deviations; these are not
// truncated.
func modernOutStd(c *checkpoint.Config) float64 {
	return c.InitializerRange / math.Sqrt(2*float64(c.NumHiddenLayers))
}

// withStd sets the deviation of the weights (not biases) among specs.
func withStd(specs []ParamSpec, std float64) []ParamSpec {
	for i := range specs {
		if !specs[i].Norm && strings.HasSuffix(specs[i].Name, ".weight") {
			specs[i].Std = std
		}
	}
	return specs
}

// modernClassifier is the classifier (dropout, linear) with its weights
// drawn at hidden^−½, as ModernBERT's _init_weights draws them.
type modernClassifier struct{ *linearHead }

func (h modernClassifier) Specs() []ParamSpec {
	return withStd(h.linearHead.Specs(), math.Pow(float64(h.In()), -0.5))
}

// modernNormSpecs are a LayerNorm(h, bias=norm_bias)'s parameters.
func modernNormSpecs(name string, h int, bias bool) []ParamSpec {
	s := []ParamSpec{{Name: name + ".weight", Shape: []int{h}, Norm: true}}
	if bias {
		s = append(s, ParamSpec{Name: name + ".bias", Shape: []int{h}, Norm: true})
	}
	return s
}

// modernLinearSpecs are an nn.Linear(in, out, bias)'s parameters.
func modernLinearSpecs(name string, in, out int, bias bool) []ParamSpec {
	s := []ParamSpec{{Name: name + ".weight", Shape: []int{out, in}}}
	if bias {
		s = append(s, ParamSpec{Name: name + ".bias", Shape: []int{out}})
	}
	return s
}

func (m *modernEncoder) Specs() []ParamSpec {
	c, a := &m.cfg, &m.a
	h, f := c.HiddenSize, c.IntermediateSize
	s := []ParamSpec{{Name: "model.embeddings.tok_embeddings.weight", Shape: []int{c.VocabSize, h}}}
	s = append(s, modernNormSpecs("model.embeddings.norm", h, a.NormBias)...)
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		if l > 0 {
			s = append(s, modernNormSpecs(p+"attn_norm", h, a.NormBias)...)
		}
		s = append(s, modernLinearSpecs(p+"attn.Wqkv", h, 3*h, a.AttentionBias)...)
		s = append(s, withStd(modernLinearSpecs(p+"attn.Wo", h, h, a.AttentionBias), modernOutStd(c))...)
		s = append(s, modernNormSpecs(p+"mlp_norm", h, a.NormBias)...)
		s = append(s, modernLinearSpecs(p+"mlp.Wi", h, 2*f, a.MLPBias)...)
		s = append(s, withStd(modernLinearSpecs(p+"mlp.Wo", f, h, a.MLPBias), modernOutStd(c))...)
	}
	return append(s, modernNormSpecs("model.final_norm", h, a.NormBias)...)
}

func bindModernNorm(param func(string) *Param, name string) modernNorm {
	return modernNorm{w: param(name + ".weight"), b: param(name + ".bias")}
}

func bindModernLinear(param func(string) *Param, name string, in, out int) modernLinear {
	return modernLinear{w: param(name + ".weight"), b: param(name + ".bias"), in: in, out: out}
}

func (m *modernEncoder) Bind(param func(string) *Param) {
	c := &m.cfg
	h, f := c.HiddenSize, c.IntermediateSize
	m.tok = param("model.embeddings.tok_embeddings.weight")
	m.embNorm = bindModernNorm(param, "model.embeddings.norm")
	m.layers = make([]modernLayer, c.NumHiddenLayers)
	for l := range m.layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		L := &m.layers[l]
		if l > 0 {
			L.attnNorm = bindModernNorm(param, p+"attn_norm")
		}
		L.wqkv = bindModernLinear(param, p+"attn.Wqkv", h, 3*h)
		L.wo = bindModernLinear(param, p+"attn.Wo", h, h)
		L.mlpNorm = bindModernNorm(param, p+"mlp_norm")
		L.wi = bindModernLinear(param, p+"mlp.Wi", h, 2*f)
		L.wo2 = bindModernLinear(param, p+"mlp.Wo", f, h)
	}
	m.finalNorm = bindModernNorm(param, "model.final_norm")
}

// bias returns a linear layer's bias and its gradient: zeros and a
// discarded gradient without one.
func (z *modernBias) bias(b *Param, out int) (v, g []float32) {
	if b != nil {
		return b.Value, b.Grad
	}
	return z.zeros[:out], z.discard[:out]
}

func (l modernLinear) forward(be backend.Backend, z *modernBias, y, x []float32, rows int) {
	bv, _ := z.bias(l.b, l.out)
	linearForward(be, y, x, l.w.Value, bv, rows, l.in, l.out)
}

// backward adds the weight and bias gradients and sets dx (adds into it
// with add).
func (l modernLinear) backward(be backend.Backend, z *modernBias, dx, dy, x []float32, rows int, add bool) {
	_, bg := z.bias(l.b, l.out)
	if add {
		linearBackwardAdd(be, dx, l.w.Grad, bg, dy, x, l.w.Value, rows, l.in, l.out)
		return
	}
	linearBackward(be, dx, l.w.Grad, bg, dy, x, l.w.Value, rows, l.in, l.out)
}

// forward is the LayerNorm, with β zeros without norm_bias.
func (n modernNorm) forward(be backend.Backend, z *modernBias, y, xhat, rstd, x []float32) {
	beta := z.zeros[:z.h]
	if n.b != nil {
		beta = n.b.Value
	}
	layerNormForward(be, y, xhat, rstd, x, n.w.Value, beta, z.h, z.eps)
}

func (n modernNorm) backward(be backend.Backend, z *modernBias, dx, dy, xhat, rstd []float32) {
	dbeta := z.discard[:z.h]
	if n.b != nil {
		dbeta = n.b.Grad
	}
	layerNormBackward(be, dx, n.w.Grad, dbeta, dy, xhat, rstd, n.w.Value, z.h)
}

// modernLayerActs holds one layer's activations for the backward pass.
type modernLayerActs struct {
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

// modernEncPass is one forward pass of the encoder.
type modernEncPass struct {
	m                *modernEncoder
	b                Batch
	ids              []int // b.IDs with padding read as pad_token_id
	embXhat, embRstd []float32
	embKeep          []float32
	layers           []modernLayerActs
	cosG, sinG       []float32 // rotary tables of global and local layers
	cosL, sinL       []float32
	finXhat, finRstd []float32
	out              []float32 // final_norm's output
}

func (p *modernEncPass) Hidden() []float32 { return p.out }

// rope returns layer l's rotary tables.
func (p *modernEncPass) rope(l int) (cos, sin []float32) {
	if p.m.a.LayerTypes[l] == "full_attention" {
		return p.cosG, p.sinG
	}
	return p.cosL, p.sinL
}

func (m *modernEncoder) Forward(r *Run, b Batch) (EncoderPass, error) {
	c, a := &m.cfg, &m.a
	h, L := c.HiddenSize, b.SeqLen
	if len(b.IDs) != b.Size*L || len(b.Mask) != b.Size*L {
		return nil, fmt.Errorf("batch of %d×%d has %d ids and %d mask values", b.Size, L, len(b.IDs), len(b.Mask))
	}
	n := b.Size * L
	p := &modernEncPass{m: m, b: b, ids: make([]int, n)}
	x := r.Alloc(n * h)
	tok := m.tok.Value
	for row := 0; row < n; row++ {
		id := b.IDs[row]
		// Batches pad with 0; HuggingFace's tokenizer pads with
		// pad_token_id, whose embedding padding positions carry (the span
		// head reads them).
		if b.Mask[row] == 0 {
			id = c.PadTokenID
		}
		if id < 0 || id >= c.VocabSize {
			return nil, fmt.Errorf("token id %d outside the vocabulary of %d", id, c.VocabSize)
		}
		p.ids[row] = id
		copy(x[row*h:(row+1)*h], tok[id*h:(id+1)*h])
	}
	p.embXhat, p.embRstd = r.Alloc(n*h), r.Alloc(n)
	m.embNorm.forward(r.m.be, m.z, x, p.embXhat, p.embRstd, x)
	p.embKeep = r.Keep(n*h, r.HiddenRate)
	applyKeep(r.m.be, x, p.embKeep)
	d := h / c.NumAttentionHeads
	p.cosG, p.sinG = ropeTable[float32](a.GlobalRopeTheta, L, d)
	p.cosL, p.sinL = ropeTable[float32](a.LocalRopeTheta, L, d)
	p.layers = make([]modernLayerActs, len(m.layers))
	x = r.stack(x, len(m.layers), func(l int, x []float32, lr *Run) []float32 {
		return m.layerForward(l, x, p, lr, &p.layers[l])
	})
	p.out, p.finXhat, p.finRstd = r.Alloc(n*h), r.Alloc(n*h), r.Alloc(n)
	m.finalNorm.forward(r.m.be, m.z, p.out, p.finXhat, p.finRstd, x)
	return p, nil
}

// layerForward runs layer l on x, keeping its activations in s; its buffers
// and dropout come from r.
func (m *modernEncoder) layerForward(l int, x []float32, p *modernEncPass, r *Run, s *modernLayerActs) []float32 {
	c := &m.cfg
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	b := p.b
	n, L, d := b.Size*b.SeqLen, b.SeqLen, h/heads
	P := &m.layers[l]
	pool, be := &r.m.pool, r.m.be
	s.x, s.a = x, x
	if l > 0 {
		s.a, s.xhatA, s.rstdA = r.Alloc(n*h), r.Alloc(n*h), r.Alloc(n)
		P.attnNorm.forward(r.m.be, m.z, s.a, s.xhatA, s.rstdA, x)
	}
	qkv := pool.get(n * 3 * h)
	defer pool.put(qkv)
	P.wqkv.forward(be, m.z, qkv, s.a, n)
	// view(bs, seq, 3, heads, d): q, k, v side by side in each row
	s.q, s.k, s.v = r.Alloc(n*h), r.Alloc(n*h), r.Alloc(n*h)
	for row := 0; row < n; row++ {
		src := qkv[row*3*h:]
		copy(s.q[row*h:(row+1)*h], src[:h])
		copy(s.k[row*h:(row+1)*h], src[h:2*h])
		copy(s.v[row*h:(row+1)*h], src[2*h:3*h])
	}
	cos, sin := p.rope(l)
	rotary(s.q, cos, sin, b.Size, L, heads, d, false)
	rotary(s.k, cos, sin, b.Size, L, heads, d, false)
	s.probs = r.Alloc(b.Size * heads * L * L)
	s.attnKeep = r.Keep(len(s.probs), r.AttentionRate)
	s.ctx = r.Alloc(n * h)
	windowAttentionForward(be, s.ctx, s.probs, s.q, s.k, s.v, b.Mask, s.attnKeep, b.Size, L, heads, d, m.a.window(l))
	s.x1 = r.Alloc(n * h)
	P.wo.forward(be, m.z, s.x1, s.ctx, n)
	s.outKeep = r.Keep(n*h, r.AttentionRate)
	keptAdd(be, s.x1, s.outKeep, x)
	s.mIn, s.xhatM, s.rstdM = r.Alloc(n*h), r.Alloc(n*h), r.Alloc(n)
	P.mlpNorm.forward(r.m.be, m.z, s.mIn, s.xhatM, s.rstdM, s.x1)
	s.u = r.Alloc(n * 2 * f)
	P.wi.forward(be, m.z, s.u, s.mIn, n)
	s.act, s.g = r.Alloc(n*f), r.Alloc(n*f)
	gegluForward(r.m.be, s.g, s.act, s.u, n, f)
	s.mlpKeep = r.Keep(n*f, r.HiddenRate)
	applyKeep(be, s.g, s.mlpKeep)
	out := r.Alloc(n * h)
	P.wo2.forward(be, m.z, out, s.g, n)
	addTo(out, s.x1)
	return out
}

// Backward back-propagates dHidden (a buffer of the pool, which it takes
// over) through final_norm, the layers and the embeddings.
func (p *modernEncPass) Backward(r *Run, dHidden []float32) {
	m, b := p.m, p.b
	h, n := m.cfg.HiddenSize, b.Size*b.SeqLen
	pool := &r.m.pool
	defer pool.put(dHidden)
	dx := pool.get(n * h)
	defer pool.put(dx)
	m.finalNorm.backward(r.m.be, m.z, dx, dHidden, p.finXhat, p.finRstd)
	for l := len(p.layers) - 1; l >= 0; l-- {
		m.layerBackward(l, dx, p, pool, r.m.be)
	}
	applyKeep(r.m.be, dx, p.embKeep)
	de := dHidden // reuse
	m.embNorm.backward(r.m.be, m.z, de, dx, p.embXhat, p.embRstd)
	tg := m.tok.Grad
	pad := m.cfg.PadTokenID
	for row, id := range p.ids {
		// nn.Embedding(padding_idx=pad_token_id): the padding row learns nothing
		if id == pad {
			continue
		}
		dst := tg[id*h : (id+1)*h]
		for k, v := range de[row*h : (row+1)*h] {
			dst[k] += v
		}
	}
}

// layerBackward replaces dx, the gradient of layer l's output, by the
// gradient of its input.
func (m *modernEncoder) layerBackward(l int, dx []float32, p *modernEncPass, pool *bufPool, be backend.Backend) {
	c := &m.cfg
	h, f, heads := c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads
	b, s, P := p.b, &p.layers[l], &m.layers[l]
	n, L, d := b.Size*b.SeqLen, b.SeqLen, h/heads
	// out = x1 + Wo(drop(GELU(in)·gate)), [in, gate] = Wi(mlp_norm(x1))
	dg := pool.get(n * f)
	defer pool.put(dg)
	P.wo2.backward(be, m.z, dg, dx, s.g, n, false)
	applyKeep(be, dg, s.mlpKeep)
	du := pool.get(n * 2 * f)
	defer pool.put(du)
	gegluBackward(be, du, dg, s.act, s.u, n, f)
	dm := pool.get(n * h)
	defer pool.put(dm)
	P.wi.backward(be, m.z, dm, du, s.mIn, n, false)
	dx1 := pool.get(n * h)
	defer pool.put(dx1)
	P.mlpNorm.backward(be, m.z, dx1, dm, s.xhatM, s.rstdM)
	for i := range dx {
		dx[i] += dx1[i] // dx now holds d(x1)
	}
	// x1 = x + drop(Wo(attention(a))), a = attn_norm(x), or x in layer 0
	do := dx1 // reuse: the gradient of Wo's output
	copy(do, dx)
	applyKeep(be, do, s.outKeep)
	dctx := pool.get(n * h)
	defer pool.put(dctx)
	P.wo.backward(be, m.z, dctx, do, s.ctx, n, false)
	dq, dk, dv := pool.get(n*h), pool.get(n*h), pool.get(n*h)
	defer pool.put(dq, dk, dv)
	attentionBackward(be, dq, dk, dv, dctx, s.probs, s.attnKeep, s.q, s.k, s.v, b.Size, L, heads, d)
	cos, sin := p.rope(l)
	rotary(dq, cos, sin, b.Size, L, heads, d, true)
	rotary(dk, cos, sin, b.Size, L, heads, d, true)
	dqkv := pool.get(n * 3 * h)
	defer pool.put(dqkv)
	for row := 0; row < n; row++ {
		dst := dqkv[row*3*h:]
		copy(dst[:h], dq[row*h:(row+1)*h])
		copy(dst[h:2*h], dk[row*h:(row+1)*h])
		copy(dst[2*h:3*h], dv[row*h:(row+1)*h])
	}
	if l == 0 {
		P.wqkv.backward(be, m.z, dx, dqkv, s.a, n, true)
		return
	}
	da := dm // reuse
	P.wqkv.backward(be, m.z, da, dqkv, s.a, n, false)
	dn := dctx // reuse
	P.attnNorm.backward(be, m.z, dn, da, s.xhatA, s.rstdA)
	addTo(dx, dn)
}

// modernPredictionHead is ModernBertPredictionHead: norm(GELU(dense(x))).
type modernPredictionHead struct {
	z      *modernBias
	outStd float64 // the dense layer's initial deviation
	dense  modernLinear
	norm   modernNorm
	a      ModernBERTConfig
}

func newModernPredictionHead(cfg *checkpoint.Config) *modernPredictionHead {
	a, _ := ParseModernBERTConfig(cfg) // NewEncoder has checked it
	h := cfg.HiddenSize
	return &modernPredictionHead{z: newModernBias(cfg, &a), a: a, dense: modernLinear{in: h, out: h}, outStd: modernOutStd(cfg)}
}

func (hd *modernPredictionHead) specs() []ParamSpec {
	h := hd.z.h
	return append(withStd(modernLinearSpecs("head.dense", h, h, hd.a.ClassifierBias), hd.outStd), modernNormSpecs("head.norm", h, hd.a.NormBias)...)
}

func (hd *modernPredictionHead) bind(param func(string) *Param) {
	hd.dense = bindModernLinear(param, "head.dense", hd.z.h, hd.z.h)
	hd.norm = bindModernNorm(param, "head.norm")
}

// modernHeadActs is one pass of the prediction head.
type modernHeadActs struct {
	x, u, g    []float32 // input, dense output, its GELU
	xhat, rstd []float32
	y          []float32 // output
}

func (hd *modernPredictionHead) forward(r *Run, x []float32, rows int) *modernHeadActs {
	h := hd.z.h
	s := &modernHeadActs{x: x, u: r.Alloc(rows * h), g: r.Alloc(rows * h),
		xhat: r.Alloc(rows * h), rstd: r.Alloc(rows), y: r.Alloc(rows * h)}
	hd.dense.forward(r.m.be, hd.z, s.u, x, rows)
	geluForward(r.m.be, s.g, s.u)
	hd.norm.forward(r.m.be, hd.z, s.y, s.xhat, s.rstd, s.g)
	return s
}

// backward adds the head's gradients and sets dx (when not nil) from dy.
func (hd *modernPredictionHead) backward(r *Run, s *modernHeadActs, dy, dx []float32, rows int) {
	pool := &r.m.pool
	dg := pool.get(len(s.g))
	defer pool.put(dg)
	hd.norm.backward(r.m.be, hd.z, dg, dy, s.xhat, s.rstd)
	geluBackward(r.m.be, dg, dg, s.u)
	hd.dense.backward(r.m.be, hd.z, dx, dg, s.x, rows, false)
}

// modernPooler is ModernBertForSequenceClassification's pooling: the
// [CLS] state, or the mean of the states over the attention mask. It has no
// parameters: the prediction head after it lies outside the "model." prefix
// and, like DeBERTa's ContextPooler, trains with the classifier
// (modernHead), so that linear probing caches the pooled final states.
type modernPooler struct {
	h    int
	mean bool
}

func newModernPooler(cfg *checkpoint.Config, hidden int) Pooler {
	a, _ := ParseModernBERTConfig(cfg) // NewEncoder has checked it
	return modernPooler{h: hidden, mean: a.ClassifierPooling == "mean"}
}

func (p modernPooler) Specs() []ParamSpec       { return nil }
func (p modernPooler) Bind(func(string) *Param) {}
func (p modernPooler) Width() int               { return p.h }

func (p modernPooler) Forward(r *Run, hidden []float32, b Batch) PoolPass {
	h, L := p.h, b.SeqLen
	if !p.mean {
		return firstTokenPass{f: firstToken{h: h}, b: b, x: firstTokens(r, hidden, b, h)}
	}
	pp := &modernMeanPass{h: h, b: b, pooled: r.Alloc(b.Size * h)}
	clear(pp.pooled)
	for i := 0; i < b.Size; i++ {
		dst := pp.pooled[i*h : (i+1)*h]
		var cnt float32
		for j := 0; j < L; j++ {
			mk := b.Mask[i*L+j]
			if mk == 0 {
				continue
			}
			cnt += mk
			for k, v := range hidden[(i*L+j)*h : (i*L+j+1)*h] {
				dst[k] += v * mk
			}
		}
		for k := range dst {
			dst[k] /= cnt
		}
	}
	return pp
}

// modernMeanPass is a pass of mean pooling: Σ mask·state / Σ mask per row.
type modernMeanPass struct {
	h      int
	b      Batch
	pooled []float32
}

func (pp *modernMeanPass) Features() []float32 { return pp.pooled }

func (pp *modernMeanPass) Backward(_ *Run, dFeatures, dHidden []float32) {
	h, L, b := pp.h, pp.b.SeqLen, pp.b
	for i := 0; i < b.Size; i++ {
		var cnt float32
		for j := 0; j < L; j++ {
			cnt += b.Mask[i*L+j]
		}
		src := dFeatures[i*h : (i+1)*h]
		for j := 0; j < L; j++ {
			mk := b.Mask[i*L+j]
			if mk == 0 {
				continue
			}
			dst := dHidden[(i*L+j)*h : (i*L+j+1)*h]
			for k, v := range src {
				dst[k] += v * mk / cnt
			}
		}
	}
}

// modernHead is ModernBertPredictionHead, dropout (classifier_dropout) and
// the classifier: on the pooled states, the sequence classifier's head
// (labels outputs); on every token's state, ModernBertForQuestionAnswering's
// (a start and an end logit).
type modernHead struct {
	head *modernPredictionHead
	out  modernClassifier
}

func newModernHead(cfg *checkpoint.Config, hidden, labels int) Head {
	hd := newModernPredictionHead(cfg)
	return &modernHead{head: hd,
		out: modernClassifier{&linearHead{dropout: fixedDropout(hd.a.ClassifierDropout), out: newLinear("classifier", hidden, labels)}}}
}

func (s *modernHead) Specs() []ParamSpec { return append(s.head.specs(), s.out.Specs()...) }
func (s *modernHead) Bind(param func(string) *Param) {
	s.head.bind(param)
	s.out.Bind(param)
}
func (s *modernHead) In() int  { return s.head.z.h }
func (s *modernHead) Out() int { return s.out.Out() }

func (s *modernHead) Forward(r *Run, x []float32, rows int) HeadPass {
	acts := s.head.forward(r, x, rows)
	return &modernHeadPass{s: s, rows: rows, acts: acts, out: s.out.Forward(r, acts.y, rows)}
}

type modernHeadPass struct {
	s    *modernHead
	rows int
	acts *modernHeadActs
	out  HeadPass
}

func (p *modernHeadPass) Out() []float32 { return p.out.Out() }

func (p *modernHeadPass) Backward(r *Run, dOut, dx []float32) {
	pool := &r.m.pool
	dy := pool.get(len(p.acts.y))
	defer pool.put(dy)
	p.out.Backward(r, dOut, dy)
	p.s.head.backward(r, p.acts, dy, dx, p.rows)
}

// TinyModernBERTConfig is a ModernBERT at BERT-tiny's scale for tests and
// benchmarks: hidden 128, 3 layers (global, local, local), 2 heads, GeGLU
// width 256 (Wi has BERT-tiny's 512 outputs), ModernBERT's defaults
// otherwise (a window of 128 tokens, no biases, no dropout).
func TinyModernBERTConfig(vocabSize int) *checkpoint.Config {
	return &checkpoint.Config{ModelType: "modernbert", VocabSize: vocabSize, HiddenSize: 128, NumHiddenLayers: 3,
		NumAttentionHeads: 2, IntermediateSize: 256, MaxPositionEmbeddings: 8192, TypeVocabSize: 2,
		LayerNormEps: 1e-5, HiddenAct: "gelu", InitializerRange: 0.02, Extra: map[string]json.RawMessage{}}
}
