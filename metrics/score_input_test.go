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

// Restricting a scored suite to some cases gives the pass rates and suite
// score of scoring only those cases; a functionality left with none has no
// pass rate.
func TestRestrictEqualsScoringTheKeptCases(t *testing.T) {
	mk := func(name string, labels, preds []int, keep func(int) bool) (*suites.Functionality, []Prediction) {
		f := &suites.Functionality{Name: name, Class: "C", Type: suites.MFT, Expect: suites.DefaultExpectation(suites.MFT)}
		var ps []Prediction
		for i, l := range labels {
			if keep != nil && !keep(i) {
				continue
			}
			f.Cases = append(f.Cases, &suites.Case{ID: i, Inputs: []suites.Input{{Text: "x"}}, Labels: []suites.Label{suites.ClassLabel(l)}})
			p := []float64{1, 0}
			if preds[i] == 1 {
				p = []float64{0, 1}
			}
			ps = append(ps, Prediction{Class: preds[i], Probs: p})
		}
		return f, ps
	}
	kept := map[string]func(int) bool{
		"a": func(i int) bool { return i%2 == 0 },
		"b": func(i int) bool { return i == 1 },
		"c": func(int) bool { return false },
	}
	data := map[string][2][]int{
		"a": {{0, 1, 1, 0, 1, 0}, {0, 0, 1, 1, 0, 0}},
		"b": {{1, 0, 1}, {1, 1, 1}},
		"c": {{0, 1}, {0, 0}},
	}
	build := func(restricted bool) (*suites.Suite, []Prediction) {
		s := &suites.Suite{Name: "s", Labels: []string{"n", "p"}}
		var all []Prediction
		for _, n := range []string{"a", "b", "c"} {
			var keep func(int) bool
			if restricted {
				keep = kept[n]
			}
			f, ps := mk(n, data[n][0], data[n][1], keep)
			if len(f.Cases) > 0 {
				s.Functionalities = append(s.Functionalities, f)
				all = append(all, ps...)
			}
		}
		return s, all
	}
	full, fp := build(false)
	got, err := Score(full, fp, ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Restrict(func(f string, id int) bool { return kept[f](id) })
	sub, sp := build(true)
	want, err := Score(sub, sp, ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Score != *want.Score {
		t.Errorf("suite score %v, scoring the kept cases %v", *got.Score, *want.Score)
	}
	for _, fr := range got.Functionalities {
		var w *FunctionalityResult
		for i := range want.Functionalities {
			if want.Functionalities[i].Name == fr.Name {
				w = &want.Functionalities[i]
			}
		}
		switch {
		case w == nil && fr.PassRate != nil:
			t.Errorf("%s: pass rate %v with no kept case", fr.Name, *fr.PassRate)
		case w != nil && (fr.PassRate == nil || *fr.PassRate != *w.PassRate || fr.Failed != w.Failed):
			t.Errorf("%s: %+v, want %+v", fr.Name, fr, *w)
		}
	}
}
