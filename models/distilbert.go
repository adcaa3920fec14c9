package models

import (
	"fmt"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// The distilbert family: HuggingFace's DistilBertModel — word and position
// embeddings (no token types), LayerNorm, dropout; layers of
// q_lin/k_lin/v_lin/out_lin attention (no dropout on its output),
// sa_layer_norm, ffn.lin1, GELU, ffn.lin2, dropout, output_layer_norm
// (config keys dim, hidden_dim, n_layers, n_heads, dropout,
// attention_dropout, activation: see checkpoint.Config). The classifier
// reads the first token: pre_classifier, ReLU, dropout
// (seq_classif_dropout), classifier; DistilBertForQuestionAnswering is
// dropout (qa_dropout), then qa_outputs on every token. Those two rates are
// the config's: BeLUGA's dropout settings change the encoder's.
func init() {
	Register(Family{
		ModelType:   "distilbert",
		Prefix:      "distilbert",
		Classifier:  "DistilBertForSequenceClassification",
		Span:        "DistilBertForQuestionAnswering",
		NewEncoder:  newDistilBERTEncoder,
		NewPooler:   newFirstToken,
		NewHead:     newDistilBERTHead,
		NewSpanHead: newQAOutputs(func(cfg *checkpoint.Config) dropoutRate { return fixedDropout(distilBERTHeadsOf(cfg).QADropout) }),
		// DistilBertConfig: its own names for BERT's sizes, no token
		// types, LayerNorm eps fixed at 1e-12.
		Config: checkpoint.FamilyConfig{
			Keys: map[string]string{"hidden_size": "dim", "intermediate_size": "hidden_dim", "num_hidden_layers": "n_layers",
				"num_attention_heads": "n_heads", "hidden_dropout_prob": "dropout",
				"attention_probs_dropout_prob": "attention_dropout", "hidden_act": "activation"},
			Defaults: func(c *checkpoint.Config) {
				c.TypeVocabSize, c.LayerNormEps = 0, 1e-12
				c.HiddenDropoutProb, c.AttentionProbsDropoutProb = 0.1, 0.1
			},
			Omit: []string{"type_vocab_size", "layer_norm_eps"},
		},
		Tokenizer: TokenizerDefaults{Class: "DistilBertTokenizer"},
	})
}

// DistilBERTHeads are DistilBertConfig's head dropout rates, which BERT's
// config has not (kept in checkpoint.Config.Extra under their keys).
type DistilBERTHeads struct {
	QADropout         float64 `json:"qa_dropout"`
	SeqClassifDropout float64 `json:"seq_classif_dropout"`
}

// ParseDistilBERTHeads reads cfg's head dropout rates, HuggingFace's
// defaults (0.1, 0.2) where the config has none.
func ParseDistilBERTHeads(cfg *checkpoint.Config) (DistilBERTHeads, error) {
	h := DistilBERTHeads{QADropout: 0.1, SeqClassifDropout: 0.2}
	for key, dst := range map[string]*float64{"qa_dropout": &h.QADropout, "seq_classif_dropout": &h.SeqClassifDropout} {
		if raw, ok := cfg.Extra[key]; ok {
			if err := checkpoint.UnmarshalField(key, raw, dst); err != nil {
				return h, err
			}
			if *dst < 0 || *dst >= 1 {
				return h, fmt.Errorf("config field %q: dropout rate %g, want one in [0, 1)", key, *dst)
			}
		}
	}
	return h, nil
}

// distilBERTHeadsOf is ParseDistilBERTHeads for the heads: NewEncoder has
// already refused a config whose rates do not parse.
func distilBERTHeadsOf(cfg *checkpoint.Config) DistilBERTHeads {
	h, _ := ParseDistilBERTHeads(cfg)
	return h
}

func newDistilBERTEncoder(cfg *checkpoint.Config) (Encoder, error) {
	if _, err := ParseDistilBERTHeads(cfg); err != nil {
		return nil, err
	}
	p := "distilbert.embeddings."
	return newBERTEncoder(cfg, &bertLayout{
		embeddings: p,
		word:       p + "word_embeddings", pos: p + "position_embeddings", ln: p + "LayerNorm",
		layer: "distilbert.transformer.layer.%d.",
		q:     "attention.q_lin", k: "attention.k_lin", v: "attention.v_lin", o: "attention.out_lin",
		ln1: "sa_layer_norm", ffnIn: "ffn.lin1", ffnOut: "ffn.lin2", ln2: "output_layer_norm",
	})
}

// newDistilBERTHead is DistilBertForSequenceClassification's head:
// pre_classifier, ReLU, dropout (seq_classif_dropout), classifier.
func newDistilBERTHead(cfg *checkpoint.Config, features, labels int) Head {
	return &denseHead{drop2: fixedDropout(distilBERTHeadsOf(cfg).SeqClassifDropout), act: actReLU,
		dense: newLinear("pre_classifier", features, features), out: newLinear("classifier", features, labels)}
}
