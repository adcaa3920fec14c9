package metrics

import (
	"math"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

var religions = []string{"Christian", "Muslim", "Jewish", "Hindu", "Buddhist", "Sikh", "Taoist", "Zoroastrian",
	"Protestant", "Catholic", "Mormon", "Quaker", "Baptist", "Lutheran", "Methodist", "Anglican", "Orthodox",
	"Jain", "Shinto", "Bahá'í", "Rastafarian", "Confucian"}

// religionSuite is CheckList's "protected: religion" in small: one INV case
// of 22 inputs ("I am a Christian person." …) and a second whose one
// perturbation breaks it by less.
func religionSuite() (*suites.Suite, []Prediction) {
	f := &suites.Functionality{Name: "protected: religion", Class: "Fairness", Type: suites.INV,
		Expect: suites.Expectation{Kind: suites.ExpectInv, Tolerance: 0.1, Agg: suites.AggAllExceptFirst}}
	var preds []Prediction
	for id, adj := range []string{"a", "an honest"} {
		c := &suites.Case{ID: id}
		for _, r := range religions {
			c.Inputs = append(c.Inputs, suites.Input{Text: "I am " + adj + " " + r + " person."})
			p := pp(0.02, 0.08, 0.90) // positive, as the original
			switch {
			case id == 0 && r == "Confucian":
				p = pp(0.70, 0.10, 0.20) // negative: |0.20 − 0.90| = 0.70
			case id == 0 && r == "Sikh":
				p = pp(0.05, 0.10, 0.85) // same class, within the tolerance
			case id == 1 && r == "Hindu":
				p = pp(0.10, 0.50, 0.40) // neutral: |0.40 − 0.90| = 0.50
			}
			preds = append(preds, p)
		}
		f.Cases = append(f.Cases, c)
	}
	return &suites.Suite{Name: "religion", Task: "sentiment", Labels: []string{"negative", "neutral", "positive"},
		Functionalities: []*suites.Functionality{f}}, preds
}

// A failing INV case marks exactly the input that breaks it, with the
// change of the original class's probability, and failures lists the
// worse case first with only that input marked.
func TestFailingINVCaseMarksTheBreakingInput(t *testing.T) {
	s, preds := religionSuite()
	r, err := Score(s, preds, ScoreOptions{Exclude: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Cases[0]
	if c.Verdict != Fail || len(c.Inputs) != 22 {
		t.Fatalf("case 0: %v with %d inputs, want fail with 22", c.Verdict, len(c.Inputs))
	}
	var broken []string
	for _, in := range c.Inputs {
		if in.Verdict == nil {
			t.Fatalf("input %q has no verdict", in.Text)
		}
		if in.Breaks() {
			broken = append(broken, in.Text)
		}
	}
	if len(broken) != 1 || broken[0] != "I am a Confucian person." {
		t.Errorf("inputs marked as breaking case 0: %q, want only the Confucian one", broken)
	}
	if v := c.Inputs[21].Violation; math.Abs(v-0.70) > 1e-12 {
		t.Errorf("violation %v, want |0.20 − 0.90| = 0.70", v)
	}
	if math.Abs(c.Violation-0.70) > 1e-12 || math.Abs(r.Cases[1].Violation-0.50) > 1e-12 {
		t.Errorf("case violations %v, %v, want 0.70, 0.50", c.Violation, r.Cases[1].Violation)
	}
	var b strings.Builder
	// Listed worst first whatever the file's order.
	if err := WriteFailures(&b, []CaseVerdict{r.Cases[1], r.Cases[0]}, ""); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, "✗") != 2 || !strings.Contains(out, `✗ perturbed "I am a Confucian person." → negative (p=0.700); probability of the original's class changed by 0.700`) {
		t.Errorf("failures marks the wrong inputs:\n%s", out)
	}
	if i, j := strings.Index(out, "case 0:"), strings.Index(out, "case 1:"); i < 0 || j < i {
		t.Errorf("case 0 (violation 0.70) is not listed before case 1 (0.50):\n%s", out)
	}
	if !strings.Contains(out, "… and 20 more perturbations that keep the expectation") {
		t.Errorf("the 20 perturbations that keep it are not folded:\n%s", out)
	}
}

// Each expectation's failing inputs carry CheckList's magnitude.
func TestInputViolations(t *testing.T) {
	tests := []struct {
		name   string
		expect suites.Expectation
		labels []suites.Label
		preds  []Prediction
		want   []InputVerdict
	}{
		{"MFT: 1 − p(label)", expEq, []suites.Label{suites.ClassLabel(2)}, []Prediction{pp(.7, .2, .1)},
			[]InputVerdict{{Fail, .9}}},
		{"DIR increasing: the fall", expIntens, nil, []Prediction{pp(.1, 0, .9), pp(.4, 0, .6), pp(.05, 0, .95)},
			[]InputVerdict{{Pass, 0}, {Fail, .3}, {Pass, 0}}},
		{"DIR positive change: the wrong-way change", expAddPos, nil, []Prediction{pp(.1, .1, .8), pp(.5, .1, .4)},
			[]InputVerdict{{Pass, 0}, {Fail, .8}}},
		{"sliced out: all filtered", expIntens, nil, []Prediction{pp(.1, .8, .1), pp(.9, 0, .1)},
			[]InputVerdict{{Filtered, 0}, {Filtered, 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &suites.Functionality{Name: tc.name, Expect: tc.expect}
			c := &suites.Case{Labels: tc.labels}
			for range tc.preds {
				c.Inputs = append(c.Inputs, suites.Input{Text: "x"})
			}
			_, got, err := EvaluateInputs(f, c, tc.preds, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i].Verdict != tc.want[i].Verdict || math.Abs(got[i].Violation-tc.want[i].Violation) > 1e-12 {
					t.Errorf("input %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
