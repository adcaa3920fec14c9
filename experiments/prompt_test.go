package experiments

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

// promptSpec is a SENT sweep of package train's fixtures with the prompted
// configurations (the tiny random GPT-2 fixture) beside a trained one.
func promptSpec(t *testing.T, configs, scores, grid string) *Spec {
	t.Helper()
	tiny, data := trainFixtures(t, map[string]string{"tiny_train.tsv": "train.tsv", "tiny_dev.tsv": "dev.tsv"})
	gpt2, err := filepath.Abs("../models/testdata/decoders/gpt2")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseSpec([]byte(`
tasks: [{name: SENT, data: ` + data + `, suite: ` + filepath.Join(tiny, "tiny_suite.jsonl") + `}]
model: {name: wordvec, options: {glove: ` + filepath.Join(tiny, "tiny_glove.txt") + `, hidden: 8, max_length: 16}}
configurations: ` + configs + `
methods: [vanilla]
scores: ` + scores + `
seeds: [1, 2]
budget: {max_steps: 2}
prompt:
  model: ` + gpt2 + `
  templates:
    - {name: review, input: "{text} =", separator: "\n"}
    - {name: plain, instruction: "Mood?", input: "{text}:", separator: "\n"}
  verbalizers: {negative: " bad", positive: " good"}
  k: 1
grid: ` + grid + `
`))
	if err != nil {
		t.Fatal(err)
	}
	spec.Out = t.TempDir()
	return spec
}

// runSweep expands and executes a spec into its store.
func runSweep(t *testing.T, spec *Spec) ([]Run, *Store) {
	t.Helper()
	if err := (&TrainRunner{}).Check(spec); err != nil {
		t.Fatal(err)
	}
	runs, err := Expand(context.Background(), spec, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	store := &Store{Dir: spec.OutDir()}
	sum, err := Execute(context.Background(), store, runs, &TrainRunner{Store: store}, Options{Jobs: 1, Logger: discardLogger()})
	if err != nil || sum.Err() != nil {
		t.Fatalf("sweep: %+v, %v, %v", sum, err, sum.Err())
	}
	return runs, store
}

// No demonstration of a held-out functionality, class or test type ever
// enters a prompt: over every run of a class and a type hold-out sweep of
// the k-shot configurations (two seeds, two values of k), each
// demonstration trained.json lists is a T_train case (or i.i.d. row) of a
// functionality the fold keeps — and the runs do draw suite
// demonstrations, so the check is not vacuous.
func TestPromptDemonstrationsNeverHeldOut(t *testing.T) {
	spec := promptSpec(t, "[k-shot IID+T]", "[seen, class, type]", "{prompt.k: [2, 4]}")
	runs, store := runSweep(t, spec)
	suite, err := suites.Open(filepath.Join("..", "train", "testdata", "tiny_suite.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*suites.Functionality{}
	for _, f := range suite.Functionalities {
		byName[f.Name] = f
	}
	prompted, withSuiteDemos, folds := 0, 0, map[string]bool{}
	for _, r := range runs {
		if r.Method != train.MethodPrompt {
			continue
		}
		prompted++
		rec, err := store.Trained(r.ID())
		if err != nil || rec == nil {
			t.Fatalf("%s: trained.json: %v", r.Label(), err)
		}
		if len(rec.Demonstrations) != r.Train.Prompt.K {
			t.Errorf("%s: %d demonstrations, want k=%d", r.Label(), len(rec.Demonstrations), r.Train.Prompt.K)
		}
		for _, d := range rec.Demonstrations {
			if d.Source != "suite T_train" {
				continue
			}
			withSuiteDemos++
			f := byName[d.Functionality]
			if f == nil {
				t.Fatalf("%s: demonstration of unknown functionality %q", r.Label(), d.Functionality)
			}
			if r.Train.HeldOut == nil {
				continue
			}
			folds[r.Fold] = true
			var unit string
			switch r.Score {
			case ScoreClass:
				unit = f.Class
			case ScoreType:
				unit = string(f.Type)
			}
			if unit == r.Fold {
				t.Errorf("%s: demonstration %q of functionality %q (%s %s) is held out", r.Label(), d.Text, f.Name, r.Score, r.Fold)
			}
			var split suites.Split
			for _, c := range f.Cases {
				if c.ID == d.Case {
					split = c.Split
				}
			}
			if split != suites.SplitTrain {
				t.Errorf("%s: demonstration from case %d of %q in split %q, not T_train", r.Label(), d.Case, f.Name, split)
			}
		}
	}
	if prompted == 0 || withSuiteDemos == 0 || len(folds) < 2 {
		t.Fatalf("%d prompted runs, %d suite demonstrations, folds %v: the check saw nothing", prompted, withSuiteDemos, folds)
	}
}
