package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestPredictDebertaByHubIDOffline predicts with a DeBERTa-v3-shaped model
// named by hub id, from a HuggingFace cache laid out as huggingface_hub
// does, offline: the ids and logits are PyTorch's (the fixture of package
// models, whose vocab.txt names its ids).
func TestPredictDebertaByHubIDOffline(t *testing.T) {
	src := filepath.Join("..", "..", "models", "testdata", "deberta-v2")
	var exp struct {
		Texts []struct {
			Text     string    `json:"text"`
			InputIDs []int     `json:"input_ids"`
			Logits   []float64 `json:"logits"`
		}
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(src, "expected.json")), &exp); err != nil {
		t.Fatal(err)
	}
	var texts []string
	var ids [][]int
	var logits [][]float64
	for _, x := range exp.Texts {
		texts, ids, logits = append(texts, x.Text), append(ids, x.InputIDs), append(logits, x.Logits)
	}
	env := offlineHub(t, "acme/deberta-v3-fixture", src, "config.json", "model.safetensors", "vocab.txt")
	got := runPredict(t, env, "acme/deberta-v3-fixture", textInputs(texts))
	checkPredictions(t, got, ids, logits, "PyTorch's")
}
