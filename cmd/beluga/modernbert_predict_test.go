package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictModernBERTByHubID predicts with the tiny ModernBERT fixture
// (models/testdata/modernbert/tiny, HuggingFace's eager forward) by hub id
// from a HuggingFace cache, offline: the registry picks the family from
// config.json's model_type, and the logits are HuggingFace's.
func TestPredictModernBERTByHubID(t *testing.T) {
	src := filepath.Join("..", "..", "models", "testdata", "modernbert", "tiny")
	var exp struct {
		Texts     [][]int     `json:"texts"`
		LogitsCLS [][]float64 `json:"logits_cls"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(src, "expected.json")), &exp); err != nil {
		t.Fatal(err)
	}
	// The fixture's vocabulary spells id i as the word "w<i>".
	var texts []string
	for _, ids := range exp.Texts {
		var words []string
		for _, id := range ids[1 : len(ids)-1] {
			words = append(words, fmt.Sprintf("w%d", id))
		}
		texts = append(texts, strings.Join(words, " "))
	}
	env := offlineHub(t, "acme/modernbert-tiny", src)
	got := runPredict(t, env, "acme/modernbert-tiny", textInputs(texts))
	checkPredictions(t, got, exp.Texts, exp.LogitsCLS, "HuggingFace's")
}
