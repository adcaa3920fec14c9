package report

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/metrics"
)

// tableOf is a one-task table of i.i.d. scores only, one row per value.
func tableOf(flagged map[int]bool, iid ...float64) *Table {
	nan := math.NaN()
	t := &Table{Tasks: []string{"X"}, Scores: []string{experiments.ScoreSeen}}
	for i, v := range iid {
		r := &Row{Configuration: "C", Method: string(rune('a' + i))}
		r.cell(IIDKey("X")).Value = v
		r.cell(GKey("X", experiments.ScoreSeen)).Value = nan
		if flagged[i] {
			r.cell(IIDKey("X")).Flags = []RunFlag{{Run: "r", Label: "l", Flag: metrics.Flag{Kind: metrics.FlagConstantIID, Reason: "constant predictor: all one class"}}}
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// The bold value is the largest as shown, unique, and never a flagged
// cell's.
func TestBoldSkipsTiesAndFlaggedCells(t *testing.T) {
	for _, tc := range []struct {
		name    string
		iid     []float64
		flagged map[int]bool
		bold    string // the bold cell, "" for none
	}{
		{"unique largest", []float64{70, 80, 75}, nil, "80.00"},
		{"tie", []float64{80, 80, 75}, nil, ""},
		{"tie as shown", []float64{80.001, 80.004, 75}, nil, ""},
		{"flagged largest", []float64{70, 90, 75}, map[int]bool{1: true}, "75.00"},
		{"flagged equal to the largest is no tie", []float64{80, 80, 75}, map[int]bool{0: true}, "80.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tableOf(tc.flagged, tc.iid...).WriteMarkdown(&b); err != nil {
				t.Fatal(err)
			}
			md := b.String()
			n := strings.Count(md, "**")
			switch {
			case tc.bold == "" && n != 0:
				t.Errorf("bold cells in\n%s", md)
			case tc.bold != "" && (n != 2 || !strings.Contains(md, "**"+tc.bold+"**")):
				t.Errorf("want only %s bold in\n%s", tc.bold, md)
			}
			if len(tc.flagged) > 0 && (!strings.Contains(md, "†") || !strings.Contains(md, "\n† a constant predictor")) {
				t.Errorf("no marker or footnote in\n%s", md)
			}
		})
	}
}

// --baselines adds rows computed from the runs' own test data: a constant
// predictor scores its label's share of the i.i.d. test set (intent_dev
// holds 3 of each of 3 labels: 33.33) and passes every INV case; the rows
// are never bold and add no figure panel.
func TestBaselineRows(t *testing.T) {
	td := intentFixtures(t)
	store, runs := experimentstest.TrainSweep(t, `
tasks:
  - name: INTENT
    labels: [greeting, question, complaint]
    suite: `+filepath.Join(td, "intent_suite.jsonl")+`
    train: {path: `+filepath.Join(td, "intent_train.csv")+`, text: utterance, label: intent}
    dev: {path: `+filepath.Join(td, "intent_dev.csv")+`, text: utterance, label: intent}
model: {kind: wordvec, glove: `+filepath.Join(td, "intent_glove.txt")+`, hidden: 8, options: {max_length: 16}}
configurations: [IID-IID+T]
scores: [seen]
grid: {iid_epochs: [2], iid_batch_size: [4], iid_lr: [0.01], epochs: [2], batch_size: [4], lr: [0.01]}
`)
	plain, err := FromStore(store, runs, Options{Trials: 100})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := FromStore(store, runs, Options{Trials: 100, Baselines: true})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range tab.Rows {
		labels = append(labels, r.Configuration+"/"+r.Method)
	}
	want := "IID/vanilla|IID-IID+T/vanilla|Baseline/majority class|Baseline/constant: greeting|Baseline/constant: question|Baseline/constant: complaint"
	if strings.Join(labels, "|") != want {
		t.Fatalf("rows %q, want %s", labels, want)
	}
	res, err := experiments.ReadResult(store.RunDir(runs[0].ID()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows[2:] {
		if got := r.Cell(IIDKey("INTENT")).Value; math.Abs(got-100.0/3) > 1e-9 {
			t.Errorf("%s: i.i.d. accuracy %v, want 33.33", r.Label(), got)
		}
		// Every INV case passes a constant predictor.
		k := slices.IndexFunc(tab.Functionalities["INTENT"], func(f Functionality) bool { return f.Name == "typos" })
		if rate := r.Cell(PassKey("INTENT", experiments.ScoreSeen, "", k)).Value; rate != 100 {
			t.Errorf("%s: typos pass rate %v, want 100", r.Label(), rate)
		}
	}
	// The constant of a label fails exactly the MFT cases of other labels.
	greeting := tab.Rows[3]
	k := slices.IndexFunc(tab.Functionalities["INTENT"], func(f Functionality) bool { return f.Name == "greetings" })
	q := slices.IndexFunc(tab.Functionalities["INTENT"], func(f Functionality) bool { return f.Name == "questions" })
	if greeting.Cell(PassKey("INTENT", experiments.ScoreSeen, "", k)).Value != 100 || greeting.Cell(PassKey("INTENT", experiments.ScoreSeen, "", q)).Value != 0 {
		t.Errorf("constant greeting pass rates %v", tab.PassRates(greeting, "INTENT", experiments.ScoreSeen, ""))
	}
	if len(res.Constant) != 3 {
		t.Errorf("result holds %d constant predictors, want 3", len(res.Constant))
	}
	var a, b bytes.Buffer
	if err := plain.WriteMarkdown(&a); err != nil {
		t.Fatal(err)
	}
	if err := tab.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	table, _, _ := strings.Cut(a.String(), "\n\n") // the table without its footnotes
	if !strings.HasPrefix(b.String(), table) {
		t.Errorf("baseline rows changed the trained rows:\n%s\nvs\n%s", a.String(), b.String())
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| Baseline") && strings.Contains(line, "**") {
			t.Errorf("a bold baseline cell: %s", line)
		}
	}
	if strings.Join(tab.figureScores(), ",") != strings.Join(plain.figureScores(), ",") {
		t.Errorf("figure scores %v, want %v", tab.figureScores(), plain.figureScores())
	}
}
