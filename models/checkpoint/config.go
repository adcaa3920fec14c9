package checkpoint

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

// Config is the part of a HuggingFace BERT config.json that beluga uses.
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
	// EmbeddingSize is the word-vector dimension of model_type "wordvec".
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
		{"max_position_embeddings", c.MaxPositionEmbeddings}, {"type_vocab_size", c.TypeVocabSize}} {
		if f.v <= 0 {
			return fmt.Errorf("field %q: %d, want a positive size", f.name, f.v)
		}
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 {
		return fmt.Errorf("field \"num_attention_heads\": %d does not divide hidden_size %d", c.NumAttentionHeads, c.HiddenSize)
	}
	if c.HiddenAct != "gelu" {
		return fmt.Errorf("field \"hidden_act\": %q (only the exact erf gelu is supported)", c.HiddenAct)
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
	for k, v := range fields {
		merged[k] = v
	}
	out, err := json.MarshalIndent(merged, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(out, '\n'))
}
