package metrics

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/suites"
)

// TestSquadStoredResults feeds the predictions stored in the SQuAD release
// pickle (one BERT run) through the evaluator and checks CheckList's stored
// verdict of every case and its failure rate of every test.
func TestSquadStoredResults(t *testing.T) {
	s, err := suites.ImportCheckList(shareddata.Path(t, "data/checklist/squad_suite.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(shareddata.Path(t, "data/checklist/converted/squad.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	var want []*bool
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var ref struct {
			Preds  []string `json:"ref_preds"`
			Passed *bool    `json:"ref_passed"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ref); err != nil {
			t.Fatal(err)
		}
		for _, p := range ref.Preds {
			lines = append(lines, strings.ReplaceAll(p, "\n", " "))
		}
		want = append(want, ref.Passed)
	}
	predFile := filepath.Join(t.TempDir(), "squad.preds")
	if err := os.WriteFile(predFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	preds, err := ReadPredictions(predFile, PredOnly, ScoredInputs(s, ""), true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Score(s, preds, ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != len(want) || len(want) != 13311 {
		t.Fatalf("%d verdicts, %d reference cases, want 13311", len(res.Cases), len(want))
	}
	for i, c := range res.Cases {
		w := Filtered
		if want[i] != nil {
			w = Fail
			if *want[i] {
				w = Pass
			}
		}
		if c.Verdict != w {
			t.Fatalf("%s case %d: %s, CheckList %s", c.Functionality, c.Case, c.Verdict, w)
		}
	}
	failRates := map[string]float64{
		"A is COMP than B. Who is more / less COMP?":                                 20.0,
		"Intensifiers (very, super, extremely) and reducers (somewhat, kinda, etc)?": 91.3,
		"Profession vs nationality":                                                  49.4,
		"Question typo":                                                              11.6,
	}
	found := 0
	for _, fr := range res.Functionalities {
		if want, ok := failRates[fr.Name]; ok {
			found++
			if got := 100 - *fr.PassRate; math.Abs(got-want) > 0.05 {
				t.Errorf("%s: failure rate %.1f%%, CheckList %.1f%%", fr.Name, got, want)
			}
		}
	}
	if found != len(failRates) {
		t.Errorf("found %d of the %d tests with published failure rates", found, len(failRates))
	}
}

// TestQQPOrderScoredAgainstBeLUGALabel: BeLUGA re-labels "Order does
// matter for asymmetric relations" to 0 in the suite it scores with, so a
// model that never predicts "duplicate" passes every case; with CheckList's
// own labels it fails every one.
func TestQQPOrderScoredAgainstBeLUGALabel(t *testing.T) {
	s, err := suites.ImportCheckList(shareddata.Path(t, "data/checklist/qqp_suite.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	preds := make([]Prediction, ScoredInputs(s, ""))
	for i := range preds {
		preds[i] = Prediction{Class: 0, Probs: []float64{1, 0}}
	}
	const name = "Order does matter for asymmetric relations"
	for _, tc := range []struct {
		checkList bool
		want      float64
	}{{false, 100}, {true, 0}} {
		r, err := Score(s, preds, ScoreOptions{Options: Options{CheckListLabels: tc.checkList}})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Functionalities {
			if f.Name == name && (f.PassRate == nil || *f.PassRate != tc.want) {
				t.Errorf("CheckList labels %v: pass rate %v, want %v", tc.checkList, f.PassRate, tc.want)
			}
		}
	}
}
