package train

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models"
)

// modernCheckpoint writes a randomly initialised tiny ModernBERT
// classifier (hidden 32, 3 layers: global, local, local; a window of 4
// tokens so that it cuts the inputs) with the WordPiece vocabulary vocab
// into a directory, as a HuggingFace checkpoint of the modernbert family.
func modernCheckpoint(t *testing.T, vocab []string) string {
	t.Helper()
	dir := t.TempDir()
	vocabFile := filepath.Join(t.TempDir(), "vocab.txt")
	if err := os.WriteFile(vocabFile, []byte(strings.Join(vocab, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := models.TinyModernBERTConfig(len(vocab))
	cfg.HiddenSize, cfg.IntermediateSize, cfg.NumAttentionHeads = 32, 48, 2
	cfg.PadTokenID = slices.Index(vocab, "[PAD]")
	cfg.Extra["local_attention"] = json.RawMessage("4")
	m, _, err := models.NewClassifier(cfg, 2, nil, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(dir, vocabFile); err != nil {
		t.Fatal(err)
	}
	return dir
}

// gloveVocab is a WordPiece vocabulary of the sentiment fixture's words
// (those of its GloVe file) after BERT's special tokens.
func gloveVocab(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("testdata/tiny_glove.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if w, _, ok := strings.Cut(sc.Text(), " "); ok && !slices.Contains(vocab, w) {
			vocab = append(vocab, w)
		}
	}
	return vocab
}

func savedArchitecture(t *testing.T, dir string) (string, []string) {
	t.Helper()
	var cfg struct {
		ModelType     string   `json:"model_type"`
		Architectures []string `json:"architectures"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.ModelType, cfg.Architectures
}

// TestModernBERTRunTrainsAndScores trains a ModernBERT classifier on the
// sentiment fixture end to end — the i.i.d. baseline, then every method
// from it — and checks the runs score the suite and save a ModernBERT.
func TestModernBERTRunTrainsAndScores(t *testing.T) {
	ck := modernCheckpoint(t, gloveVocab(t))
	dir := t.TempDir()
	spec := tinySpec(ConfigIID)
	spec.Model = ModelSpec{Kind: "bert", Path: ck}
	spec.IIDHyper.LR, spec.Hyper.LR, spec.ProbeHyper.LR = 1e-3, 1e-3, 1e-3
	iid := filepath.Join(dir, "iid")
	res, err := Run(context.Background(), spec, iid)
	if err != nil {
		t.Fatal(err)
	}
	if res.SuiteScore == nil || res.G == nil || res.Steps != 4 {
		t.Errorf("IID result %+v: want a suite score, G and 2 epochs × 2 batches", res)
	}
	if mt, arch := savedArchitecture(t, filepath.Join(iid, "model")); mt != "modernbert" || !slices.Equal(arch, []string{"ModernBertForSequenceClassification"}) {
		t.Errorf("saved model_type %q, architectures %v, want a modernbert ModernBertForSequenceClassification", mt, arch)
	}
	spec = tinySpec(ConfigIIDThenT)
	spec.FromIID = filepath.Join(iid, "model")
	spec.Hyper.LR, spec.ProbeHyper.LR = 1e-3, 1e-3
	for _, method := range MethodNames() {
		spec.Method = method
		res, err := Run(context.Background(), spec, filepath.Join(dir, method))
		if err != nil {
			t.Fatalf("IID→T %s: %v", method, err)
		}
		if res.SuiteScore == nil {
			t.Errorf("IID→T %s: no suite score", method)
		}
	}
}

// TestModernBERTReadRunTrainsAndScores runs READ with a ModernBERT span
// model (ModernBertForQuestionAnswering, its head initialised from the
// sequence checkpoint's names as HuggingFace would) end to end.
func TestModernBERTReadRunTrainsAndScores(t *testing.T) {
	b, err := os.ReadFile("testdata/tiny_vocab.txt")
	if err != nil {
		t.Fatal(err)
	}
	ck := modernCheckpoint(t, strings.Fields(string(b)))
	dir := t.TempDir()
	spec := tinyReadSpec(ConfigIID)
	spec.Model = ModelSpec{Kind: "bert", Path: ck}
	iid := filepath.Join(dir, "iid")
	res, err := Run(context.Background(), spec, iid)
	if err != nil {
		t.Fatal(err)
	}
	if res.SuiteScore == nil || res.G == nil || res.Steps != 6 || len(res.IIDCorrect) != 8 {
		t.Errorf("IID result %+v: want a suite score, G, 6 steps and 8 i.i.d. test answers", res)
	}
	if mt, arch := savedArchitecture(t, filepath.Join(iid, "model")); mt != "modernbert" || !slices.Equal(arch, []string{"ModernBertForQuestionAnswering"}) {
		t.Errorf("saved model_type %q, architectures %v, want a modernbert ModernBertForQuestionAnswering", mt, arch)
	}
	spec = tinyReadSpec(ConfigIIDThenT)
	spec.FromIID, spec.MaxSteps = filepath.Join(iid, "model"), 3
	for _, method := range []string{"vanilla", "lp-ft"} {
		spec.Method = method
		if _, err := Run(context.Background(), spec, filepath.Join(dir, method)); err != nil {
			t.Fatalf("IID→T %s: %v", method, err)
		}
	}
}
