package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// TestPredictDecodersByHubID: a decoder classifier of each family, named by
// hub id and read from an HF cache offline, predicts from texts the logits
// transformers' own …ForSequenceClassification gives (the GPT-2 fixture's
// byte-level BPE tokenizer.json, the score head of expected.json).
func TestPredictDecodersByHubID(t *testing.T) {
	for _, family := range []string{"gpt2", "llama", "qwen2"} {
		t.Run(family, func(t *testing.T) {
			fixtures := filepath.Join("..", "..", "models", "testdata", "decoders")
			raw, err := os.ReadFile(filepath.Join(fixtures, family, "expected.json"))
			if err != nil {
				t.Fatal(err)
			}
			var exp struct {
				Texts  []string    `json:"texts"`
				Logits [][]float64 `json:"logits"`
				Score  []float32   `json:"score.weight"`
			}
			if err := json.Unmarshal(raw, &exp); err != nil {
				t.Fatal(err)
			}
			ck, err := checkpoint.LoadDir(filepath.Join(fixtures, family))
			if err != nil {
				t.Fatal(err)
			}
			src := t.TempDir()
			ck.Weights["score.weight"] = &checkpoint.Tensor{Shape: []int{2, len(exp.Score) / 2}, Data: exp.Score}
			if err := checkpoint.WriteSafetensors(filepath.Join(src, "model.safetensors"), ck.Weights); err != nil {
				t.Fatal(err)
			}
			for name, from := range map[string]string{"config.json": family, "tokenizer.json": "gpt2"} {
				b, err := os.ReadFile(filepath.Join(fixtures, from, name))
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(src, name), b, 0o644)
			}
			dir := t.TempDir()
			home := filepath.Join(dir, "hf")
			hubCacheCopy(t, filepath.Join(home, "hub"), "acme/tiny-"+family, "0123456789abcdef0123456789abcdef01234567", src)
			var lines []string
			for _, s := range exp.Texts {
				b, _ := json.Marshal(map[string]string{"text": s})
				lines = append(lines, string(b))
			}
			in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
			os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
			env := []string{"HF_HOME=" + home, "HF_HUB_CACHE=", "HF_HUB_OFFLINE=1", "HF_ENDPOINT=http://127.0.0.1:1"}
			if code, msg := belugaEnv(t, env, "predict", "--model", "acme/tiny-"+family, "--input", in, "-o", out); code != 0 {
				t.Fatalf("predict --model acme/tiny-%s failed (%d): %s", family, code, msg)
			}
			got, _ := os.ReadFile(out)
			rows := strings.Split(strings.TrimSpace(string(got)), "\n")
			if len(rows) != len(lines) {
				t.Fatalf("%d predictions for %d inputs", len(rows), len(lines))
			}
			for i, line := range rows {
				var o struct{ Logits []float64 }
				if err := json.Unmarshal([]byte(line), &o); err != nil {
					t.Fatal(err)
				}
				for k, w := range exp.Logits[i] {
					if d := o.Logits[k] - w; d > 1e-4 || d < -1e-4 {
						t.Errorf("input %d logit %d = %g, transformers' %g", i, k, o.Logits[k], w)
					}
				}
			}
		})
	}
}
