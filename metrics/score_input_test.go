package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

// A prediction line with another number of probabilities than the first is
// a corrupt line, named by its number.
func TestReadPredictionsRefusesAnExtraProbability(t *testing.T) {
	path := filepath.Join(t.TempDir(), "preds.txt")
	if err := os.WriteFile(path, []byte("0 0.9 0.05 0.05\n2 0.1 0.1 0.8\n0 0.9 0.05 0.05 0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadPredictions(path, PredAndSoftmax, 3, false)
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error %v, want one naming line 3", err)
	}
}

func TestScoreRefusesAnUnknownExclusion(t *testing.T) {
	f := &suites.Functionality{Name: "a", Class: "C", Type: suites.MFT, Expect: suites.DefaultExpectation(suites.MFT),
		Cases: []*suites.Case{{ID: 0, Inputs: []suites.Input{{Text: "x"}}, Labels: []suites.Label{suites.ClassLabel(0)}}}}
	s := &suites.Suite{Name: "s", Functionalities: []*suites.Functionality{f}}
	preds := []Prediction{{Class: 0, Probs: []float64{1, 0}}}
	if _, err := Score(s, preds, ScoreOptions{Exclude: []string{"a"}}); err != nil {
		t.Errorf("excluding a known functionality: %v", err)
	}
	if _, err := Score(s, preds, ScoreOptions{Exclude: []string{"b"}}); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("excluding an unknown functionality: %v", err)
	}
}

// beluga predict's JSON lines are scored by their probabilities.
func TestReadPredictJSONL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "preds.jsonl")
	lines := `{"input_ids":[101,102],"logits":[1,2],"probs":[0.25,0.75]}` + "\n" + `{"probs":[0.9,0.1]}` + "\n"
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := ReadPredictions(path, PredictJSONL, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].Class != 1 || ps[1].Class != 0 || ps[0].Probs[1] != 0.75 {
		t.Errorf("read %+v", ps)
	}
	if err := os.WriteFile(path, []byte("0.3 0.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPredictions(path, PredictJSONL, 1, false); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a non-JSON line: %v", err)
	}
}
