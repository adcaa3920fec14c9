package metrics

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

func pred(class int, probs ...float64) Prediction { return Prediction{Class: class, Probs: probs} }

func TestAzimuthFailed(t *testing.T) {
	orig := pred(1, 0.05, 0.95)
	for _, tc := range []struct {
		name      string
		pert      Prediction
		threshold float64
		fail      bool
		delta     float64
	}{
		{"same class, default threshold never fails on confidence", pred(1, 0.45, 0.55), 1, false, 0.4},
		{"class flip fails whatever the threshold", pred(0, 0.51, 0.49), 1, true, 0.44},
		{"delta above threshold fails", pred(1, 0.18, 0.82), 0.1, true, 0.13},
		{"delta equal to threshold passes (strict >)", pred(1, 0.15, 0.85), 0.1, false, 0.1},
		{"rounded to 4 decimals before comparing", pred(1, 0.15004, 0.84996), 0.1, false, 0.1},
		{"top-class confidence, each of its own class", pred(1, 0.3, 0.7), 0.3, false, 0.25},
	} {
		if got := AzimuthFailed(orig, tc.pert, tc.threshold); got != tc.fail {
			t.Errorf("%s: failed = %v", tc.name, got)
		}
		if d := AzimuthDelta(orig, tc.pert); d != tc.delta {
			t.Errorf("%s: delta %v, want %v", tc.name, d, tc.delta)
		}
	}
	// pred_only predictions: confidence 1 on both sides, only flips fail.
	a, b := Prediction{Class: 1, Conf: 1}, Prediction{Class: 1, Conf: 1}
	if AzimuthFailed(a, b, 0) {
		t.Error("identical pred-only predictions failed")
	}
}

func azimuthSuite() *suites.Suite {
	exp := suites.Expectation{Kind: suites.ExpectAzimuth, Tolerance: 1, Agg: suites.AggAllExceptFirst}
	mk := func(row int, orig, pert string) *suites.Case {
		m, _ := json.Marshal(map[string]any{"row": row})
		return &suites.Case{Inputs: []suites.Input{{Text: orig}, {Text: pert}}, Meta: m}
	}
	f1 := &suites.Functionality{Name: "Neutral Token: PreInsertion", Class: "Fuzzy Matching", Type: suites.INV, Expect: exp,
		Cases: []*suites.Case{mk(0, "good", "pls good"), mk(3, "bad", "pls bad")}}
	f2 := &suites.Functionality{Name: "Ending Period: PostInsertion", Class: "Punctuation", Type: suites.INV, Expect: exp,
		Cases: []*suites.Case{mk(0, "good", "good."), mk(3, "bad", "bad.")}}
	f2.Cases[1].ID = 1
	f1.Cases[1].ID = 1
	return &suites.Suite{Name: "az", Task: "sentiment", Labels: []string{"negative", "positive"}, Functionalities: []*suites.Functionality{f1, f2}}
}

func TestScoreAzimuthAndSmartTags(t *testing.T) {
	s := azimuthSuite()
	preds := []Prediction{
		pred(1, 0.1, 0.9), pred(1, 0.4, 0.6), // row 0 pls: passes (same class)
		pred(0, 0.9, 0.1), pred(1, 0.4, 0.6), // row 3 pls: flips → fails
		pred(1, 0.1, 0.9), pred(1, 0.1, 0.9), // row 0 period: passes
		pred(0, 0.9, 0.1), pred(0, 0.8, 0.2), // row 3 period: passes
	}
	res, err := Score(s, preds, ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Functionalities[0]; r.Failed != 1 || *r.PassRate != 50 {
		t.Errorf("neutral token: %+v", r)
	}
	if r := res.Functionalities[1]; r.Failed != 0 {
		t.Errorf("ending period: %+v", r)
	}
	tags, err := SmartTags(s, res)
	if err != nil {
		t.Fatal(err)
	}
	want := []SmartTag{{Row: 0, Utterance: "good"}, {Row: 3, Utterance: "bad", FailedFuzzyMatching: true}}
	if len(tags) != 2 || tags[0] != want[0] || tags[1] != want[1] {
		t.Errorf("tags %+v, want %+v", tags, want)
	}
	var b bytes.Buffer
	if err := WriteSmartTags(&b, tags); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2 utterances: 1 failed_fuzzy_matching, 0 failed_punctuation") {
		t.Errorf("output:\n%s", b.String())
	}
	// A threshold below the confidence moves fails row 0's neutral token too.
	tol := 0.2
	res, _ = Score(s, preds, ScoreOptions{Options: Options{Tolerance: &tol}})
	if res.Functionalities[0].Failed != 2 {
		t.Errorf("with threshold 0.2: %+v", res.Functionalities[0])
	}
	s.Functionalities[0].Cases[0].Meta = nil
	if _, err := SmartTags(s, res); err == nil || !strings.Contains(err.Error(), "row") {
		t.Errorf("missing row: %v", err)
	}
}
