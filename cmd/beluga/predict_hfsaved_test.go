package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
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
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rows = append(rows, strings.TrimSpace(strings.SplitN(sc.Text(), "\t", 2)[0]))
	}
	f.Close()
	rows = rows[1:] // the header
	type input struct {
		Text     string  `json:"text"`
		TextPair *string `json:"text_pair,omitempty"`
	}
	var inputs []input
	for i := 0; i < 64; i++ {
		inputs = append(inputs, input{Text: rows[i]})
	}
	for i := 0; i < 8; i++ {
		inputs = append(inputs, input{Text: rows[64+2*i], TextPair: &rows[65+2*i]})
	}
	in := filepath.Join(t.TempDir(), "inputs.jsonl")
	var b strings.Builder
	for _, x := range inputs {
		line, _ := json.Marshal(x)
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
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
			out := filepath.Join(t.TempDir(), "preds.jsonl")
			if code, msg := beluga(t, "predict", "--model", fixture, "--input", in, "-o", out, "--batch-size", "10"); code != 0 {
				t.Fatalf("exit %d: %s", code, msg)
			}
			pf, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer pf.Close()
			sc := bufio.NewScanner(pf)
			sc.Buffer(nil, 1<<20)
			worst, i := 0.0, 0
			for ; sc.Scan(); i++ {
				var o struct {
					InputIDs []int     `json:"input_ids"`
					Logits   []float64 `json:"logits"`
				}
				if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(o.InputIDs, exp.InputIDs[i]) {
					t.Errorf("input %d: ids %v, transformers' %v", i+1, o.InputIDs, exp.InputIDs[i])
				}
				for j := range o.Logits {
					worst = math.Max(worst, math.Abs(o.Logits[j]-exp.Logits[i][j]))
				}
			}
			if i != len(inputs) {
				t.Fatalf("%d predictions for %d inputs", i, len(inputs))
			}
			t.Logf("%s: %d texts, max |logit − HF| = %.2g", dir, i, worst)
			if worst > 1e-4 {
				t.Errorf("max logit difference %.3g, want ≤ 1e-4", worst)
			}
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
				b, err := os.ReadFile(filepath.Join(src, name))
				if err != nil {
					t.Fatal(err)
				}
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
