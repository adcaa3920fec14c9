package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
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
	b, err := os.ReadFile(filepath.Join(src, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "hf")
	hubCacheCopy(t, filepath.Join(home, "hub"), "acme/modernbert-tiny", "0123456789abcdef0123456789abcdef01234567", src)
	// The fixture's vocabulary spells id i as the word "w<i>".
	var lines []string
	for _, ids := range exp.Texts {
		var words []string
		for _, id := range ids[1 : len(ids)-1] {
			words = append(words, fmt.Sprintf("w%d", id))
		}
		line, _ := json.Marshal(map[string]string{"text": strings.Join(words, " ")})
		lines = append(lines, string(line))
	}
	in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	env := []string{"HF_HOME=" + home, "HF_HUB_CACHE=", "HF_HUB_OFFLINE=1", "HF_ENDPOINT=http://127.0.0.1:1"}
	if code, msg := belugaEnv(t, env, "predict", "--model", "acme/modernbert-tiny", "--input", in, "-o", out); code != 0 {
		t.Fatalf("predict failed (%d): %s", code, msg)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	i := 0
	for ; sc.Scan(); i++ {
		var row struct {
			InputIDs []int     `json:"input_ids"`
			Logits   []float64 `json:"logits"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if i >= len(exp.Texts) {
			break
		}
		if !slices.Equal(row.InputIDs, exp.Texts[i]) {
			t.Errorf("text %d: ids %v, want %v", i, row.InputIDs, exp.Texts[i])
		}
		for k, v := range row.Logits {
			if math.Abs(v-exp.LogitsCLS[i][k]) > 1e-4 {
				t.Errorf("text %d: logits %v, want HuggingFace's %v", i, row.Logits, exp.LogitsCLS[i])
				break
			}
		}
	}
	if i != len(exp.Texts) {
		t.Errorf("%d predictions for %d texts", i, len(exp.Texts))
	}
}
