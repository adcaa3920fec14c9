package models

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// DistilBERT's head dropout rates are the family's own config fields (in
// Config.Extra, read by its file): HuggingFace's defaults where a config
// has none, a file's values otherwise, and a value that is not a rate
// refused naming its field when the model is built.
func TestDistilBERTHeadRates(t *testing.T) {
	tests := []struct {
		name    string
		extra   map[string]string
		want    DistilBERTHeads
		wantErr string
	}{
		{"defaults", nil, DistilBERTHeads{QADropout: 0.1, SeqClassifDropout: 0.2}, ""},
		{"the file's", map[string]string{"qa_dropout": "0", "seq_classif_dropout": "0.3"}, DistilBERTHeads{SeqClassifDropout: 0.3}, ""},
		{"not a number", map[string]string{"seq_classif_dropout": `"high"`}, DistilBERTHeads{}, "seq_classif_dropout"},
		{"not a rate", map[string]string{"qa_dropout": "1.5"}, DistilBERTHeads{}, "qa_dropout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(map[string]any{"model_type": "distilbert", "vocab_size": 50, "dim": 8, "n_layers": 1,
				"n_heads": 2, "hidden_dim": 16, "max_position_embeddings": 16})
			cfg, err := checkpoint.ParseConfig(b)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.extra {
				cfg.Extra[k] = json.RawMessage(v)
			}
			got, err := ParseDistilBERTHeads(cfg)
			_, _, buildErr := NewClassifier(cfg, 2, nil, 1)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || buildErr == nil || !strings.Contains(buildErr.Error(), tc.wantErr) {
					t.Errorf("parse: %v; build: %v; want both to name %s", err, buildErr, tc.wantErr)
				}
				return
			}
			if err != nil || buildErr != nil || got != tc.want {
				t.Errorf("got %+v (%v, %v), want %+v", got, err, buildErr, tc.want)
			}
		})
	}
}
