package pretrained

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// decoderDir copies the decoder fixture dir's config and tokenizer files
// into a new directory with the given weights as model.safetensors.
func decoderDir(t *testing.T, fixture string, weights checkpoint.Tensors) string {
	t.Helper()
	src := filepath.Join("..", "testdata", "decoders", fixture)
	dir := t.TempDir()
	for _, n := range []string{"config.json", "tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkpoint.WriteSafetensors(filepath.Join(dir, "model.safetensors"), weights); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLoadCausalLM: GPT-2 as save_pretrained wrote it (GPT2LMHeadModel,
// its causal-mask buffers and tied lm_head checked) and as a bare
// GPT2Model state dict (the hub's openai-community/gpt2 layout: no
// "transformer." prefix, no lm_head) load to the same model, with the
// tokenizer; an encoder family, and a Llama without its untied lm_head,
// are refused.
func TestLoadCausalLM(t *testing.T) {
	ctx := context.Background()
	full, err := LoadCausalLM(ctx, filepath.Join("..", "testdata", "decoders", "gpt2"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(full.Report.Checked, "lm_head.weight") || !slices.Contains(full.Report.Checked, "transformer.h.1.attn.bias") {
		t.Errorf("report %+v: want lm_head.weight and the causal masks checked", full.Report)
	}
	ck, err := checkpoint.LoadDir(filepath.Join("..", "testdata", "decoders", "gpt2"))
	if err != nil {
		t.Fatal(err)
	}
	bare := checkpoint.Tensors{}
	for n, w := range ck.Weights {
		if n != "lm_head.weight" {
			bare[strings.TrimPrefix(n, "transformer.")] = w
		}
	}
	lm, err := LoadCausalLM(ctx, decoderDir(t, "gpt2", bare), Options{})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := lm.Tokenizer.Encode("The movie was good.", "", false)
	if err != nil {
		t.Fatal(err)
	}
	b := models.NewBatch([]models.Encoding{enc})
	want, err := full.Model.NextLogProbs(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := lm.Model.NextLogProbs(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(got[0]) != len(enc.IDs)-1 {
		t.Errorf("bare state dict: log-probabilities %v, want %v", got, want)
	}
	if _, err := LoadCausalLM(ctx, filepath.Join("..", "testdata", "families", "bert"), Options{}); err == nil || !strings.Contains(err.Error(), "encoder family") {
		t.Errorf("bert: error %v, want a refusal as an encoder family", err)
	}
	lck, err := checkpoint.LoadDir(filepath.Join("..", "testdata", "decoders", "llama"))
	if err != nil {
		t.Fatal(err)
	}
	delete(lck.Weights, "lm_head.weight")
	dir := decoderDir(t, "llama", lck.Weights)
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), mustRead(t, filepath.Join("..", "testdata", "decoders", "gpt2", "tokenizer.json")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCausalLM(ctx, dir, Options{}); err == nil || !strings.Contains(err.Error(), "lm_head.weight") {
		t.Errorf("llama without lm_head: error %v, want one naming lm_head.weight", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestScoreTexts: scoring texts gives Score's log-likelihoods on the ids
// the tokenizer gives each part alone.
func TestScoreTexts(t *testing.T) {
	lm, err := LoadCausalLM(context.Background(), filepath.Join("..", "testdata", "decoders", "gpt2"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(s string) []int {
		enc, err := lm.Tokenizer.Encode(s, "", false)
		if err != nil {
			t.Fatal(err)
		}
		return enc.IDs
	}
	prefix := "It's not a bad film, is it? Great\n"
	items := []TextItem{{Context: "The movie was good.", Options: []string{" Great", " not"}}, {Context: "I don't think", Options: []string{" good", " bad"}}}
	got, _, err := lm.ScoreTexts(prefix, items, models.ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The same items in one call: the same batches, so the same bits on
	// every backend (OpenBLAS's bits for a row depend on its batch).
	var sis []models.ScoreItem
	for _, it := range items {
		si := models.ScoreItem{Context: ids(it.Context)}
		for _, o := range it.Options {
			si.Options = append(si.Options, ids(o))
		}
		sis = append(sis, si)
	}
	want, _, err := lm.Model.Score(ids(prefix), sis, models.ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ScoreTexts %v, Score on the parts' ids %v", got, want)
	}
}

// TestPlainIDsDropSpecials: a context's or option's ids carry none of the
// special tokens the tokenizer adds around an input (BERT's [CLS] … [SEP]
// here; a Llama's BOS), which would otherwise sit inside the prompt.
func TestPlainIDsDropSpecials(t *testing.T) {
	tk, err := tokenize.Load(filepath.Join("..", "testdata", "families", "bert"), 0)
	if err != nil {
		t.Fatal(err)
	}
	lm := &LM{Tokenizer: tk}
	enc, err := tk.Encode("the movie was good", "", false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := lm.plainIDs("the movie was good")
	if err != nil {
		t.Fatal(err)
	}
	if want := enc.IDs[1 : len(enc.IDs)-1]; !reflect.DeepEqual(got, want) {
		t.Errorf("plain ids %v, want %v (of %v)", got, want, enc.IDs)
	}
}
