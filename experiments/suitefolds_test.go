package experiments

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A sweep's suites are read once: after OpenAll, expanding the spec and
// the preflight's suite check use what it opened, not the file.
func TestSuitesAreOpenedOnce(t *testing.T) {
	tiny, data := trainFixtures(t, map[string]string{"tiny_train.tsv": "train.tsv", "tiny_dev.tsv": "dev.tsv", "tiny_suite.jsonl": "suite.jsonl"})
	spec, err := ParseSpec([]byte(`
tasks: [{name: SENT, data: ` + data + `, suite: ` + filepath.Join(data, "suite.jsonl") + `}]
model: {name: wordvec, options: {glove: ` + filepath.Join(tiny, "tiny_glove.txt") + `}}
configurations: [IID+T]
scores: [seen, class]
`))
	if err != nil {
		t.Fatal(err)
	}
	folds := &SuiteFolds{}
	if err := folds.OpenAll(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(data, "suite.jsonl")); err != nil {
		t.Fatal(err)
	}
	runs, err := Expand(spec, folds)
	if err != nil {
		t.Fatalf("Expand read the suite file again: %v", err)
	}
	if len(runs) < 3 {
		t.Errorf("%d runs, want the baseline, seen and class folds", len(runs))
	}
	if err := (&TrainRunner{Suites: folds}).CheckSuites(context.Background(), spec); err != nil {
		t.Errorf("CheckSuites read the suite file again: %v", err)
	}
	if err := (&TrainRunner{}).CheckSuites(context.Background(), spec); err == nil {
		t.Error("without the opened suites, CheckSuites found a removed file")
	}
}
