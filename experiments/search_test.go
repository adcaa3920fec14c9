package experiments

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
	searches, trials := 0, 0
	for _, r := range runs {
		switch r.Score {
		case ScoreSearch:
			searches++
		case ScoreTrial:
			trials++
		}
	}
	// vanilla's search (shared by LP-FT) and LP's (LP-FT's held-out
	// probing), with 2 and 1 trials.
	if searches != 2 || trials != 3 || len(runs) != 10 {
		t.Fatalf("%d runs with %d searches and %d trials, want 10 with 2 and 3", len(runs), searches, trials)
	}
	store := &Store{Dir: spec.OutDir()}
	sum, err := Execute(context.Background(), store, runs, &TrainRunner{Store: store}, Options{Jobs: 2, Logger: discardLogger()})
	if err != nil || sum.Err() != nil || sum.Ran != 10 {
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
		if r.Score == ScoreTrial {
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

// TestSearchTrialsAreRuns: a search's trials are runs of the sweep, each
// with its own ID and done, that shards train apart; the search waits for
// them and chooses what train.Search, training every trial in turn in one
// process, chooses from the same trials' scores.
func TestSearchTrialsAreRuns(t *testing.T) {
	tiny, data := trainFixtures(t, map[string]string{"tiny_train.tsv": "train.tsv", "tiny_dev.tsv": "dev.tsv"})
	spec, err := ParseSpec([]byte(`
tasks: [{name: SENT, data: ` + data + `, suite: ` + filepath.Join(tiny, "tiny_suite.jsonl") + `}]
model: {name: wordvec, options: {glove: ` + filepath.Join(tiny, "tiny_glove.txt") + `, hidden: 8, max_length: 16}}
configurations: [T]
methods: [vanilla]
scores: [seen]
search: {lr: [0.05, 0.01, 0.000001], batch_size: [4], epochs: [1, 2]}
`))
	if err != nil {
		t.Fatal(err)
	}
	spec.Out = t.TempDir()
	ctx := context.Background()
	runs, err := Expand(ctx, spec, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	var search Run
	var trials []Run
	for _, r := range runs {
		switch r.Score {
		case ScoreSearch:
			search = r
		case ScoreTrial:
			trials = append(trials, r)
		}
	}
	if len(trials) != 6 || search.Search == nil {
		t.Fatalf("%d runs: %d trials and search %v, want 6 trials and a search", len(runs), len(trials), search.Search)
	}
	ids := map[string]bool{}
	for i, tr := range trials {
		ids[tr.ID()] = true
		if tr.ID() != search.Trials[i] || !slices.Contains(search.Needs(), tr.ID()) {
			t.Errorf("trial %d (%s) is not the search's trial %d, which it needs", i, tr.ID(), i)
		}
	}
	if len(ids) != 6 || ids[search.ID()] {
		t.Fatalf("trial IDs %v not 6 distinct runs of their own", ids)
	}
	store := &Store{Dir: spec.OutDir()}
	opts := Options{Logger: discardLogger(), Sweep: runs}
	// Each shard trains its slice of the trials; both get some.
	for i := range 2 {
		slice := Shard{I: i, N: 2}.Select(trials)
		if len(slice) == 0 || len(slice) == len(trials) {
			t.Fatalf("shard %d/2 has %d of the search's %d trials", i, len(slice), len(trials))
		}
		sum, err := Execute(ctx, store, slice, &TrainRunner{Store: store}, opts)
		if err != nil || sum.Err() != nil || sum.Ran != len(slice) {
			t.Fatalf("shard %d/2: %+v, %v, %v", i, sum, err, sum.Err())
		}
	}
	// The rest of the sweep trains no trial again: the search only picks.
	sum, err := Execute(ctx, store, runs, &TrainRunner{Store: store}, opts)
	if err != nil || sum.Err() != nil || sum.Ran != len(runs)-6 || sum.Skipped != 6 {
		t.Fatalf("sweep after the trials: %+v (want all but the 6 trials ran), %v, %v", sum, err, sum.Err())
	}
	var rec SearchRecord
	b, err := os.ReadFile(filepath.Join(store.RunDir(search.ID()), SearchFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	// The same search run in one process, as before trials were runs.
	s, err := (&TrainRunner{Store: store}).Spec(ctx, search)
	if err != nil {
		t.Fatal(err)
	}
	best, inRun, err := train.Search(ctx, s, rec.Grid)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(inRun, rec.Trials) || !reflect.DeepEqual(best, rec.Chosen) {
		t.Errorf("the search chose %+v from trials\n%+v\nin one run it chose %+v from\n%+v", rec.Chosen, rec.Trials, best, inRun)
	}

	// A store an older beluga wrote has the search, done, and no trial
	// runs: they are written from its record, and nothing is retrained.
	want := map[string][]byte{}
	for _, tr := range trials {
		if want[tr.ID()], err = os.ReadFile(filepath.Join(store.RunDir(tr.ID()), TrialFile)); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(store.RunDir(tr.ID())); err != nil {
			t.Fatal(err)
		}
	}
	// Its trials are not needed: the search's choice is made.
	if sum, err := Execute(ctx, store, runs, &TrainRunner{Store: store}, opts); err != nil || sum.Ran != 0 {
		t.Errorf("sweep of an older store: %+v, %v; want nothing trained", sum, err)
	}
	searches, n, err := store.SplitSearches()
	if err != nil || searches != 1 || n != 6 {
		t.Fatalf("SplitSearches: %d searches, %d trials, %v; want 1 and 6", searches, n, err)
	}
	for _, tr := range trials {
		got, _ := os.ReadFile(filepath.Join(store.RunDir(tr.ID()), TrialFile))
		if store.State(tr.ID()) != Done || string(got) != string(want[tr.ID()]) {
			t.Errorf("trial %s: %s, %s; want done with %s", tr.Label(), store.State(tr.ID()), got, want[tr.ID()])
		}
	}
	if sum, err := Execute(ctx, store, runs, &TrainRunner{Store: store}, opts); err != nil || sum.Ran != 0 {
		t.Errorf("sweep of the split store: %+v, %v; want nothing run", sum, err)
	}
	if searches, n, err := store.SplitSearches(); err != nil || searches != 0 || n != 0 {
		t.Errorf("SplitSearches again: %d, %d, %v; want nothing", searches, n, err)
	}
}
