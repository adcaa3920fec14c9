package experiments

import (
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/train"
)

func suiteOf(preds, labels []string) *metrics.Result {
	r := &metrics.Result{}
	for i, p := range preds {
		k := 0
		in := metrics.CaseInput{Text: "x", Pred: p, PredClass: &k}
		if i < len(labels) {
			in.Label = labels[i]
		}
		r.Cases = append(r.Cases, metrics.CaseVerdict{Inputs: []metrics.CaseInput{in}})
	}
	return r
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func curve(losses ...float64) []train.CurvePoint {
	var c []train.CurvePoint
	for i, l := range losses {
		c = append(c, train.CurvePoint{Step: i, Kind: "MFT", Loss: l})
		c = append(c, train.CurvePoint{Step: i, Kind: "iid", Loss: 100}) // never judged
	}
	return c
}

func flat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestSanity(t *testing.T) {
	labels := []string{"non-hateful", "hateful"}
	ints := func(c, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = c
		}
		return out
	}
	mixed := append(ints(0, 10), ints(1, 10)...)
	for _, tc := range []struct {
		name  string
		res   train.Result
		kinds []string
		in    string // in a reason
	}{
		{"balanced i.i.d. predictions", train.Result{Labels: labels, IIDPredicted: mixed, IIDGold: mixed}, nil, ""},
		{"one class on i.i.d. data", train.Result{Labels: labels, IIDPredicted: ints(0, 20), IIDGold: mixed}, []string{FlagConstantIID}, "20 of 20 i.i.d. test examples (100.0%) predicted non-hateful, expected for 50.0%"},
		{"19 of 20 is nearly constant", train.Result{Labels: labels, IIDPredicted: append(ints(0, 19), 1), IIDGold: mixed}, []string{FlagConstantIID}, "19 of 20"},
		{"18 of 20 is not", train.Result{Labels: labels, IIDPredicted: append(ints(0, 18), 1, 1), IIDGold: mixed}, nil, ""},
		{"gold as skewed as the predictions", train.Result{Labels: labels, IIDPredicted: ints(1, 20), IIDGold: ints(1, 20)}, nil, ""},
		{"one class on the suite", train.Result{Suite: suiteOf(repeat("hateful", 30), append(repeat("hateful", 20), repeat("non-hateful", 10)...))}, []string{FlagConstantSuite}, "30 of 30 suite test inputs (100.0%) predicted hateful, expected for 66.7%"},
		{"one class against one-label gold (a func fold failing its functionality)", train.Result{Suite: suiteOf(repeat("non-hateful", 35), repeat("hateful", 35))}, nil, ""},
		{"one class on an unlabelled (INV) suite", train.Result{Suite: suiteOf(repeat("hateful", 30), nil)}, []string{FlagConstantSuite}, "30 of 30 suite test inputs"},
		{"suite loss falls", train.Result{Curve: curve(append(flat(1, 10), flat(0.5, 10)...)...)}, nil, ""},
		{"suite loss never falls", train.Result{Curve: curve(append(flat(0.7, 10), flat(0.7, 10)...)...)}, []string{FlagSuiteNotLearnt}, "first 10 suite batches 0.7, lowest later window 0.7, 2 windows"},
		{"too short to judge", train.Result{Curve: curve(flat(0.7, 19)...)}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags := Sanity(&tc.res)
			var kinds []string
			for _, f := range flags {
				kinds = append(kinds, f.Kind)
			}
			if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
				t.Fatalf("flags %v, want %v", flags, tc.kinds)
			}
			if tc.in != "" && !strings.Contains(FlagSummary(flags), tc.in) {
				t.Errorf("reason %q lacks %q", FlagSummary(flags), tc.in)
			}
		})
	}
}
