package checkpoint

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

// Config is the part of a HuggingFace config.json that beluga uses, in
// BERT's names: a family that names a field otherwise (DistilBERT's dim,
// n_layers, …) has it read into and written back from these (familyKeys).
// Unknown fields are kept in Extra and written back unchanged.
type Config struct {
	ModelType                 string            `json:"model_type"`
	Architectures             []string          `json:"architectures,omitempty"`
	VocabSize                 int               `json:"vocab_size"`
	HiddenSize                int               `json:"hidden_size"`
	NumHiddenLayers           int               `json:"num_hidden_layers"`
	NumAttentionHeads         int               `json:"num_attention_heads"`
	IntermediateSize          int               `json:"intermediate_size"`
	MaxPositionEmbeddings     int               `json:"max_position_embeddings"`
	TypeVocabSize             int               `json:"type_vocab_size"`
	LayerNormEps              float64           `json:"layer_norm_eps"`
	HiddenDropoutProb         float64           `json:"hidden_dropout_prob"`
	AttentionProbsDropoutProb float64           `json:"attention_probs_dropout_prob"`
	HiddenAct                 string            `json:"hidden_act"`
	InitializerRange          float64           `json:"initializer_range"`
	PadTokenID                int               `json:"pad_token_id"`
	ID2Label                  map[string]string `json:"id2label,omitempty"`
	NumLabels                 int               `json:"num_labels,omitempty"`
	ProblemType               string            `json:"problem_type,omitempty"`
	// ClassifierDropout is classifier_dropout: the classification head's
	// dropout rate when set, else the hidden dropout rate (BERT, RoBERTa,
	// ELECTRA).
	ClassifierDropout *float64 `json:"classifier_dropout,omitempty"`
	// QADropout and SeqClassifDropout are DistilBERT's qa_dropout and
	// seq_classif_dropout.
	QADropout         float64 `json:"qa_dropout,omitempty"`
	SeqClassifDropout float64 `json:"seq_classif_dropout,omitempty"`
	// EmbeddingSize is the word-vector dimension of model_type "wordvec",
	// and ELECTRA's embedding width (embeddings_project maps it to
	// hidden_size when they differ).
	EmbeddingSize int                        `json:"embedding_size,omitempty"`
	Extra         map[string]json.RawMessage `json:"-"`
}

// Labels is the number of classifier outputs: num_labels, else the size of
// id2label, else HuggingFace's default of 2.
func (c *Config) Labels() int {
	switch {
	case c.NumLabels > 0:
		return c.NumLabels
	case len(c.ID2Label) > 0:
		return len(c.ID2Label)
	}
	return 2
}

// ReadConfig reads and checks a config.json.
func ReadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c := &Config{LayerNormEps: 1e-12, HiddenAct: "gelu", InitializerRange: 0.02, TypeVocabSize: 2}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &c.Extra); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := c.readFamilyKeys(); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Validate checks the sizes the model type needs.
func (c *Config) Validate() error {
	if c.ModelType == "wordvec" {
		if c.VocabSize < 2 || c.HiddenSize <= 0 || c.EmbeddingSize <= 0 {
			return fmt.Errorf("wordvec config needs vocab_size ≥ 2, hidden_size and embedding_size (got %d, %d, %d)", c.VocabSize, c.HiddenSize, c.EmbeddingSize)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"vocab_size", c.VocabSize}, {"hidden_size", c.HiddenSize}, {"num_hidden_layers", c.NumHiddenLayers},
		{"num_attention_heads", c.NumAttentionHeads}, {"intermediate_size", c.IntermediateSize},
		{"max_position_embeddings", c.MaxPositionEmbeddings}} {
		if f.v <= 0 {
			return fmt.Errorf("field %q: %d, want a positive size", c.key(f.name), f.v)
		}
	}
	if c.TypeVocabSize < 0 {
		return fmt.Errorf("field \"type_vocab_size\": %d, want a size", c.TypeVocabSize)
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 {
		return fmt.Errorf("field %q: %d does not divide %s %d", c.key("num_attention_heads"), c.NumAttentionHeads, c.key("hidden_size"), c.HiddenSize)
	}
	return nil
}

// familyKeys are the config.json keys a family spells otherwise than BERT,
// by model_type: its key for each of BERT's.
var familyKeys = map[string]map[string]string{
	// DistilBertConfig: no token types; LayerNorm eps fixed at 1e-12.
	"distilbert": {"hidden_size": "dim", "intermediate_size": "hidden_dim", "num_hidden_layers": "n_layers",
		"num_attention_heads": "n_heads", "hidden_dropout_prob": "dropout",
		"attention_probs_dropout_prob": "attention_dropout", "hidden_act": "activation"},
}

// familyDefaults are HuggingFace's config defaults of a family's keys
// that BERT's do not give.
var familyDefaults = map[string]func(c *Config){
	"distilbert": func(c *Config) {
		c.TypeVocabSize, c.LayerNormEps = 0, 1e-12
		c.QADropout, c.SeqClassifDropout = 0.1, 0.2
		c.HiddenDropoutProb, c.AttentionProbsDropoutProb = 0.1, 0.1
	},
}

// key is the config.json key of BERT's key name in c's family.
func (c *Config) key(bert string) string {
	if k, ok := familyKeys[c.ModelType][bert]; ok {
		return k
	}
	return bert
}

// readFamilyKeys reads the fields of a family that names them otherwise
// from Extra.
func (c *Config) readFamilyKeys() error {
	keys, ok := familyKeys[c.ModelType]
	if !ok {
		return nil
	}
	if d := familyDefaults[c.ModelType]; d != nil {
		d(c)
		// Keys the file gives win over the defaults.
		for _, k := range []string{"qa_dropout", "seq_classif_dropout"} {
			if raw, ok := c.Extra[k]; ok {
				dst := &c.QADropout
				if k == "seq_classif_dropout" {
					dst = &c.SeqClassifDropout
				}
				if err := json.Unmarshal(raw, dst); err != nil {
					return fmt.Errorf("field %q: %w", k, err)
				}
			}
		}
	}
	fields := map[string]any{"hidden_size": &c.HiddenSize, "intermediate_size": &c.IntermediateSize,
		"num_hidden_layers": &c.NumHiddenLayers, "num_attention_heads": &c.NumAttentionHeads,
		"hidden_dropout_prob": &c.HiddenDropoutProb, "attention_probs_dropout_prob": &c.AttentionProbsDropoutProb,
		"hidden_act": &c.HiddenAct}
	for bert, theirs := range keys {
		raw, ok := c.Extra[theirs]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, fields[bert]); err != nil {
			return fmt.Errorf("field %q: %w", theirs, err)
		}
	}
	return nil
}

// WriteConfig writes c to path atomically, keeping fields beluga does not model.
func WriteConfig(path string, c *Config) error {
	known, err := json.Marshal(c)
	if err != nil {
		return err
	}
	merged := map[string]json.RawMessage{}
	for k, v := range c.Extra {
		merged[k] = v
	}
	var fields map[string]json.RawMessage
	json.Unmarshal(known, &fields)
	keys := familyKeys[c.ModelType]
	for k, v := range fields {
		if theirs, ok := keys[k]; ok {
			k = theirs // the family's own spelling, as its config class reads it
		}
		merged[k] = v
	}
	if keys != nil {
		delete(merged, "type_vocab_size")
		delete(merged, "layer_norm_eps")
	}
	out, err := json.MarshalIndent(merged, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(out, '\n'))
}
