package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models"
)

// debertaModelDir writes a small DeBERTa-v3-shaped model (hidden 32, 16
// relative buckets) with the WordPiece vocabulary of the tiny fixtures, as
// a HuggingFace directory a run names with kind "bert".
func debertaModelDir(t *testing.T) string {
	t.Helper()
	vocab := "testdata/tiny_vocab.txt"
	b, err := os.ReadFile(vocab)
	if err != nil {
		t.Fatal(err)
	}
	cfg := models.DebertaTinyConfig(len(strings.Fields(string(b))))
	cfg.HiddenSize, cfg.IntermediateSize, cfg.MaxPositionEmbeddings = 32, 64, 64
	cfg.Extra["position_buckets"] = json.RawMessage("16")
	m, _, err := models.NewClassifier(cfg, 2, nil, 7)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "deberta")
	if err := m.Save(dir, vocab); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRunDeberta trains and scores a DeBERTa classifier under every
// configuration and method, from a HuggingFace directory of the family.
func TestRunDeberta(t *testing.T) {
	model := debertaModelDir(t)
	dir := t.TempDir()
	iid := tinySpec(ConfigIID)
	iid.Model = ModelSpec{Kind: "bert", Path: model}
	res, err := Run(context.Background(), iid, filepath.Join(dir, "iid"))
	if err != nil {
		t.Fatal(err)
	}
	if res.SuiteScore == nil || res.G == nil || res.Steps != 4 {
		t.Errorf("IID result %+v: want a suite score, G and 4 steps", res)
	}
	var cfg struct {
		ModelType     string `json:"model_type"`
		Architectures []string
	}
	b, _ := os.ReadFile(filepath.Join(dir, "iid", "model", "config.json"))
	json.Unmarshal(b, &cfg)
	if cfg.ModelType != "deberta-v2" || !slices.Equal(cfg.Architectures, []string{"DebertaV2ForSequenceClassification"}) {
		t.Errorf("saved model: %+v", cfg)
	}
	for _, config := range []string{ConfigIIDThenT, ConfigIIDPlusT} {
		spec := tinySpec(config)
		spec.Model = iid.Model
		spec.MaxSteps = 2
		if config != ConfigIIDPlusT {
			spec.FromIID = filepath.Join(dir, "iid", "model")
		}
		for _, method := range MethodNames() {
			spec.Method = method
			if _, err := Run(context.Background(), spec, filepath.Join(dir, config+"-"+method)); err != nil {
				t.Fatalf("%s %s: %v", config, method, err)
			}
		}
	}
}

// TestReadRunDeberta trains and scores DeBERTa's span model on the tiny
// SQuAD fixtures (READ), from a DeBERTa directory.
func TestReadRunDeberta(t *testing.T) {
	dir := t.TempDir()
	spec := tinyReadSpec(ConfigIID)
	spec.Model = ModelSpec{Kind: "bert", Path: debertaModelDir(t)}
	res, err := Run(context.Background(), spec, filepath.Join(dir, "iid"))
	if err != nil {
		t.Fatal(err)
	}
	if res.SuiteScore == nil || res.G == nil || res.Steps != 6 || len(res.IIDCorrect) != 8 {
		t.Errorf("IID result %+v: want a suite score, G, 6 steps and 8 i.i.d. test answers", res)
	}
	var cfg struct{ Architectures []string }
	b, _ := os.ReadFile(filepath.Join(dir, "iid", "model", "config.json"))
	json.Unmarshal(b, &cfg)
	if !slices.Equal(cfg.Architectures, []string{"DebertaV2ForQuestionAnswering"}) {
		t.Errorf("saved span model architectures %v", cfg.Architectures)
	}
	for _, method := range []string{"vanilla", "lp", "irm"} {
		spec := tinyReadSpec(ConfigIIDThenIT)
		spec.Model, spec.FromIID, spec.MaxSteps, spec.Method = ModelSpec{Kind: "bert"}, filepath.Join(dir, "iid", "model"), 2, method
		if _, err := Run(context.Background(), spec, filepath.Join(dir, "it-"+method)); err != nil {
			t.Fatalf("iid-t %s: %v", method, err)
		}
	}
}
