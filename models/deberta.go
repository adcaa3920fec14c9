package models

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// This file is the deberta-v2 family (DeBERTa-v2 and -v3): its config,
// HuggingFace's DebertaV2ForSequenceClassification head (ContextPooler:
// dropout, dense and GELU on the first token; dropout; classifier) and
// DebertaV2ForQuestionAnswering's qa_outputs (heads.go's). The encoder is in
// deberta_pass.go, its disentangled attention in deberta_attention.go. The
// reference is transformers' modeling_deberta_v2.py in its XSoftmax form
// (huggingface/transformers, blob of commit 0038a3ca…), which
// testdata/deberta-v2/gen.py transcribes to write the fixture.

// DebertaModelType is the config.json model_type of DeBERTa-v2 and -v3
// checkpoints (microsoft/deberta-v3-base).
const DebertaModelType = "deberta-v2"

// DebertaArchitecture is the HuggingFace class the family's sequence
// classifier is saved as.
const DebertaArchitecture = "DebertaV2ForSequenceClassification"

// DebertaConfig is what DeBERTa-v2 adds to the BERT-shaped config, with
// HuggingFace's DebertaV2Config defaults for keys a config.json leaves out.
type DebertaConfig struct {
	checkpoint.Config
	RelativeAttention   bool     // relative_attention (default false)
	MaxRelative         int      // max_relative_positions; < 1 means max_position_embeddings
	PositionBuckets     int      // position_buckets; ≤ 0: no log buckets
	NormRelEmbedding    bool     // norm_rel_ebd contains "layer_norm"
	PosAttType          []string // pos_att_type: "c2p", "p2c" ("p2c|c2p" or a list)
	PositionBiasedInput bool     // position_biased_input (default true)
	EmbeddingSize       int      // embedding_size (default hidden_size)
	PoolerHiddenAct     string   // pooler_hidden_act (default "gelu")
	PoolerDropout       float64  // pooler_dropout (default 0)
	// ClsDropout is cls_dropout, the rate before the classifier; when the
	// config has none (HF's default) that dropout follows the hidden rate.
	ClsDropout *float64
}

// maxRelative is the relative distance the encoder resolves
// (DebertaV2Encoder.max_relative_positions).
func (c *DebertaConfig) maxRelative() int {
	if c.MaxRelative < 1 {
		return c.MaxPositionEmbeddings
	}
	return c.MaxRelative
}

// span is DisentangledSelfAttention.pos_ebd_size: half the rows of the
// relative embeddings.
func (c *DebertaConfig) span() int {
	if c.PositionBuckets > 0 {
		return c.PositionBuckets
	}
	return c.maxRelative()
}

func (c *DebertaConfig) hasPos(kind string) bool {
	for _, k := range c.PosAttType {
		if k == kind {
			return true
		}
	}
	return false
}

// scaleFactor is 1 + the number of position terms in a score.
func (c *DebertaConfig) scaleFactor() int {
	f := 1
	if c.hasPos("c2p") {
		f++
	}
	if c.hasPos("p2c") {
		f++
	}
	return f
}

// ParseDebertaConfig reads the DeBERTa-v2 keys of a config.json (kept in
// cfg.Extra by checkpoint.ReadConfig) and refuses what the model does not
// implement, naming the field.
func ParseDebertaConfig(cfg *checkpoint.Config) (*DebertaConfig, error) {
	c := &DebertaConfig{Config: *cfg, PositionBiasedInput: true, EmbeddingSize: cfg.HiddenSize,
		PoolerHiddenAct: "gelu", MaxRelative: -1, PositionBuckets: -1}
	var convKernel, headSize, poolerSize int
	var normRel string
	var posAtt json.RawMessage
	shareKey := false
	for _, f := range []struct {
		key string
		dst any
	}{{"relative_attention", &c.RelativeAttention}, {"max_relative_positions", &c.MaxRelative},
		{"position_buckets", &c.PositionBuckets}, {"norm_rel_ebd", &normRel}, {"share_att_key", &shareKey},
		{"pos_att_type", &posAtt}, {"position_biased_input", &c.PositionBiasedInput},
		{"embedding_size", &c.EmbeddingSize}, {"pooler_hidden_act", &c.PoolerHiddenAct},
		{"pooler_dropout", &c.PoolerDropout}, {"cls_dropout", &c.ClsDropout}, {"conv_kernel_size", &convKernel},
		{"attention_head_size", &headSize}, {"pooler_hidden_size", &poolerSize}} {
		raw, ok := cfg.Extra[f.key]
		if !ok || string(raw) == "null" {
			continue
		}
		if err := checkpoint.UnmarshalField(f.key, raw, f.dst); err != nil {
			return nil, err
		}
	}
	for _, s := range strings.Split(strings.ToLower(normRel), "|") {
		switch strings.TrimSpace(s) {
		case "layer_norm":
			c.NormRelEmbedding = true
		case "", "none":
		default:
			return nil, fmt.Errorf("field \"norm_rel_ebd\": %q (want layer_norm or none)", normRel)
		}
	}
	if len(posAtt) > 0 && string(posAtt) != "null" {
		var s string
		if err := json.Unmarshal(posAtt, &s); err == nil {
			for _, p := range strings.Split(strings.ToLower(s), "|") {
				c.PosAttType = append(c.PosAttType, strings.TrimSpace(p))
			}
		} else if err := json.Unmarshal(posAtt, &c.PosAttType); err != nil {
			return nil, fmt.Errorf("field \"pos_att_type\": %s is neither \"p2c|c2p\" nor a list", posAtt)
		}
	}
	for _, p := range c.PosAttType {
		if p != "c2p" && p != "p2c" {
			return nil, fmt.Errorf("field \"pos_att_type\": %q (DeBERTa-v2 knows c2p and p2c)", p)
		}
	}
	switch {
	case c.VocabSize <= 0 || c.HiddenSize <= 0 || c.NumHiddenLayers <= 0 || c.NumAttentionHeads <= 0 ||
		c.IntermediateSize <= 0 || c.MaxPositionEmbeddings <= 0 || c.EmbeddingSize <= 0:
		return nil, fmt.Errorf("vocab_size, hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, max_position_embeddings and embedding_size must be positive (got %d, %d, %d, %d, %d, %d, %d)",
			c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize, c.MaxPositionEmbeddings, c.EmbeddingSize)
	case c.TypeVocabSize < 0:
		return nil, fmt.Errorf("field \"type_vocab_size\": %d", c.TypeVocabSize)
	case c.HiddenSize%c.NumAttentionHeads != 0:
		return nil, fmt.Errorf("field \"num_attention_heads\": %d does not divide hidden_size %d", c.NumAttentionHeads, c.HiddenSize)
	case headSize != 0 && headSize != c.HiddenSize/c.NumAttentionHeads:
		return nil, fmt.Errorf("field \"attention_head_size\": %d ≠ hidden_size/num_attention_heads (not supported)", headSize)
	case poolerSize != 0 && poolerSize != c.HiddenSize:
		return nil, fmt.Errorf("field \"pooler_hidden_size\": %d ≠ hidden_size %d (not supported)", poolerSize, c.HiddenSize)
	case c.HiddenAct != "gelu":
		return nil, fmt.Errorf("field \"hidden_act\": %q (only the exact erf gelu is supported)", c.HiddenAct)
	case c.PoolerHiddenAct != "gelu" && c.PoolerHiddenAct != "tanh":
		return nil, fmt.Errorf("field \"pooler_hidden_act\": %q (gelu or tanh)", c.PoolerHiddenAct)
	case convKernel > 0:
		// DeBERTa-v2-xlarge's ConvLayer after the first layer; v3 has none.
		return nil, fmt.Errorf("field \"conv_kernel_size\": %d: DeBERTa-v2's convolution layer is not implemented (DeBERTa-v3 checkpoints have none)", convKernel)
	case c.RelativeAttention && len(c.PosAttType) > 0 && !shareKey:
		return nil, fmt.Errorf("field \"share_att_key\": false (separate pos_key_proj/pos_query_proj) is not implemented; DeBERTa-v2 and -v3 checkpoints share the keys")
	}
	return c, nil
}

func init() {
	Register(Family{
		ModelType:   DebertaModelType,
		Prefix:      "deberta",
		Classifier:  DebertaArchitecture,
		Span:        SpanDebertaArchitecture,
		NewEncoder:  func(cfg *checkpoint.Config) (Encoder, error) { return newDebertaEncoder(cfg) },
		NewPooler:   newFirstToken,
		NewHead:     newDebertaHead,
		NewSpanHead: newQAOutputs(nil),
		// DebertaV2Config's defaults that differ from BERT's.
		Config:    checkpoint.FamilyConfig{Defaults: func(c *checkpoint.Config) { c.TypeVocabSize, c.LayerNormEps = 0, 1e-7 }},
		Tokenizer: TokenizerDefaults{Class: "DebertaV2Tokenizer", SentencePiece: SentencePieceDeBERTa},
	})
}

// SpanDebertaArchitecture is the HuggingFace class of DeBERTa's span model.
const SpanDebertaArchitecture = "DebertaV2ForQuestionAnswering"

// newDebertaHead is DebertaV2ForSequenceClassification's head on the first
// token's final state: ContextPooler (dropout at pooler_dropout, the
// top-level pooler.dense, pooler_hidden_act — GELU in v3), then dropout at
// cls_dropout (else the hidden rate in force) and the classifier. The
// pooler lies outside HF's base model (model.deberta), so BeLUGA's linear
// probing, which freezes the base model, trains it with the classifier.
func newDebertaHead(cfg *checkpoint.Config, features, labels int) Head {
	h := &denseHead{drop1: fixedDropout(0), dense: newLinear("pooler.dense", features, features), act: actGELU,
		drop2: func(r *Run) float64 { return r.HiddenRate }, out: newLinear("classifier", features, labels)}
	// NewEncoder has already refused a config that does not parse.
	if dc, err := ParseDebertaConfig(cfg); err == nil {
		h.drop1 = fixedDropout(dc.PoolerDropout)
		if dc.PoolerHiddenAct == "tanh" {
			h.act = actTanh
		}
		if dc.ClsDropout != nil {
			h.drop2 = fixedDropout(*dc.ClsDropout)
		}
	}
	return h
}

// debertaEncoderSpecs lists DebertaV2Model's parameters in HuggingFace's
// order.
func debertaEncoderSpecs(c *DebertaConfig) []ParamSpec {
	h, f, e := c.HiddenSize, c.IntermediateSize, c.EmbeddingSize
	out := []ParamSpec{{Name: "deberta.embeddings.word_embeddings.weight", Shape: []int{c.VocabSize, e}}}
	if c.PositionBiasedInput {
		out = append(out, ParamSpec{Name: "deberta.embeddings.position_embeddings.weight", Shape: []int{c.MaxPositionEmbeddings, e}})
	}
	if c.TypeVocabSize > 0 {
		out = append(out, ParamSpec{Name: "deberta.embeddings.token_type_embeddings.weight", Shape: []int{c.TypeVocabSize, e}})
	}
	if e != h {
		out = append(out, ParamSpec{Name: "deberta.embeddings.embed_proj.weight", Shape: []int{h, e}})
	}
	out = append(out, normSpecs("deberta.embeddings.LayerNorm", h)...)
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf("deberta.encoder.layer.%d.", l)
		out = append(out, linearSpecs(p+"attention.self.query_proj", h, h)...)
		out = append(out, linearSpecs(p+"attention.self.key_proj", h, h)...)
		out = append(out, linearSpecs(p+"attention.self.value_proj", h, h)...)
		out = append(out, linearSpecs(p+"attention.output.dense", h, h)...)
		out = append(out, normSpecs(p+"attention.output.LayerNorm", h)...)
		out = append(out, linearSpecs(p+"intermediate.dense", h, f)...)
		out = append(out, linearSpecs(p+"output.dense", f, h)...)
		out = append(out, normSpecs(p+"output.LayerNorm", h)...)
	}
	if c.RelativeAttention {
		out = append(out, ParamSpec{Name: "deberta.encoder.rel_embeddings.weight", Shape: []int{2 * c.span(), h}})
		if c.NormRelEmbedding {
			out = append(out, normSpecs("deberta.encoder.LayerNorm", h)...)
		}
	}
	return out
}

// DebertaTinyConfig is a DeBERTa-v3-shaped config at BERT-tiny's size: 2
// layers, hidden 128, 2 heads, FFN 512, with deberta-v3-base's relative
// attention (p2c|c2p over 256 log buckets of 512 positions, shared keys,
// normalised relative embeddings, no absolute positions, no token types)
// and its defaults (eps 1e-7, dropout 0.1).
func DebertaTinyConfig(vocabSize int) *checkpoint.Config {
	extra := map[string]json.RawMessage{}
	for k, v := range map[string]string{"relative_attention": "true", "position_buckets": "256",
		"norm_rel_ebd": `"layer_norm"`, "share_att_key": "true", "pos_att_type": `"p2c|c2p"`,
		"max_relative_positions": "-1", "position_biased_input": "false", "type_vocab_size": "0",
		"layer_norm_eps": "1e-7"} {
		extra[k] = json.RawMessage(v)
	}
	return &checkpoint.Config{ModelType: DebertaModelType, VocabSize: vocabSize, HiddenSize: 128, NumHiddenLayers: 2,
		NumAttentionHeads: 2, IntermediateSize: 512, MaxPositionEmbeddings: 512, TypeVocabSize: 0,
		LayerNormEps: 1e-7, HiddenDropoutProb: 0.1, AttentionProbsDropoutProb: 0.1, HiddenAct: "gelu",
		InitializerRange: 0.02, Extra: extra}
}
