package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// familyModels are the tiny checkpoints of every BERT-like model family
// (models/testdata/families, HuggingFace layout, WordPiece vocabularies).
var familyModels = []string{"electra", "roberta", "xlm-roberta", "distilbert"}

// TestFamiliesTrainAndScore runs a sequence-classification task and READ
// end to end from each family's checkpoint: the i.i.d. baseline, then every
// configuration under every method (LP and LP-FT also on cached features),
// each scored on the suite; the saved model is of its family. BERT's runs
// are TestRunConfigurations' and TestReadRunConfigurations'.
func TestFamiliesTrainAndScore(t *testing.T) {
	for _, family := range familyModels {
		t.Run(family, func(t *testing.T) {
			src := filepath.Join("..", "models", "testdata", "families", family)
			for _, task := range []string{"sentiment", TaskRead} {
				base := tinySpec(ConfigIID)
				if task == TaskRead {
					base = tinyReadSpec(ConfigIID)
				}
				base.Model = ModelSpec{Kind: "bert", Path: src}
				base.MaxSteps = 2
				dir := t.TempDir()
				iid := filepath.Join(dir, "iid")
				res, err := Run(context.Background(), base, iid)
				if err != nil {
					t.Fatalf("%s i.i.d.: %v", task, err)
				}
				if res.SuiteScore == nil || res.G == nil || res.Steps != 2 {
					t.Errorf("%s i.i.d. result %+v: want a suite score, G and 2 steps", task, res)
				}
				var cfg struct {
					ModelType string `json:"model_type"`
				}
				b, _ := os.ReadFile(filepath.Join(iid, "model", "config.json"))
				if json.Unmarshal(b, &cfg); cfg.ModelType != family {
					t.Errorf("%s: saved model_type %q, want %q", task, cfg.ModelType, family)
				}
				for _, config := range []string{ConfigIIDThenT, ConfigIIDThenIT, ConfigIIDPlusT} {
					for _, method := range MethodNames() {
						if task == TaskRead && method == "irm-domainbed" {
							continue // refused for READ (TestReadRefuses)
						}
						spec := base
						spec.Configuration, spec.Method = config, method
						if config != ConfigIIDPlusT {
							spec.FromIID = filepath.Join(iid, "model")
						}
						runs := [][]string{nil}
						if (method == "lp" || method == "lp-ft") && task != TaskRead {
							runs = append(runs, []string{CorrectLPFrozenEval})
						}
						for i, corr := range runs {
							spec.Corrections = corr
							out := filepath.Join(dir, config+"-"+method+string(rune('a'+i)))
							res, err := Run(context.Background(), spec, out)
							if err != nil {
								t.Fatalf("%s %s %s %v: %v", task, config, method, corr, err)
							}
							if res.SuiteScore == nil {
								t.Errorf("%s %s %s %v: no suite score", task, config, method, corr)
							}
						}
					}
				}
			}
		})
	}
}
