package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

// Config is the part of a HuggingFace config.json that beluga uses, in
// BERT's names: a family that names a field otherwise (DistilBERT's dim,
// n_layers, …) has it read into and written back from these (its
// FamilyConfig, registered by the family's file in package models).
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
	// EmbeddingSize is the word-vector dimension of a word-vector model,
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

// FamilyConfig is how a model family's config.json differs from BERT's.
// A family registers it under its model_type (RegisterConfig, from the
// family's file in package models); ReadConfig and WriteConfig follow it.
type FamilyConfig struct {
	// Keys maps BERT's key of a field to the family's (DistilBERT's dim
	// for hidden_size, …): the field is read from and written to the
	// family's key.
	Keys map[string]string
	// Defaults sets the family's defaults where HuggingFace's config class
	// of the family has other ones than BERT's; a file's values win.
	Defaults func(c *Config)
	// Omit lists BERT's keys the family's config class does not have,
	// left out when the config is written.
	Omit []string
	// Validate replaces the check of BERT's sizes (Config.Validate) for a
	// model whose sizes are others (word vectors).
	Validate func(c *Config) error
	// Derive fills, after the file's values are read, the fields whose
	// default depends on others (GPT-2's n_inner: null means 4·n_embd).
	Derive func(c *Config)
}

var familyConfigs = map[string]FamilyConfig{}

// RegisterConfig records a family's FamilyConfig; a second registration of
// a model_type is a programming error and panics.
func RegisterConfig(modelType string, fc FamilyConfig) {
	if _, dup := familyConfigs[modelType]; dup {
		panic(fmt.Sprintf("checkpoint.RegisterConfig: model_type %q registered twice", modelType))
	}
	familyConfigs[modelType] = fc
}

// ReadConfig reads and checks a config.json.
func ReadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// ParseConfig reads and checks the bytes of a config.json: BERT's defaults,
// then the family's (by model_type), then the file's values, each field
// under the family's key; then the sizes.
func ParseConfig(b []byte) (*Config, error) {
	var head struct {
		ModelType string `json:"model_type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, err
	}
	fc := familyConfigs[head.ModelType]
	c := &Config{LayerNormEps: 1e-12, HiddenAct: "gelu", InitializerRange: 0.02, TypeVocabSize: 2}
	if fc.Defaults != nil {
		fc.Defaults(c)
	}
	if err := json.Unmarshal(wholeNumbers(b), c); err != nil {
		return nil, fieldError(err)
	}
	if err := json.Unmarshal(b, &c.Extra); err != nil {
		return nil, err
	}
	fields := map[string]any{"hidden_size": &c.HiddenSize, "intermediate_size": &c.IntermediateSize,
		"num_hidden_layers": &c.NumHiddenLayers, "num_attention_heads": &c.NumAttentionHeads,
		"hidden_dropout_prob": &c.HiddenDropoutProb, "attention_probs_dropout_prob": &c.AttentionProbsDropoutProb,
		"hidden_act": &c.HiddenAct, "vocab_size": &c.VocabSize, "max_position_embeddings": &c.MaxPositionEmbeddings}
	for bert, theirs := range fc.Keys {
		dst, ok := fields[bert]
		if !ok {
			return nil, fmt.Errorf("model_type %q spells %q otherwise, which beluga cannot read", head.ModelType, bert)
		}
		if raw, ok := c.Extra[theirs]; ok {
			if err := UnmarshalField(theirs, raw, dst); err != nil {
				return nil, err
			}
		}
	}
	if fc.Derive != nil {
		fc.Derive(c)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// wholeNumbers rewrites every number of a JSON document that is a whole
// number written with a fraction or an exponent (768.0, 1e9) as the integer
// it is, so that an integer field reads it: a size of 1e9 is then refused
// by the model's size check with its estimate and the limit, not by the JSON
// decoder. Numbers beyond 2^53, where a float64 no longer holds every whole
// number, and a document that is not JSON are left as they are (the
// decoder then says what is wrong).
func wholeNumbers(b []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return b
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case json.Number:
			if !strings.ContainsAny(string(x), ".eE") {
				return x
			}
			f, err := x.Float64()
			if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return x
			}
			changed = true
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
		return v
	}
	doc = walk(doc)
	if !changed {
		return b
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return b
	}
	return out
}

// UnmarshalField reads the value of config.json's field key (a family's
// own field, kept in Config.Extra) into dst as ParseConfig reads BERT's: a
// whole number written 1e9 or 768.0 is read into an integer, and a value
// of the wrong type is refused naming the field.
func UnmarshalField(key string, raw json.RawMessage, dst any) error {
	if err := json.Unmarshal(wholeNumbers(raw), dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field != "" {
				key += "." + te.Field
			}
			return fmt.Errorf("field %q: %s, want %s", key, te.Value, kindName(te.Type.Kind()))
		}
		return fmt.Errorf("field %q: %w", key, err)
	}
	return nil
}

// UnmarshalFields reads a JSON object of config.json fields (a family's
// own, kept in Config.Extra) into the struct dst as UnmarshalField reads one.
func UnmarshalFields(b []byte, dst any) error {
	if err := json.Unmarshal(wholeNumbers(b), dst); err != nil {
		return fieldError(err)
	}
	return nil
}

// fieldError says which config.json field has a value of the wrong type,
// in config.json's terms rather than the decoder's Go ones.
func fieldError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("field %q: %s, want %s", te.Field, te.Value, kindName(te.Type.Kind()))
	}
	return err
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Map:
		return "an object"
	case reflect.Slice:
		return "a list"
	}
	return "a " + k.String()
}

// Validate checks the sizes the model type needs: BERT's (each named as
// the family spells it), or those its FamilyConfig.Validate checks.
func (c *Config) Validate() error {
	if v := familyConfigs[c.ModelType].Validate; v != nil {
		return v(c)
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

// key is the config.json key of BERT's key name in c's family.
func (c *Config) key(bert string) string {
	if k, ok := familyConfigs[c.ModelType].Keys[bert]; ok {
		return k
	}
	return bert
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
	fc := familyConfigs[c.ModelType]
	for k, v := range fields {
		if theirs, ok := fc.Keys[k]; ok {
			k = theirs // the family's own spelling, as its config class reads it
		}
		merged[k] = v
	}
	for _, k := range fc.Omit {
		delete(merged, k)
	}
	if raw, ok := c.Extra["pad_token_id"]; ok && string(raw) == "null" && c.PadTokenID == 0 {
		// null read as 0 stays null: 0 would make token 0 the embedding's
		// padding_idx (Llama's, Qwen2's) when the model is loaded again.
		merged["pad_token_id"] = raw
	}
	out, err := json.MarshalIndent(merged, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(out, '\n'))
}
