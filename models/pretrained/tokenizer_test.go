package pretrained

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// TestLoadTakesAnyTokenizer: a model directory's tokenizer is whichever
// its files make (here the fixture BERT given DeBERTa-v3's spm.model), and
// Save keeps those files, so the saved model loads with the same tokenizer.
func TestLoadTakesAnyTokenizer(t *testing.T) {
	spm := shareddata.Path(t, "data/tokenizers/microsoft__deberta-v3-base/spm.model")
	dir := copyFixture(t, []string{"tokenizer.json", "vocab.txt"}, nil)
	b, err := os.ReadFile(spm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "spm.model"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The fixture is a BERT: tokenizer_config.json names the tokenizer.
	cfg := `{"tokenizer_class": "DebertaV2Tokenizer", "do_lower_case": false}`
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(context.Background(), dir, Options{Resolver: offline, MaxLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	tk, ok := m.Tokenizer.(*tokenize.SentencePiece)
	if !ok {
		t.Fatalf("tokenizer %T, want *tokenize.SentencePiece", m.Tokenizer)
	}
	enc, err := tk.Encode("The movie was great.", "", false)
	if err != nil {
		t.Fatal(err)
	}
	// sentencepiece 0.1.97: [CLS] ▁The ▁movie ▁was ▁great . [SEP]
	if want := []int{1, 279, 1421, 284, 426, 260, 2}; !reflect.DeepEqual(enc.IDs, want) {
		t.Errorf("ids %v, want %v", enc.IDs, want)
	}
	out := t.TempDir()
	if err := m.Save(out); err != nil {
		t.Fatal(err)
	}
	m2, err := Load(context.Background(), out, Options{Resolver: offline, MaxLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	if m2.Tokenizer.(tokenize.Tokenizer).Fingerprint() != tk.Fingerprint() {
		t.Error("the saved model's tokenizer differs")
	}
}
