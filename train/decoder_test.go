package train

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// decoderCheckpoint writes a decoder family's classifier — the random tiny
// language model of models/testdata/decoders/<family> with a score head
// drawn afresh — with the GPT-2 fixture's byte-level BPE tokenizer.json.
func decoderCheckpoint(t *testing.T, family string) string {
	t.Helper()
	src := filepath.Join("..", "models", "testdata", "decoders")
	ck, err := checkpoint.LoadDir(filepath.Join(src, family))
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := models.NewClassifier(ck.Config, 2, ck.Weights, 7)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(dir, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, "gpt2", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDecoderRunTrainsAndScores trains each decoder family's classifier
// (…ForSequenceClassification: the last real token's state, a score head)
// on the sentiment fixture end to end — the i.i.d. baseline, then every
// configuration under every method (LP and LP-FT also on cached features),
// as TestFamiliesTrainAndScore runs the encoders — and checks the runs
// score the suite and save the family's classifier.
func TestDecoderRunTrainsAndScores(t *testing.T) {
	for _, fam := range []struct{ family, arch string }{
		{"gpt2", "GPT2ForSequenceClassification"},
		{"llama", "LlamaForSequenceClassification"},
		{"qwen2", "Qwen2ForSequenceClassification"},
	} {
		t.Run(fam.family, func(t *testing.T) {
			ck := decoderCheckpoint(t, fam.family)
			dir := t.TempDir()
			base := tinySpec(ConfigIID)
			base.Model = ModelSpec{Kind: "bert", Path: ck}
			base.MaxSteps = 2
			base.IIDHyper.LR, base.Hyper.LR, base.ProbeHyper.LR = 1e-3, 1e-3, 1e-3
			iid := filepath.Join(dir, "iid")
			res, err := Run(context.Background(), base, iid)
			if err != nil {
				t.Fatal(err)
			}
			if res.SuiteScore == nil || res.G == nil || res.Steps != 2 {
				t.Errorf("IID result %+v: want a suite score, G and 2 steps", res)
			}
			if mt, arch := savedArchitecture(t, filepath.Join(iid, "model")); mt != fam.family || !slices.Equal(arch, []string{fam.arch}) {
				t.Errorf("saved model_type %q, architectures %v, want %s %s", mt, arch, fam.family, fam.arch)
			}
			for _, config := range []string{ConfigIIDThenT, ConfigIIDThenIT, ConfigIIDPlusT} {
				for _, method := range MethodNames() {
					spec := base
					spec.Configuration, spec.Method = config, method
					if config != ConfigIIDPlusT {
						spec.FromIID = filepath.Join(iid, "model")
					}
					runs := [][]string{nil}
					if method == "lp" || method == "lp-ft" {
						runs = append(runs, []string{CorrectLPFrozenEval})
					}
					for i, corr := range runs {
						spec.Corrections = corr
						res, err := Run(context.Background(), spec, filepath.Join(dir, config+"-"+method+string(rune('a'+i))))
						if err != nil {
							t.Fatalf("%s %s %v: %v", config, method, corr, err)
						}
						if res.SuiteScore == nil {
							t.Errorf("%s %s %v: no suite score", config, method, corr)
						}
					}
				}
			}
		})
	}
}
