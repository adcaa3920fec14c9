package tokenize

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// linkDir makes a directory holding links to some of src's files, and
// writes the given extra files.
func linkDir(t *testing.T, src string, names []string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(filepath.Join(src, n), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	for n, s := range extra {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadPicksAsAutoTokenizer(t *testing.T) {
	root := shareddata.Path(t, "data/tokenizers")
	corpus := parityCorpus(t)
	tests := []struct {
		name   string
		dir    string
		want   string // the tokenizer's type
		golden string
	}{
		{"roberta-base: tokenizer.json", filepath.Join(root, "FacebookAI__roberta-base"), "*tokenize.HF", "roberta-base"},
		{"roberta-base: vocab.json + merges.txt", linkDir(t, filepath.Join(root, "FacebookAI__roberta-base"),
			[]string{"vocab.json", "merges.txt", "config.json", "tokenizer_config.json"}, nil), "*tokenize.HF", "roberta-base"},
		{"mBERT: tokenizer.json", filepath.Join(root, "google-bert__bert-base-multilingual-cased"), "*tokenize.WordPiece", "mbert-cased"},
		{"mBERT: vocab.txt + do_lower_case false", linkDir(t, filepath.Join(root, "google-bert__bert-base-multilingual-cased"),
			[]string{"vocab.txt"}, map[string]string{"tokenizer_config.json": `{"do_lower_case": false}`}), "*tokenize.WordPiece", "mbert-cased"},
		{"DeBERTa-v3: spm.model", filepath.Join(root, "microsoft__deberta-v3-base"), "*tokenize.SentencePiece", "deberta-v3"},
		{"ModernBERT: tokenizer.json", filepath.Join(root, "answerdotai__ModernBERT-base"), "*tokenize.HF", "modernbert"},
		{"XLM-R layout: sentencepiece.bpe.model", linkDir(t, "testdata/parity", nil, nil), "*tokenize.SentencePiece", "small-bpe-xlmr"},
	}
	abs, _ := filepath.Abs("testdata/parity/small-bpe.model")
	if err := os.Symlink(abs, filepath.Join(tests[len(tests)-1].dir, "sentencepiece.bpe.model")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk, err := Load(tc.dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := reflect.TypeOf(tk).String(); got != tc.want {
				t.Errorf("Load gave a %s, want a %s", got, tc.want)
			}
			checkParity(t, tk, tc.golden, corpus, 3000) // TestParity checks all of it
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"empty directory", nil, "has no tokenizer"},
		{"unknown normalizer", map[string]string{"tokenizer.json": `{"normalizer": {"type": "Nope"}, "model": {"type": "WordLevel", "vocab": {"a": 0}}}`}, `normalizer type "Nope" is not supported`},
		{"unknown pre-tokenizer", map[string]string{"tokenizer.json": `{"pre_tokenizer": {"type": "Nope"}, "model": {"type": "WordLevel", "vocab": {"a": 0}}}`}, `pre_tokenizer type "Nope"`},
		{"unknown post-processor", map[string]string{"tokenizer.json": `{"post_processor": {"type": "Nope"}, "model": {"type": "WordLevel", "vocab": {"a": 0}}}`}, `post_processor type "Nope"`},
		{"unknown model", map[string]string{"tokenizer.json": `{"model": {"type": "Nope", "vocab": {}}}`}, `model type "Nope"`},
		{"look-ahead regex", map[string]string{"tokenizer.json": `{"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a(?!b)"}, "behavior": "Isolated"}, "model": {"type": "WordLevel", "vocab": {"a": 0}}}`}, "not supported by Go's regexp"},
		{"bad config", map[string]string{"tokenizer_config.json": `{`, "vocab.txt": "[UNK]\n"}, "tokenizer_config.json"},
		{"spm for another model", map[string]string{"config.json": `{"model_type": "t5"}`, "spm.model": "x"}, `model_type "t5"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, s := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(dir, 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
