package models

import (
	"fmt"
	"math"
	"strings"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// BERT is HuggingFace's BertForSequenceClassification: embeddings (word +
// position + token type, LayerNorm), N transformer layers (multi-head
// self-attention with the padding mask, residual + LayerNorm, a feed-forward
// block with the exact erf GELU, residual + LayerNorm), a tanh pooler on the
// [CLS] state, and a linear classifier. Its parameters carry HuggingFace's
// names and shapes (a Linear weight is [out, in]).
type BERT struct {
	Config    checkpoint.Config
	numLabels int // NumLabels() is part of the Classifier contract
	params    []*Param
	byName    map[string]*Param
	// HiddenDropout and AttentionDropout are the training-time dropout rates
	// (from the config unless set otherwise).
	HiddenDropout, AttentionDropout float64
	frozen                          bool
	dropout                         *initStream
	pool                            bufPool // the passes' buffers
}

// bertParamShapes lists every parameter of a BertForSequenceClassification
// in HuggingFace's order.
func bertParamShapes(c *checkpoint.Config, labels int) []struct {
	name  string
	shape []int
} {
	type ps = struct {
		name  string
		shape []int
	}
	h, f := c.HiddenSize, c.IntermediateSize
	out := []ps{
		{"bert.embeddings.word_embeddings.weight", []int{c.VocabSize, h}},
		{"bert.embeddings.position_embeddings.weight", []int{c.MaxPositionEmbeddings, h}},
		{"bert.embeddings.token_type_embeddings.weight", []int{c.TypeVocabSize, h}},
		{"bert.embeddings.LayerNorm.weight", []int{h}},
		{"bert.embeddings.LayerNorm.bias", []int{h}},
	}
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf("bert.encoder.layer.%d.", l)
		out = append(out,
			ps{p + "attention.self.query.weight", []int{h, h}}, ps{p + "attention.self.query.bias", []int{h}},
			ps{p + "attention.self.key.weight", []int{h, h}}, ps{p + "attention.self.key.bias", []int{h}},
			ps{p + "attention.self.value.weight", []int{h, h}}, ps{p + "attention.self.value.bias", []int{h}},
			ps{p + "attention.output.dense.weight", []int{h, h}}, ps{p + "attention.output.dense.bias", []int{h}},
			ps{p + "attention.output.LayerNorm.weight", []int{h}}, ps{p + "attention.output.LayerNorm.bias", []int{h}},
			ps{p + "intermediate.dense.weight", []int{f, h}}, ps{p + "intermediate.dense.bias", []int{f}},
			ps{p + "output.dense.weight", []int{h, f}}, ps{p + "output.dense.bias", []int{h}},
			ps{p + "output.LayerNorm.weight", []int{h}}, ps{p + "output.LayerNorm.bias", []int{h}},
		)
	}
	return append(out,
		ps{"bert.pooler.dense.weight", []int{h, h}}, ps{"bert.pooler.dense.bias", []int{h}},
		ps{"classifier.weight", []int{labels, h}}, ps{"classifier.bias", []int{labels}},
	)
}

// LoadReport says how a checkpoint's tensors met the model's parameters, as
// HuggingFace reports it when loading a checkpoint into another head.
type LoadReport struct {
	Ignored     []string // checkpoint tensors the model has no use for
	Initialised []string // model parameters the checkpoint lacks, initialised afresh
}

// NewBERT builds a classifier with labels outputs from a checkpoint's
// weights. Parameters the checkpoint lacks (a pooler or classifier missing
// from an MLM checkpoint) are initialised from seed as HuggingFace does;
// tensors the model does not use are ignored; both are reported. A tensor
// whose shape disagrees with the config is an error naming both shapes.
func NewBERT(cfg *checkpoint.Config, labels int, weights checkpoint.Tensors, seed uint64) (*BERT, LoadReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, LoadReport{}, err
	}
	m := &BERT{Config: *cfg, numLabels: labels, byName: map[string]*Param{},
		HiddenDropout: cfg.HiddenDropoutProb, AttentionDropout: cfg.AttentionProbsDropoutProb,
		dropout: newInitStream(seed ^ 0x5eed)}
	init := newInitStream(seed)
	var rep LoadReport
	used := map[string]bool{}
	for _, s := range bertParamShapes(cfg, labels) {
		p := &Param{Name: s.name, Shape: s.shape, Encoder: !strings.HasPrefix(s.name, "classifier."),
			NoDecay: strings.HasSuffix(s.name, ".bias") || strings.Contains(s.name, "LayerNorm")}
		n := checkpoint.NumElements(s.shape)
		if t, ok := weights[s.name]; ok {
			if !sameShape(t.Shape, s.shape) {
				return nil, rep, fmt.Errorf("checkpoint tensor %s has shape %v, the config needs %v", s.name, t.Shape, s.shape)
			}
			p.Value = append([]float32(nil), t.Data...)
			used[s.name] = true
		} else {
			p.Value = make([]float32, n)
			initParam(p, cfg.InitializerRange, init)
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

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// initParam is HuggingFace's BertPreTrainedModel._init_weights: normal(0,
// initializer_range) for weights and embeddings, zeros for biases, ones for
// LayerNorm weights.
func initParam(p *Param, std float64, s *initStream) {
	switch {
	case strings.Contains(p.Name, "LayerNorm.weight"):
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

func (s *initStream) uint64() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
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

// Params lists the parameters in HuggingFace's order.
func (m *BERT) Params() []*Param { return m.params }

// Param returns the parameter called name, or nil.
func (m *BERT) Param(name string) *Param { return m.byName[name] }

// Weights returns the parameters as checkpoint tensors (sharing memory).
func (m *BERT) Weights() checkpoint.Tensors {
	ts := checkpoint.Tensors{}
	for _, p := range m.params {
		ts[p.Name] = &checkpoint.Tensor{Shape: p.Shape, Data: p.Value}
	}
	return ts
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
