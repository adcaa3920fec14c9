package main

import (
	"encoding/json"
	"path/filepath"
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
			var exp struct {
				Texts  []string    `json:"texts"`
				Logits [][]float64 `json:"logits"`
				Score  []float32   `json:"score.weight"`
			}
			if err := json.Unmarshal(readFile(t, filepath.Join(fixtures, family, "expected.json")), &exp); err != nil {
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
				copyFile(t, filepath.Join(fixtures, from, name), filepath.Join(src, name))
			}
			env := offlineHub(t, "acme/tiny-"+family, src)
			got := runPredict(t, env, "acme/tiny-"+family, textInputs(exp.Texts))
			checkPredictions(t, got, nil, exp.Logits, "transformers'")
		})
	}
}
