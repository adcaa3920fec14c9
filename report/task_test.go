package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
)

// intentFixtures returns the directory of package train's intent task
// fixtures (a 3-label CSV task with its own suite).
func intentFixtures(t *testing.T) string {
	t.Helper()
	td, err := filepath.Abs("../train/testdata")
	if err != nil {
		t.Fatal(err)
	}
	return td
}

// A task a researcher declares — three intents read from CSV columns of
// their own, a suite of their own — trains through the sweep and reports:
// the IID baseline, IID→(IID+T) with G, and T, which trains on the suite
// alone and is scored on the same i.i.d. test set.
func TestDeclaredThreeLabelTaskTrainsAndReports(t *testing.T) {
	td := intentFixtures(t)
	store, runs := experimentstest.TrainSweep(t, `
tasks:
  - name: INTENT
    labels: [greeting, question, complaint]
    suite: `+filepath.Join(td, "intent_suite.jsonl")+`
    metrics: [macro_f1]
    train: {path: `+filepath.Join(td, "intent_train.csv")+`, text: utterance, label: intent}
    dev: {path: `+filepath.Join(td, "intent_dev.csv")+`, text: utterance, label: intent}
model: {name: wordvec, options: {glove: `+filepath.Join(td, "intent_glove.txt")+`, hidden: 8, max_length: 16}}
configurations: [IID-IID+T, T]
methods: [vanilla]
scores: [seen, func, class]
grid: {iid_epochs: [2], iid_batch_size: [4], iid_lr: [0.01], epochs: [2], batch_size: [4], lr: [0.01]}
`)
	// Baseline; per configuration seen, 5 functionalities, 2 classes.
	if len(runs) != 1+2*(1+5+2) {
		t.Fatalf("%d runs, want 17", len(runs))
	}
	res, err := experiments.ReadResult(store.RunDir(runs[0].ID()))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.IIDMetrics["macro_f1"]; !ok || len(res.IIDCorrect) != 9 {
		t.Errorf("baseline result: metrics %v, %d i.i.d. predictions; want macro_f1 and 9", res.IIDMetrics, len(res.IIDCorrect))
	}
	tab, err := FromStore(store, runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := tab.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"INTENT", "| IID ", "IID-IID+T", "| T "} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, md.String())
		}
	}
	var png bytes.Buffer
	if err := tab.WriteHeatmap(&png, "png", HeatmapOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A suite without i.i.d. data trains with T only: the table has its suite
// scores (T_seen ...) in place of the i.i.d. score and G, no Avg, and no
// column or panel for a score no run has.
func TestSuiteOnlyTableShowsSuiteScores(t *testing.T) {
	td := intentFixtures(t)
	store, runs := experimentstest.TrainSweep(t, `
tasks:
  - name: INTENT
    labels: [greeting, question, complaint]
    suite: `+filepath.Join(td, "intent_suite.jsonl")+`
model: {name: wordvec, options: {glove: `+filepath.Join(td, "intent_glove.txt")+`, hidden: 8, max_length: 16}}
configurations: [T]
scores: [seen, class]
grid: {epochs: [2], batch_size: [4], lr: [0.01]}
`)
	tab, err := FromStore(store, runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var headers []string
	for _, c := range tab.Columns() {
		headers = append(headers, c.Header)
	}
	if want := []string{"T_seen INTENT", "T_class INTENT"}; strings.Join(headers, "|") != strings.Join(want, "|") {
		t.Errorf("columns %q, want %q", headers, want)
	}
	if got := tab.figureScores(); strings.Join(got, ",") != "seen,class" {
		t.Errorf("figure panels %v, want seen and class", got)
	}
	for _, c := range tab.Columns() {
		if v := c.Value(tab.Rows[0]); !(v >= 0 && v <= 100) {
			t.Errorf("%s = %v, want a pass rate", c.Header, v)
		}
	}
}
