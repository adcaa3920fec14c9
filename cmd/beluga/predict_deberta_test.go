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
)

// TestPredictDebertaByHubIDOffline predicts with a DeBERTa-v3-shaped model
// named by hub id, from a HuggingFace cache laid out as huggingface_hub
// does, offline: the ids and logits are PyTorch's (the fixture of package
// models, whose vocab.txt names its ids).
func TestPredictDebertaByHubIDOffline(t *testing.T) {
	src := filepath.Join("..", "..", "models", "testdata", "deberta-v2")
	b, err := os.ReadFile(filepath.Join(src, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Texts []struct {
			Text     string    `json:"text"`
			InputIDs []int     `json:"input_ids"`
			Logits   []float64 `json:"logits"`
		}
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "hf")
	const commit = "9d3c2b1a0f9e8d7c6b5a4938271605f4e3d2c1b0"
	hubCacheFiles(t, filepath.Join(home, "hub"), "acme/deberta-v3-fixture", commit, src,
		[]string{"config.json", "model.safetensors", "vocab.txt"})
	in := filepath.Join(dir, "in.jsonl")
	var lines []string
	for _, x := range exp.Texts {
		b, _ := json.Marshal(map[string]string{"text": x.Text})
		lines = append(lines, string(b))
	}
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	env := []string{"HF_HOME=" + home, "HF_HUB_CACHE=", "HF_HUB_OFFLINE=1", "HF_ENDPOINT=http://127.0.0.1:1"}
	out := filepath.Join(dir, "out.jsonl")
	if code, msg := belugaEnv(t, env, "predict", "--model", "acme/deberta-v3-fixture", "--input", in, "-o", out); code != 0 {
		t.Fatalf("predict by hub id failed (%d): %s", code, msg)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	i, worst := 0, 0.0
	for ; sc.Scan(); i++ {
		var o struct {
			InputIDs []int     `json:"input_ids"`
			Logits   []float64 `json:"logits"`
		}
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(o.InputIDs, exp.Texts[i].InputIDs) {
			t.Fatalf("line %d: ids %v, want %v", i+1, o.InputIDs, exp.Texts[i].InputIDs)
		}
		for k, v := range exp.Texts[i].Logits {
			worst = math.Max(worst, math.Abs(o.Logits[k]-v))
		}
	}
	if i != len(exp.Texts) || worst > 1e-4 {
		t.Errorf("%d predictions of %d, logits off PyTorch's by up to %g", i, len(exp.Texts), worst)
	}
}
