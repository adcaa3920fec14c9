package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

// A case file carries each input's text, expected label, prediction and
// probabilities beside the verdict, so that error analysis needs no join;
// the verdict fields keep their names.
func TestWriteCasesCarriesTextExpectationAndPrediction(t *testing.T) {
	zero := 0
	s := &suites.Suite{Name: "s", Task: "hate", Labels: []string{"non-hateful", "hateful"}, Functionalities: []*suites.Functionality{
		{Name: "slur_h", Class: "slurs", Type: suites.MFT, Expect: suites.Expectation{Kind: suites.ExpectEq, Agg: "all"},
			Cases: []*suites.Case{{ID: 7, Inputs: []suites.Input{{Text: "you are a [slur]"}}, Labels: []suites.Label{suites.ClassLabel(1)}}}},
		{Name: "typos", Class: "robust", Type: suites.INV, Expect: suites.Expectation{Kind: suites.ExpectInv, Agg: "all_except_first"},
			Cases: []*suites.Case{{ID: 0, Inputs: []suites.Input{{Text: "I love it"}, {Text: "I lvoe it"}}}}},
		{Name: "never", Class: "robust", Type: suites.MFT, Expect: suites.Expectation{Kind: suites.ExpectPredNot, Value: &zero, Agg: "all"},
			Cases: []*suites.Case{{ID: 3, Inputs: []suites.Input{{Text: "q", Pair: "c", IsPair: true}}}}},
	}}
	preds := []Prediction{
		{Class: 0, Probs: []float64{0.9, 0.1}},
		{Class: 0, Probs: []float64{0.8, 0.2}}, {Class: 1, Probs: []float64{0.3, 0.7}},
		{Class: 1, Probs: []float64{0.4, 0.6}},
	}
	r, err := Score(s, preds, ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cases.jsonl")
	if err := r.WriteCases(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"functionality":"slur_h","case":7,"verdict":"fail","class":"slurs","type":"MFT","expect":"prediction is the label","inputs":[{"text":"you are a [slur]","label":"hateful","pred":"non-hateful","pred_class":0,"probs":[0.9,0.1],"verdict":"fail","violation":0.9}],"violation":0.9}
{"functionality":"typos","case":0,"verdict":"fail","class":"robust","type":"INV","expect":"perturbations keep the original's prediction (tolerance 0)","inputs":[{"text":"I love it","pred":"non-hateful","pred_class":0,"probs":[0.8,0.2],"verdict":"pass"},{"text":"I lvoe it","pred":"hateful","pred_class":1,"probs":[0.3,0.7],"verdict":"fail","violation":0.5}],"violation":0.5}
{"functionality":"never","case":3,"verdict":"pass","class":"robust","type":"MFT","expect":"prediction is not non-hateful","inputs":[{"text":"q","pair":"c","pred":"hateful","pred_class":1,"probs":[0.4,0.6],"verdict":"pass"}]}
`
	if got := string(b); got != want {
		t.Errorf("cases.jsonl:\n%s\nwant:\n%s", got, strings.TrimSpace(want))
	}
}

// failures lists failing cases per functionality from a case file, the new
// one with texts and one written before cases carried them.
func TestWriteFailures(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, functionality, want, err string
	}{
		{"with texts", `{"functionality":"slur_h","case":7,"verdict":"fail","class":"slurs","type":"MFT","expect":"prediction is the label","inputs":[{"text":"you are a [slur]","label":"hateful","pred":"non-hateful","pred_class":0,"probs":[0.9,0.1]}]}
{"functionality":"slur_h","case":8,"verdict":"pass","class":"slurs","type":"MFT","expect":"prediction is the label","inputs":[{"text":"x","label":"hateful","pred":"hateful","pred_class":1,"probs":[0.1,0.9]}]}
{"functionality":"typos","case":0,"verdict":"fail","class":"robust","type":"INV","expect":"perturbations keep the original's prediction (tolerance 0)","inputs":[{"text":"I love it","pred":"non-hateful","pred_class":0,"probs":[0.8,0.2]},{"text":"I lvoe it","pred":"hateful","pred_class":1,"probs":[0.3,0.7]}]}
{"functionality":"typos","case":1,"verdict":"filtered","class":"robust","type":"INV"}
`, "", `slur_h (slurs, MFT): 1 of 2 scored cases failed; expects: prediction is the label
  case 7:
    "you are a [slur]" → non-hateful (p=0.900), expected hateful
typos (robust, INV): 1 of 1 scored cases failed; expects: perturbations keep the original's prediction (tolerance 0)
  case 0:
    original  "I love it" → non-hateful (p=0.800)
    perturbed "I lvoe it" → hateful (p=0.700)
2 of 3 scored cases failed in 2 functionalities
`, ""},
		{"one functionality", `{"functionality":"a","case":0,"verdict":"pass"}
{"functionality":"b","case":0,"verdict":"fail"}
`, "b", `b: 1 of 1 scored cases failed
  case 0 (this case file predates inputs with texts: rerun the run for them)
`, ""},
		{"unknown functionality", `{"functionality":"a","case":0,"verdict":"pass"}
`, "z", "", `no functionality "z" among the run's cases (it has "a")`},
		{"bad verdict", `{"functionality":"a","case":0,"verdict":"maybe"}
`, "", "", `:1: unknown verdict "maybe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".jsonl")
			os.WriteFile(path, []byte(tc.file), 0o644)
			cases, err := ReadCases(path)
			var b strings.Builder
			if err == nil {
				err = WriteFailures(&b, cases, tc.functionality)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}
