package models

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// ModernBERT is HuggingFace's ModernBERT (model_type "modernbert",
// answerdotai/ModernBERT-base and -large) as transformers'
// modeling_modernbert.py computes it in its eager, padded path:
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
//     ModernBertPredictionHead (dense, classifier_activation, LayerNorm),
//     dropout, classifier; or ModernBertForQuestionAnswering
//     (NewModernBERTSpan): the same head on every token and a classifier
//     giving a start and an end logit.
//
// LayerNorms have a bias only with norm_bias, Wqkv and the attention's Wo
// only with attention_bias, Wi and the MLP's Wo only with mlp_bias, the
// head's dense layer only with classifier_bias, as in the checkpoints.
type ModernBERT struct {
	Config checkpoint.Config
	// Arch is the ModernBERT part of config.json.
	Arch      ModernBERTConfig
	span      bool // the question-answering head: logits per token
	numLabels int
	params    []*Param
	byName    map[string]*Param
	zeros     []float32 // the β of bias-free LayerNorms and linear layers
	discard   []float32 // their gradient, thrown away
	frozen    bool
	dropout   *initStream
	pool      bufPool
}

// ModernBERTConfig holds config.json's ModernBERT fields, with
// HuggingFace's ModernBertConfig defaults for those a file leaves out.
type ModernBERTConfig struct {
	NormEps                 float64 `json:"norm_eps"`
	NormBias                bool    `json:"norm_bias"`
	AttentionBias           bool    `json:"attention_bias"`
	MLPBias                 bool    `json:"mlp_bias"`
	ClassifierBias          bool    `json:"classifier_bias"`
	HiddenActivation        string  `json:"hidden_activation"`
	ClassifierActivation    string  `json:"classifier_activation"`
	ClassifierPooling       string  `json:"classifier_pooling"`
	GlobalRopeTheta         float64 `json:"global_rope_theta"`
	LocalRopeTheta          float64 `json:"local_rope_theta"`
	GlobalAttnEveryNLayers  int     `json:"global_attn_every_n_layers"`
	LocalAttention          int     `json:"local_attention"`
	EmbeddingDropout        float64 `json:"embedding_dropout"`
	AttentionDropout        float64 `json:"attention_dropout"`
	MLPDropout              float64 `json:"mlp_dropout"`
	ClassifierDropout       float64 `json:"classifier_dropout"`
	InitializerCutoffFactor float64 `json:"initializer_cutoff_factor"`
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
		GlobalAttnEveryNLayers: 3, LocalAttention: 128, InitializerCutoffFactor: 2}
	if len(cfg.Extra) > 0 {
		raw, err := json.Marshal(cfg.Extra)
		if err != nil {
			return a, err
		}
		if err := json.Unmarshal(raw, &a); err != nil {
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

// theta is layer l's rotary base.
func (a *ModernBERTConfig) theta(l int) float64 {
	if a.LayerTypes[l] == "full_attention" {
		return a.GlobalRopeTheta
	}
	return a.LocalRopeTheta
}

type paramShape struct {
	name  string
	shape []int
	init  string // the _init_weights group: "in", "out", "embedding", "final_out", "norm", "bias"
}

// modernBERTParamShapes lists the parameters of a
// ModernBertForSequenceClassification (or ModernBertForQuestionAnswering,
// labels 2) in HuggingFace's order.
func modernBERTParamShapes(c *checkpoint.Config, a *ModernBERTConfig, labels int) []paramShape {
	h, f := c.HiddenSize, c.IntermediateSize
	var out []paramShape
	add := func(name string, init string, shape ...int) { out = append(out, paramShape{name, shape, init}) }
	norm := func(name string) {
		add(name+".weight", "norm", h)
		if a.NormBias {
			add(name+".bias", "bias", h)
		}
	}
	linear := func(name, init string, bias bool, o, i int) {
		add(name+".weight", init, o, i)
		if bias {
			add(name+".bias", "bias", o)
		}
	}
	add("model.embeddings.tok_embeddings.weight", "embedding", c.VocabSize, h)
	norm("model.embeddings.norm")
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		if l > 0 {
			norm(p + "attn_norm")
		}
		linear(p+"attn.Wqkv", "in", a.AttentionBias, 3*h, h)
		linear(p+"attn.Wo", "out", a.AttentionBias, h, h)
		norm(p + "mlp_norm")
		linear(p+"mlp.Wi", "in", a.MLPBias, 2*f, h)
		linear(p+"mlp.Wo", "out", a.MLPBias, h, f)
	}
	norm("model.final_norm")
	linear("head.dense", "out", a.ClassifierBias, h, h)
	norm("head.norm")
	linear("classifier", "final_out", true, labels, h)
	return out
}

// NewModernBERT builds a ModernBertForSequenceClassification with labels
// outputs from a checkpoint's weights. Parameters the checkpoint lacks (the
// classifier of a ModernBertForMaskedLM checkpoint, whose prediction head
// the classifier's head shares names with and so reuses, as HuggingFace
// does) are initialised from seed as ModernBertPreTrainedModel._init_weights
// does; tensors the model does not use (the MLM decoder) are ignored; both
// are reported. A tensor whose shape disagrees with the config is an error
// naming both shapes.
func NewModernBERT(cfg *checkpoint.Config, labels int, weights checkpoint.Tensors, seed uint64) (*ModernBERT, LoadReport, error) {
	return newModernBERT(cfg, labels, false, weights, seed)
}

// NewModernBERTSpan builds a ModernBertForQuestionAnswering: the head on
// every token and a classifier with a start and an end logit. Its
// Pass.Logits are in SpanBERT's layout: per row, SeqLen start logits then
// SeqLen end logits; NumLabels is 2.
func NewModernBERTSpan(cfg *checkpoint.Config, weights checkpoint.Tensors, seed uint64) (*ModernBERT, LoadReport, error) {
	return newModernBERT(cfg, 2, true, weights, seed)
}

func newModernBERT(cfg *checkpoint.Config, labels int, span bool, weights checkpoint.Tensors, seed uint64) (*ModernBERT, LoadReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, LoadReport{}, err
	}
	a, err := ParseModernBERTConfig(cfg)
	if err != nil {
		return nil, LoadReport{}, err
	}
	if labels <= 0 {
		return nil, LoadReport{}, fmt.Errorf("modernbert: %d labels, want at least 1", labels)
	}
	m := &ModernBERT{Config: *cfg, Arch: a, span: span, numLabels: labels, byName: map[string]*Param{},
		zeros:   make([]float32, max(3*cfg.HiddenSize, 2*cfg.IntermediateSize)),
		discard: make([]float32, max(3*cfg.HiddenSize, 2*cfg.IntermediateSize)), dropout: newInitStream(seed ^ 0x5eed)}
	init := newInitStream(seed)
	var rep LoadReport
	used := map[string]bool{}
	for _, s := range modernBERTParamShapes(cfg, &a, labels) {
		p := &Param{Name: s.name, Shape: s.shape, Encoder: !strings.HasPrefix(s.name, "classifier."),
			NoDecay: s.init == "bias" || s.init == "norm"}
		n := checkpoint.NumElements(s.shape)
		if t, ok := weights[s.name]; ok {
			if !sameShape(t.Shape, s.shape) {
				return nil, rep, fmt.Errorf("checkpoint tensor %s has shape %v, the config needs %v", s.name, t.Shape, s.shape)
			}
			p.Value = append([]float32(nil), t.Data...)
			used[s.name] = true
		} else {
			p.Value = make([]float32, n)
			m.initParam(p, s.init, init)
			rep.Initialised = append(rep.Initialised, s.name)
		}
		p.Grad = make([]float32, n)
		m.params = append(m.params, p)
		m.byName[s.name] = p
	}
	for _, name := range weights.Names() {
		if !used[name] {
			rep.Ignored = append(rep.Ignored, name)
		}
	}
	return m, rep, nil
}

// initParam is ModernBertPreTrainedModel._init_weights: a normal truncated
// at ±initializer_cutoff_factor standard deviations, the deviation being
// initializer_range for embeddings and input projections,
// initializer_range/√(2·layers) for output projections and the head's dense
// layer, hidden^−½ for the classifier; LayerNorm weights 1, biases 0.
func (m *ModernBERT) initParam(p *Param, group string, s *initStream) {
	c := &m.Config
	var std float64
	switch group {
	case "norm", "bias":
		v := float32(0)
		if group == "norm" {
			v = 1
		}
		for i := range p.Value {
			p.Value[i] = v
		}
		return
	case "in", "embedding":
		std = c.InitializerRange
	case "out":
		std = c.InitializerRange / math.Sqrt(2*float64(c.NumHiddenLayers))
	case "final_out":
		std = math.Pow(float64(c.HiddenSize), -0.5)
	}
	cut := m.Arch.InitializerCutoffFactor
	for i := range p.Value {
		z := s.normal()
		for math.Abs(z) > cut {
			z = s.normal()
		}
		p.Value[i] = float32(std * z)
	}
}

// NumLabels implements Classifier (2 for the span head: start and end).
func (m *ModernBERT) NumLabels() int { return m.numLabels }

// IsSpan says whether m is the question-answering model.
func (m *ModernBERT) IsSpan() bool { return m.span }

// Params lists the parameters in HuggingFace's order.
func (m *ModernBERT) Params() []*Param { return m.params }

// Param returns the parameter called name, or nil.
func (m *ModernBERT) Param(name string) *Param { return m.byName[name] }

// Weights returns the parameters as checkpoint tensors (sharing memory).
func (m *ModernBERT) Weights() checkpoint.Tensors {
	ts := checkpoint.Tensors{}
	for _, p := range m.params {
		ts[p.Name] = &checkpoint.Tensor{Shape: p.Shape, Data: p.Value}
	}
	return ts
}

// SetFrozenEncoder implements Classifier: a frozen encoder (linear probing)
// leaves everything but the classifier without gradients.
func (m *ModernBERT) SetFrozenEncoder(frozen bool) { m.frozen = frozen }

// SeedDropout restarts the dropout stream.
func (m *ModernBERT) SeedDropout(seed uint64) { m.dropout = newInitStream(seed ^ 0x5eed) }

// SetDropout sets the training-time dropout rates BeLUGA's dropout method
// varies: hidden is ModernBERT's embedding, MLP and classifier dropout,
// attention its attention dropout (on the probabilities and, as in
// HuggingFace, after the attention's output projection).
func (m *ModernBERT) SetDropout(hidden, attention float64) {
	m.Arch.EmbeddingDropout, m.Arch.MLPDropout, m.Arch.ClassifierDropout = hidden, hidden, hidden
	m.Arch.AttentionDropout = attention
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
