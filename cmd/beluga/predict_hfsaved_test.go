package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// TestPredictHFSavedCheckpoints: `beluga predict` on each checkpoint
// HuggingFace transformers' save_pretrained wrote (models/testdata/hfsaved,
// with its tokenizer files as the slow tokenizers saved them) tokenizes 64
// SST-2 dev sentences and 8 pairs to transformers' ids and predicts
// transformers' logits within 1e-4. The texts are read from the shared
// data (the fixture names the rows); the test skips without it.
func TestPredictHFSavedCheckpoints(t *testing.T) {
	dev := shareddata.Path(t, "data/sst2/dev.tsv")
	var rows []string
	for _, line := range strings.Split(string(readFile(t, dev)), "\n")[1:] { // after the header
		rows = append(rows, strings.TrimSpace(strings.SplitN(line, "\t", 2)[0]))
	}
	inputs := textInputs(rows[:64])
	for i := 0; i < 8; i++ {
		inputs = append(inputs, predictInput{Text: rows[64+2*i], TextPair: &rows[65+2*i]})
	}
	for _, dir := range []string{"bert", "electra", "roberta", "distilbert", "deberta-v2",
		"bert-sharded-bin", "bert-sharded-safetensors", "bert-legacy", "bert-fp16", "bert-bf16"} {
		t.Run(dir, func(t *testing.T) {
			fixture := filepath.Join("..", "..", "models", "testdata", "hfsaved", dir)
			var exp struct {
				InputIDs [][]int     `json:"input_ids"`
				Logits   [][]float64 `json:"logits"`
			}
			eb, err := os.ReadFile(filepath.Join(fixture, "expected.json"))
			if err != nil {
				eb, err = os.ReadFile(filepath.Join(fixture, "..", "bert", "expected.json"))
			}
			if err != nil || json.Unmarshal(eb, &exp) != nil || len(exp.Logits) != len(inputs) {
				t.Fatalf("expected.json: %v (%d rows for %d inputs)", err, len(exp.Logits), len(inputs))
			}
			got := runPredict(t, nil, fixture, inputs, "--batch-size", "10")
			checkPredictions(t, got, exp.InputIDs, exp.Logits, "transformers'")
		})
	}
}

// TestPredictAbsurdConfigRefused: a config.json with absurd sizes is
// refused with the estimate and the limit, exit status 1 and no output —
// not an out-of-memory crash (exit 2 and a goroutine dump).
func TestPredictAbsurdConfigRefused(t *testing.T) {
	src := filepath.Join("..", "..", "models", "testdata", "hfsaved", "bert")
	in := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(in, []byte(`{"text": "a fine film"}`+"\n"), 0o644)
	for _, tc := range []struct{ field, value, want string }{
		{"hidden_size", "1000000000", "would take about"},
		{"num_hidden_layers", "1000000", "would take about"},
		{"hidden_size", "1e9", "would take about"},
		{"hidden_size", "1e300", `field "hidden_size": number 1e300, want a whole number`},
	} {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{"config.json", "pytorch_model.bin", "vocab.txt", "tokenizer_config.json"} {
				b := readFile(t, filepath.Join(src, name))
				if name == "config.json" {
					var cfg map[string]any
					json.Unmarshal(b, &cfg)
					delete(cfg, tc.field)
					b, _ = json.Marshal(cfg)
					b = append(b[:len(b)-1], []byte(`,"`+tc.field+`":`+tc.value+`}`)...)
				}
				os.WriteFile(filepath.Join(dir, name), b, 0o644)
			}
			out := filepath.Join(t.TempDir(), "out.jsonl")
			code, msg := beluga(t, "predict", "--model", dir, "--input", in, "-o", out)
			if code != 1 || !strings.Contains(msg, tc.want) || (tc.want == "would take about" && !strings.Contains(msg, "available")) {
				t.Errorf("exit %d: %s; want exit 1 and %q", code, msg, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("an output was written")
			}
		})
	}
}
