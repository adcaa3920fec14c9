package train

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/metrics"
)

func intentEvalSet() EvalSet {
	return EvalSet{Name: "other", FileSpec: datasets.FileSpec{Path: "testdata/intent_eval.tsv", TextColumn: "text", LabelColumn: "gold"}}
}

// An extra evaluation set is scored after training with the task's metrics,
// its predictions written beside the i.i.d. test set's; it trains nothing,
// so every other result is the same as without it, and a text it shares
// with the training data is reported by the input checks.
func TestEvalSetIsScoredNotTrained(t *testing.T) {
	dir := t.TempDir()
	plain, err := Run(context.Background(), intentSpec(ConfigIIDPlusT), filepath.Join(dir, "plain"))
	if err != nil {
		t.Fatal(err)
	}
	spec := intentSpec(ConfigIIDPlusT)
	spec.IIDEval = []EvalSet{intentEvalSet()}
	out := filepath.Join(dir, "eval")
	res, err := Run(context.Background(), spec, out)
	if err != nil {
		t.Fatal(err)
	}
	if *res.IIDScore != *plain.IIDScore || *res.SuiteScore != *plain.SuiteScore {
		t.Errorf("with an evaluation set: i.i.d. %v, suite %v; without: %v, %v", *res.IIDScore, *res.SuiteScore, *plain.IIDScore, *plain.SuiteScore)
	}
	got := res.IIDEval["other"]
	if _, ok := got["macro_f1"]; !ok || len(res.IIDEvalCorrect["other"]) != 6 {
		t.Fatalf("evaluation set scores %v, %d examples; want accuracy and macro_f1 over 6", got, len(res.IIDEvalCorrect["other"]))
	}
	// Its accuracy is what its predictions file says.
	f, err := os.Open(filepath.Join(out, "eval_other_predictions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	right, n := 0, 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var line metrics.CaseInput
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line.Pred == line.Label {
			right++
		}
	}
	if n != 6 || got["accuracy"] != float64(right)/6 {
		t.Errorf("accuracy %v over %d predictions, of which %d right", got["accuracy"], n, right)
	}
	checks, err := os.ReadFile(filepath.Join(out, InputChecksFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(checks), "i.i.d. evaluation set other") || !strings.Contains(string(checks), "intent_eval.tsv line 2") {
		t.Errorf("the input checks do not report the evaluation set's overlap with the training data (line 2, hello there):\n%s", checks)
	}
}

func TestEvalSetsRefused(t *testing.T) {
	tests := []struct {
		name string
		edit func(*RunSpec)
		want string
	}{
		{"no name", func(s *RunSpec) { s.IIDEval = []EvalSet{{FileSpec: intentEvalSet().FileSpec}} }, `iid_eval[0].name: "": want letters`},
		{"twice", func(s *RunSpec) { s.IIDEval = []EvalSet{intentEvalSet(), intentEvalSet()} }, `iid_eval[1].name: "other" named twice`},
		{"halved", func(s *RunSpec) { e := intentEvalSet(); e.Halve = true; s.IIDEval = []EvalSet{e} }, "iid_eval[0]: an evaluation set is scored whole"},
		{"no path", func(s *RunSpec) { s.IIDEval = []EvalSet{{Name: "x"}} }, "iid_eval[0].path: required"},
	}
	for _, tc := range tests {
		s := intentSpec(ConfigIIDPlusT)
		tc.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	read := tinyReadSpec(ConfigIIDPlusT)
	read.IIDEval = []EvalSet{intentEvalSet()}
	if err := read.Validate(); err == nil || !strings.Contains(err.Error(), "iid_eval") {
		t.Errorf("READ with an evaluation set: %v", err)
	}
}
