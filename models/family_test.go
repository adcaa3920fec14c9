package models

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// TestUnknownModelTypeRefused: a model_type no family registered is an
// error naming it and every known one, from each constructor.
func TestUnknownModelTypeRefused(t *testing.T) {
	cfg := TinyConfig(50)
	cfg.ModelType = "t5"
	for _, tc := range []struct {
		name  string
		build func() error
	}{
		{"classifier", func() error { _, _, err := NewClassifier(cfg, 2, nil, 1); return err }},
		{"span", func() error { _, _, err := NewSpanModel(cfg, nil, 1); return err }},
		{"lookup", func() error { _, err := LookupFamily("t5"); return err }},
	} {
		err := tc.build()
		if err == nil || !strings.Contains(err.Error(), `"t5"`) {
			t.Errorf("%s: error %v, want one naming t5", tc.name, err)
			continue
		}
		for _, known := range FamilyNames() {
			if !strings.Contains(err.Error(), known) {
				t.Errorf("%s: error %q does not list %s", tc.name, err, known)
			}
		}
	}
}

// TestRegistry: every family is found by its model_type, an empty
// model_type is BERT's, and the registry refuses incomplete or duplicate
// families.
func TestRegistry(t *testing.T) {
	for _, name := range []string{"bert", "electra", "roberta", "xlm-roberta", "distilbert"} {
		f, err := LookupFamily(name)
		if err != nil || f.ModelType != name {
			t.Errorf("LookupFamily(%q) = %v, %v", name, f, err)
		}
	}
	if f, err := LookupFamily(""); err != nil || f.ModelType != "bert" {
		t.Errorf("LookupFamily(\"\") = %v, %v, want bert", f, err)
	}
	bert, _ := LookupFamily("bert")
	for _, tc := range []struct {
		name string
		f    Family
	}{
		{"duplicate", *bert},
		{"no encoder", Family{ModelType: "x", Prefix: "x", Classifier: "X", NewPooler: newFirstToken, NewHead: bert.NewHead}},
		{"span without head", Family{ModelType: "y", Prefix: "y", Classifier: "Y", Span: "YQA",
			NewEncoder: func(*checkpoint.Config) (Encoder, error) { return nil, nil }, NewPooler: newFirstToken, NewHead: bert.NewHead}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not refuse it", tc.name)
				}
			}()
			Register(tc.f)
		}()
	}
}

// TestRelativePositionsRefused: a BERT-shaped config asking for relative
// position embeddings, which the encoder does not compute, is refused
// rather than run with absolute ones.
func TestRelativePositionsRefused(t *testing.T) {
	for _, tc := range []struct {
		raw string
		ok  bool
	}{{`"absolute"`, true}, {`null`, true}, {`"relative_key"`, false}, {`"relative_key_query"`, false}, {`3`, false}} {
		cfg := TinyConfig(50)
		cfg.HiddenSize, cfg.IntermediateSize = 16, 32
		cfg.Extra = map[string]json.RawMessage{"position_embedding_type": json.RawMessage(tc.raw)}
		_, _, err := NewClassifier(cfg, 2, nil, 1)
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "position_embedding_type")) {
			t.Errorf("position_embedding_type %s: %v", tc.raw, err)
		}
	}
}
