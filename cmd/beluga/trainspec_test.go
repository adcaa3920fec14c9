package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
)

// beluga run and beluga train read one run spec: each run of a sweep
// records the train.RunSpec it was resolved to (train_spec.json), and
// beluga train --spec with that file trains the same run again, byte for
// byte — an IID baseline, and a run that starts from it.
func TestSweepRunsRetrainFromTheirTrainSpec(t *testing.T) {
	tiny := trainTestdata(t)
	dir := t.TempDir()
	spec := writeFile(t, filepath.Join(dir, "spec.yaml"), `
name: retrain
out: store
tasks: [{name: intent, labels: [greeting, question, complaint], mft_loss: ce,
  suite: `+filepath.Join(tiny, "intent_suite.jsonl")+`,
  train: {path: `+filepath.Join(tiny, "intent_train.csv")+`, text: utterance, label: intent},
  dev: {path: `+filepath.Join(tiny, "intent_dev.csv")+`, text: utterance, label: intent}}]
model: {kind: wordvec, glove: `+filepath.Join(tiny, "intent_glove.txt")+`, hidden: 8, options: {max_length: 16}}
configurations: [IID-IID+T]
methods: [irm]
scores: [seen]
grid: {iid_epochs: [2], epochs: [2], batch_size: [4], lr: [0.01], iid_lr: [0.01]}
`)
	if out, err := execute(t, "run", spec); err != nil {
		t.Fatalf("beluga run: %v\n%s", err, out)
	}
	store := &experiments.Store{Dir: filepath.Join(dir, "store")}
	runs, err := store.Runs()
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d done runs, %v; want the baseline and IRM", len(runs), err)
	}
	for _, r := range runs {
		run := store.RunDir(r.ID())
		again := filepath.Join(t.TempDir(), "again")
		if out, err := execute(t, "train", "--spec", filepath.Join(run, experiments.TrainSpecFile), "--out", again); err != nil {
			t.Fatalf("beluga train --spec %s: %v\n%s", r.Label(), err, out)
		}
		for _, f := range []string{"iid_predictions.jsonl", "suite_predictions.txt", "cases.jsonl", "curve.jsonl", "model/model.safetensors"} {
			if a, b := readFile(t, filepath.Join(run, "train", f)), readFile(t, filepath.Join(again, f)); !bytes.Equal(a, b) {
				t.Errorf("%s: %s differs when trained by beluga train from its train spec", r.Label(), f)
			}
		}
	}
}
