package metrics

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

// TestMeasureLabelled checks the labelled-data view against its parts and
// its Markdown: the numbers, one row per class, the confusion matrix, and
// a name that would break a table escaped.
func TestMeasureLabelled(t *testing.T) {
	preds := []Prediction{
		{Class: 0, Probs: []float64{0.9, 0.1}}, {Class: 1, Probs: []float64{0.3, 0.7}},
		{Class: 1, Probs: []float64{0.4, 0.6}}, {Class: 0, Probs: []float64{0.8, 0.2}},
	}
	gold := []int{0, 1, 0, 0}
	l, err := MeasureLabelled("dev.csv", []string{"neg|ative", "positive"}, preds, gold, 10)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := Classify([]int{0, 1, 1, 0}, gold, 2)
	w, _ := Calibrate(preds, gold, 10, EqualWidth)
	m, _ := Calibrate(preds, gold, 10, EqualMass)
	if l.Accuracy != c.Accuracy || l.MacroF1 != c.MacroF1 || l.Width.ECE != w.ECE || l.Mass.ECE != m.ECE || l.Width.Brier != w.Brier {
		t.Errorf("measures %+v", l)
	}
	var b bytes.Buffer
	if err := l.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"4 labelled examples: accuracy 75.0%", `| neg\|ative | 100.0 | 66.7 | 80.0 | 3 | 2 |`, `| neg\|ative | 2 | 1 |`, "| positive | 0 | 1 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
	js, err := json.Marshal(l)
	if err != nil || !strings.Contains(string(js), `"confidence":null`) || !strings.Contains(string(js), `"macro_f1":0.7333333333333334`) {
		t.Errorf("json %s (%v)", js, err)
	}
	if _, err := MeasureLabelled("x", []string{"a", "b"}, preds, []int{0}, 10); err == nil || !strings.Contains(err.Error(), "x:") {
		t.Errorf("mismatched lengths: %v", err)
	}
}

// TestResultCalibrations scores a small suite and checks the calibration
// per functionality on its labelled inputs (the INV functionality has none)
// and the passing and failing cases' confidences.
func TestResultCalibrations(t *testing.T) {
	s, err := suites.Open(writeFile(t, "s.jsonl", `{"suite":"s","labels":["neg","pos"]}
{"class":"C","functionality":"f","type":"MFT","id":0,"inputs":["a"],"label":1}
{"class":"C","functionality":"f","type":"MFT","id":1,"inputs":["b"],"label":0}
{"class":"D","functionality":"g","type":"MFT","id":0,"inputs":["c"],"label":1}
{"class":"D","functionality":"h","type":"INV","id":0,"inputs":["d","e"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	preds := []Prediction{
		{Class: 1, Probs: []float64{0.2, 0.8}}, {Class: 1, Probs: []float64{0.3, 0.7}},
		{Class: 0, Probs: []float64{0.9, 0.1}},
		{Class: 0, Probs: []float64{0.6, 0.4}}, {Class: 0, Probs: []float64{0.7, 0.3}},
	}
	res, err := Score(s, preds, ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := res.Calibrations(10, EqualWidth)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[0].Functionality != AllLabelledInputs || cs[0].Calibration.N != 3 || cs[1].Functionality != "f" || cs[1].Calibration.N != 2 || cs[2].Functionality != "g" || cs[2].Class != "D" {
		t.Fatalf("calibrations %+v", cs)
	}
	// f: 0.8 right, 0.7 wrong → ECE (0.2 + 0.7)/2; g: 0.9 wrong → 0.9.
	if d := cs[1].Calibration.ECE - 0.45; d > 1e-15 || d < -1e-15 || cs[2].Calibration.ECE != 0.9 {
		t.Errorf("ECE f %v g %v", cs[1].Calibration.ECE, cs[2].Calibration.ECE)
	}
	pass, fail := res.CaseConfidences()
	// Passing: f/0 (0.8), h/0 (0.6, its original); failing: f/1 (0.7), g/0 (0.9).
	if len(pass) != 2 || pass[0] != 0.8 || pass[1] != 0.6 || len(fail) != 2 || fail[0] != 0.7 || fail[1] != 0.9 {
		t.Errorf("passing %v failing %v", pass, fail)
	}
}

// TestCalibrationsLearnClassesFromTheSuite: a test whose gold label its
// own inputs are never predicted as still gets a Brier score, the class
// coming from another test's predictions.
func TestCalibrationsLearnClassesFromTheSuite(t *testing.T) {
	zero, one := 0, 1
	res := &Result{Cases: []CaseVerdict{
		{Functionality: "neutral test", Verdict: Fail, Inputs: []CaseInput{{Label: "neutral", Pred: "pos", PredClass: &one, Probs: []float64{0.2, 0.8}}}},
		{Functionality: "other", Verdict: Pass, Inputs: []CaseInput{{Label: "neutral", Pred: "neutral", PredClass: &zero, Probs: []float64{0.7, 0.3}}}},
	}}
	cs, err := res.Calibrations(10, EqualWidth)
	if err != nil || len(cs) != 3 {
		t.Fatal(cs, err)
	}
	if b := cs[1].Calibration.Brier; cs[1].Functionality != "neutral test" || !(math.Abs(b-(0.64+0.64)) <= 1e-12) {
		t.Errorf("%s: Brier %v, want 1.28", cs[1].Functionality, b)
	}
}
