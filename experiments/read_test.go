package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/train"
)

// TestReadSweep runs a READ experiment end to end through TrainRunner on
// the SQuAD-format fixtures of package train: the baseline, IID+T and
// IID→(IID+T) with the class and type folds, each scored by CheckList's
// SQuAD expectations on T_test and on exact match on dev's test half.
func TestReadSweep(t *testing.T) {
	tiny, data := trainFixtures(t, map[string]string{"tiny_squad_train.json": "train-v1.1.json", "tiny_squad_dev.json": "dev-v1.1.json"})
	spec, err := ParseSpec([]byte(`
tasks: [{name: READ, data: ` + data + `, suite: ` + filepath.Join(tiny, "tiny_squad_suite.jsonl") + `}]
model: {name: bert-tiny, options: {vocab: ` + filepath.Join(tiny, "tiny_vocab.txt") + `, max_length: 32}}
configurations: [IID+T, IID-IID+T]
methods: [vanilla]
scores: [seen, class, type]
budget: {max_steps: 2}
grid: {iid_epochs: [1], iid_batch_size: [4], iid_lr: [0.001], epochs: [1], batch_size: [4], lr: [0.001]}
`))
	if err != nil {
		t.Fatal(err)
	}
	spec.Out = t.TempDir()
	runs, err := Expand(context.Background(), spec, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	// The baseline, then per configuration seen + 3 classes + 2 types.
	if len(runs) != 1+2*(1+3+2) {
		t.Fatalf("%d runs, want 13 (folds: 3 classes, 2 types)", len(runs))
	}
	store := &Store{Dir: spec.OutDir()}
	sum, err := Execute(context.Background(), store, runs, &TrainRunner{Store: store}, Options{Jobs: 1, Logger: discardLogger()})
	if err != nil || sum.Err() != nil || sum.Ran != len(runs) {
		t.Fatalf("sweep: %+v, %v, %v", sum, err, sum.Err())
	}
	for _, r := range runs {
		dir := store.RunDir(r.ID())
		res, err := ReadResult(dir)
		if err != nil {
			t.Fatalf("%s: %v", r.Label(), err)
		}
		// 8 test questions of the dev fixture's 16.
		if len(res.IIDCorrect) != 8 {
			t.Errorf("%s: %d i.i.d. verdicts, want dev's test half of 8", r.Label(), len(res.IIDCorrect))
		}
		var names []string
		for _, f := range res.Functionalities {
			names = append(names, f.Name)
		}
		want := []string{"taller", "lives in", "question typo"}
		switch {
		case r.Score == ScoreType && r.Fold == "INV":
			want = []string{"question typo"}
		case r.Score == ScoreType:
			want = want[:2]
		case r.Score == ScoreClass:
			want = map[string][]string{"Vocabulary": {"taller"}, "Taxonomy": {"lives in"}, "Robustness": {"question typo"}}[r.Fold]
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s scored %v, want %v", r.Label(), names, want)
		}
		var ts train.RunSpec
		b, _ := os.ReadFile(filepath.Join(dir, TrainSpecFile))
		if err := json.Unmarshal(b, &ts); err != nil {
			t.Fatalf("%s: %v", r.Label(), err)
		}
		// Vanilla reads no probing phase (train.RunSpec.Effective).
		if ts.Task != train.TaskRead || ts.MaxLength != 32 || ts.ProbeHyper.BatchSize != 0 {
			t.Errorf("%s trained as %s, max_length %d, probe batch %d: want squad, 32 and none", r.Label(), ts.Task, ts.MaxLength, ts.ProbeHyper.BatchSize)
		}
	}
}

func TestReadData(t *testing.T) {
	for data, want := range map[string][4]string{
		"squad":     {"squad-train", "squad/train-v1.1.json", "squad-dev", "squad/dev-v1.1.json"},
		"squad-dev": {"squad-dev", "squad/dev-v1.1.json", "squad-dev", "squad/dev-v1.1.json"},
		"/data/dir": {"/data/dir", "squad/train-v1.1.json", "/data/dir", "squad/dev-v1.1.json"},
	} {
		from, files := readData(data)
		if got := [4]string{from[0], files[0], from[1], files[1]}; got != want {
			t.Errorf("readData(%s) = %v, want %v", data, got, want)
		}
	}
}

// READ searches BeLUGA's grid with its SQuAD batch sizes {2, 3} unless the
// spec gives batch sizes.
func TestReadSearchUsesSQuADBatchSizes(t *testing.T) {
	for search, want := range map[string]string{"{}": "[2 3]", "{batch_size: [4]}": "[4]"} {
		spec, err := ParseSpec([]byte(`
tasks: [{name: READ, data: squad, suite: squad, folds: {type: [MFT, INV]}}, {name: SENT, data: sst2, suite: sentiment, folds: {type: [MFT]}}]
model: {name: bert-tiny}
configurations: [IID+T]
methods: [vanilla]
scores: [seen]
search: ` + search + `
`))
		if err != nil {
			t.Fatal(err)
		}
		if err := (&TrainRunner{}).Check(spec); err != nil {
			t.Fatal(err)
		}
		runs, err := Expand(context.Background(), spec, &Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Score != ScoreSearch {
				continue
			}
			got := fmt.Sprint(r.Search.BatchSize)
			if r.Task == "SENT" && search == "{}" {
				if got != "[8 16]" {
					t.Errorf("SENT search batch sizes %s, want [8 16]", got)
				}
				continue
			}
			if got != want {
				t.Errorf("search %s: %s batch sizes %s, want %s", search, r.Task, got, want)
			}
		}
	}
}

// A span task other than READ is a declaration — kind: span, its
// SQuAD-format train and dev files — and trains and is scored as READ is:
// the same runs, the same span results, under its own name.
func TestDeclaredSpanTask(t *testing.T) {
	tiny, err := filepath.Abs("../train/testdata")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseSpec([]byte(`
tasks:
  - name: NEWSQA
    kind: span
    train: {path: ` + filepath.Join(tiny, "tiny_squad_train.json") + `}
    dev: {path: ` + filepath.Join(tiny, "tiny_squad_dev.json") + `}
    suite: ` + filepath.Join(tiny, "tiny_squad_suite.jsonl") + `
model: {name: bert-tiny, options: {vocab: ` + filepath.Join(tiny, "tiny_vocab.txt") + `, max_length: 32}}
configurations: [IID+T]
methods: [vanilla]
scores: [seen, type]
budget: {max_steps: 2}
grid: {iid_epochs: [1], iid_batch_size: [4], iid_lr: [0.001], epochs: [1], batch_size: [4], lr: [0.001]}
`))
	if err != nil {
		t.Fatal(err)
	}
	spec.Out = t.TempDir()
	runs, err := Expand(context.Background(), spec, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1+1+2 {
		t.Fatalf("%d runs, want the baseline, seen and 2 type folds", len(runs))
	}
	for _, r := range runs {
		if r.Train.Kind != train.KindSpan || r.Train.Task != "NEWSQA" || r.Train.TaskDef != nil || r.Train.MaxLength != 32 {
			t.Errorf("%s: kind %q task %q declaration %v max_length %d", r.Label(), r.Train.Kind, r.Train.Task, r.Train.TaskDef, r.Train.MaxLength)
		}
	}
	store := &Store{Dir: spec.OutDir()}
	sum, err := Execute(context.Background(), store, runs, &TrainRunner{Store: store}, Options{Logger: discardLogger()})
	if err != nil || sum.Err() != nil || sum.Ran != len(runs) {
		t.Fatalf("sweep: %+v, %v, %v", sum, err, sum.Err())
	}
	res, err := ReadResult(store.RunDir(runs[1].ID()))
	if err != nil || len(res.IIDCorrect) != 8 || len(res.Functionalities) == 0 {
		t.Errorf("seen run: %d i.i.d. verdicts (want dev's test half of 8), %d functionalities, %v", len(res.IIDCorrect), len(res.Functionalities), err)
	}
	// A span task declares no labels; READ's name is READ's.
	for _, bad := range []string{
		"tasks: [{name: NEWSQA, kind: span, labels: [a, b], train: {path: t.json}, dev: {path: d.json}}]",
		"tasks: [{name: NEWSQA, kind: span, train: {path: t.json, text: q}, dev: {path: d.json}}]",
		"tasks: [{name: READ, kind: span}]",
		"tasks: [{name: X, kind: regression}]",
	} {
		if _, err := ParseSpec([]byte(bad + "\nmodel: {name: bert-tiny}\n")); err == nil {
			t.Errorf("%s: not refused", bad)
		}
	}
}
