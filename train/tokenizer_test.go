package train

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/models/tokenize/corpus"
)

// TestTinyWithTrainedTokenizer: a from-scratch model over a tokenizer
// trained on the task's own training texts trains, saves the tokenizer
// beside itself, and is read back (IID→T starts from it).
func TestTinyWithTrainedTokenizer(t *testing.T) {
	texts, _, err := corpus.File("testdata/tiny_train.tsv", "sentence", datasets.Dialect{})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"unigram", "wordpiece"} {
		t.Run(kind, func(t *testing.T) {
			trained, err := tokenize.Train(texts, tokenize.TrainOptions{Kind: kind, VocabSize: 60, MinFrequency: 1})
			if err != nil {
				t.Fatal(err)
			}
			b := trained.JSON
			dir := t.TempDir()
			tkPath := filepath.Join(dir, "task-"+kind+".json")
			if err := os.WriteFile(tkPath, b, 0o644); err != nil {
				t.Fatal(err)
			}
			spec := tinySpec(ConfigIID)
			spec.Model = ModelSpec{Kind: "bert-tiny", Tokenizer: tkPath}
			iidDir := filepath.Join(dir, "iid")
			if _, err := Run(context.Background(), spec, iidDir); err != nil {
				t.Fatal(err)
			}
			saved, err := os.ReadFile(filepath.Join(iidDir, "model", "tokenizer.json"))
			if err != nil || string(saved) != string(b) {
				t.Fatalf("the model directory's tokenizer.json differs from the trained one (%v)", err)
			}
			next := tinySpec(ConfigIIDThenT)
			next.Model = spec.Model
			next.FromIID = filepath.Join(iidDir, "model")
			if _, err := Run(context.Background(), next, filepath.Join(dir, "iid-t")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTokenizerIsForBertTinyOnly(t *testing.T) {
	spec := tinySpec(ConfigIID)
	spec.Model.Tokenizer = "task.json"
	if err := spec.Validate(); err == nil || !strings.Contains(err.Error(), "model.tokenizer is for kind bert-tiny") {
		t.Errorf("wordvec with a tokenizer: %v", err)
	}
}
