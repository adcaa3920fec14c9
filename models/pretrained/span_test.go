package pretrained

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// TestLoadSpanSavesItsTokenizer: a sequence-classification archive loads
// as a span model with a fresh qa_outputs and an untruncating tokenizer;
// once the extraction is gone it saves as BertForQuestionAnswering with the
// tokenizer's files, and that directory loads back whole, weight for weight.
func TestLoadSpanSavesItsTokenizer(t *testing.T) {
	archive := shareddata.Path(t, "fixtures/bert-fixture-a.tar.gz")
	s, err := LoadSpan(context.Background(), archive, Options{Resolver: offline, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Report.Initialised, []string{"qa_outputs.weight", "qa_outputs.bias"}) || !slices.Contains(s.Report.Ignored, "classifier.weight") {
		t.Errorf("report %+v: want qa_outputs initialised, the classifier ignored", s.Report)
	}
	if s.Tokenizer.MaxLength() != 0 {
		t.Errorf("tokenizer truncates to %d: span features window contexts themselves", s.Tokenizer.MaxLength())
	}
	out := filepath.Join(t.TempDir(), "model")
	if err := s.Save(out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json", "vocab.txt"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("saved span model lacks %s", name)
		}
	}
	var cfg struct{ Architectures []string }
	b, _ := os.ReadFile(filepath.Join(out, "config.json"))
	if json.Unmarshal(b, &cfg); !slices.Equal(cfg.Architectures, []string{"BertForQuestionAnswering"}) {
		t.Errorf("saved architectures %v", cfg.Architectures)
	}
	back, err := LoadSpan(context.Background(), out, Options{Resolver: offline})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Report.Initialised) != 0 {
		t.Errorf("the saved span model reloads with %v initialised", back.Report.Initialised)
	}
	want, got := s.Model.Params(), back.Model.Params()
	if len(want) != len(got) {
		t.Fatalf("%d parameters back, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i].Name != got[i].Name || !slices.Equal(want[i].Value, got[i].Value) {
			t.Errorf("parameter %s differs after the round trip", want[i].Name)
		}
	}
	enc, err := back.Tokenizer.Encode("who?", "me.", true)
	if err != nil || len(enc.IDs) == 0 {
		t.Errorf("the reloaded tokenizer: %v %v", enc.IDs, err)
	}
}

func TestLoadSpanRefuses(t *testing.T) {
	fixture.Dir(t)
	drop := func(ts checkpoint.Tensors) { delete(ts, "bert.encoder.layer.1.output.dense.weight") }
	tests := []struct {
		name string
		dir  func(t *testing.T) string
		opt  Options
		want string // "" = loads
	}{
		{"missing encoder tensor", func(t *testing.T) string { return copyFixture(t, nil, drop) }, Options{}, "bert.encoder.layer.1.output.dense.weight"},
		{"missing encoder tensor allowed", func(t *testing.T) string { return copyFixture(t, nil, drop) }, Options{AllowMissing: true}, ""},
		{"NaN weight", func(t *testing.T) string {
			return copyFixture(t, nil, func(ts checkpoint.Tensors) {
				ts["bert.encoder.layer.0.attention.self.key.bias"].Data[3] = float32(math.NaN())
			})
		}, Options{}, "bert.encoder.layer.0.attention.self.key.bias holds NaN at index 3"},
		{"no tokenizer", func(t *testing.T) string { return copyFixture(t, []string{"vocab.txt", "tokenizer.json"}, nil) },
			Options{}, "has no tokenizer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.Resolver = offline
			_, err := LoadSpan(context.Background(), tc.dir(t), tc.opt)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
