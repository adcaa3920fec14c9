package experiments

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/train"
)

// trainFixtures returns package train's testdata directory and a data
// directory holding copies of some of its files under a dataset's names.
func trainFixtures(t *testing.T, copies map[string]string) (tiny, data string) {
	t.Helper()
	tiny, err := filepath.Abs("../train/testdata")
	if err != nil {
		t.Fatal(err)
	}
	data = t.TempDir()
	for src, dst := range copies {
		b, err := os.ReadFile(filepath.Join(tiny, src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tiny, data
}

// TestSweepSearchesBeforeItsRuns: with a search grid, each configuration ×
// method is tuned on T_val in a search run of the store, and its seen and
// held-out runs train with the choice; LP-FT fine-tunes with vanilla's
// choice and probes with LP's in held-out runs, with BeLUGA's hard-coded
// row in its seen run.
func TestSweepSearchesBeforeItsRuns(t *testing.T) {
	tiny, data := trainFixtures(t, map[string]string{"tiny_train.tsv": "train.tsv", "tiny_dev.tsv": "dev.tsv"})
	spec, err := ParseSpec([]byte(`
tasks: [{name: SENT, data: ` + data + `, suite: ` + filepath.Join(tiny, "tiny_suite.jsonl") + `, folds: {class: [Negation]}}]
model: {name: wordvec, options: {glove: ` + filepath.Join(tiny, "tiny_glove.txt") + `, hidden: 8, max_length: 16}}
configurations: [IID+T]
methods: [vanilla, lp-ft]
scores: [seen, class]
grid: {iid_epochs: [1], iid_batch_size: [4], iid_lr: [0.01]}
search: {lr: [0.01, 0.000001], lp_lr: [0.05], batch_size: [4], epochs: [1]}
`))
	if err != nil {
		t.Fatal(err)
	}
	spec.Out = t.TempDir()
	runs, err := Expand(context.Background(), spec, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	searches := 0
	for _, r := range runs {
		if r.Score == ScoreSearch {
			searches++
		}
	}
	// vanilla's search (shared by LP-FT) and LP's (LP-FT's held-out probing).
	if searches != 2 || len(runs) != 7 {
		t.Fatalf("%d runs with %d searches, want 7 with 2", len(runs), searches)
	}
	store := &Store{Dir: spec.OutDir()}
	sum, err := Execute(context.Background(), store, runs, &TrainRunner{Store: store}, Options{Jobs: 2, Logger: discardLogger()})
	if err != nil || sum.Err() != nil || sum.Ran != 7 {
		t.Fatalf("sweep: %+v, %v, %v", sum, err, sum.Err())
	}
	chose := map[string]train.Hyper{}
	trained := map[string]train.RunSpec{}
	for _, r := range runs {
		dir := store.RunDir(r.ID())
		if r.Score == ScoreSearch {
			var rec SearchRecord
			b, _ := os.ReadFile(filepath.Join(dir, SearchFile))
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if want := 2; r.Method == "vanilla" && len(rec.Trials) != want {
				t.Errorf("vanilla search: %d trials, want %d", len(rec.Trials), want)
			}
			chose[r.Method] = rec.Chosen
			continue
		}
		var ts train.RunSpec
		b, _ := os.ReadFile(filepath.Join(dir, TrainSpecFile))
		if err := json.Unmarshal(b, &ts); err != nil {
			t.Fatalf("%s: %v", r.Label(), err)
		}
		trained[r.Method+" "+r.Score] = ts
	}
	if lp := chose["lp"]; lp.LR != 0.05 {
		t.Errorf("LP search chose lr %v from its grid {0.05}", lp.LR)
	}
	for key, ts := range trained {
		if key == "vanilla iid" {
			continue
		}
		// LP-FT trains each phase 1.5 epochs whatever the search chose, and
		// records so (train_spec.json is the effective spec).
		epochs := chose["vanilla"].Epochs
		if strings.HasPrefix(key, "lp-ft") {
			epochs = train.LPFTEpochs
		}
		if ts.Hyper.LR != chose["vanilla"].LR || ts.Hyper.BatchSize != chose["vanilla"].BatchSize || ts.Hyper.Epochs != epochs {
			t.Errorf("%s trained with %+v, vanilla's search chose %+v", key, ts.Hyper, chose["vanilla"])
		}
	}
	if p := trained["lp-ft seen"].ProbeHyper; p.LR != 1e-3 || p.BatchSize != 8 {
		t.Errorf("LP-FT seen probed with %+v, want BeLUGA's hard-coded batch 8, lr 1e-3", p)
	}
	if p := trained["lp-ft class"].ProbeHyper; p.LR != 0.05 {
		t.Errorf("LP-FT held-out probed with %+v, want LP's search choice lr 0.05", p)
	}
}
