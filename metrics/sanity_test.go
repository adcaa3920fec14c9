package metrics

import (
	"math"
	"strings"
	"testing"
)

func suiteOf(preds, labels []string) *Result {
	r := &Result{}
	for i, p := range preds {
		k := 0
		in := CaseInput{Text: "x", Pred: p, PredClass: &k}
		if i < len(labels) {
			in.Label = labels[i]
		}
		r.Cases = append(r.Cases, CaseVerdict{Inputs: []CaseInput{in}})
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

func flat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestSanity(t *testing.T) {
	mixed := append(repeat("non-hateful", 10), repeat("hateful", 10)...)
	for _, tc := range []struct {
		name  string
		in    SanityInput
		kinds []string
		want  string // in a reason
	}{
		{"balanced i.i.d. predictions", SanityInput{IIDPredicted: mixed, IIDGold: mixed}, nil, ""},
		{"one class on i.i.d. data", SanityInput{IIDPredicted: repeat("non-hateful", 20), IIDGold: mixed}, []string{FlagConstantIID}, "20 of 20 i.i.d. test examples (100.0%) predicted non-hateful, expected for 50.0%"},
		{"19 of 20 is nearly constant", SanityInput{IIDPredicted: append(repeat("non-hateful", 19), "hateful"), IIDGold: mixed}, []string{FlagConstantIID}, "19 of 20"},
		{"18 of 20 is not", SanityInput{IIDPredicted: append(repeat("non-hateful", 18), "hateful", "hateful"), IIDGold: mixed}, nil, ""},
		{"gold as skewed as the predictions", SanityInput{IIDPredicted: repeat("hateful", 20), IIDGold: repeat("hateful", 20)}, nil, ""},
		{"one class on the suite", SanityInput{Suite: suiteOf(repeat("hateful", 30), append(repeat("hateful", 20), repeat("non-hateful", 10)...))}, []string{FlagConstantSuite}, "30 of 30 suite test inputs (100.0%) predicted hateful, expected for 66.7%"},
		{"one class against one-label gold (a func fold failing its functionality)", SanityInput{Suite: suiteOf(repeat("non-hateful", 35), repeat("hateful", 35))}, nil, ""},
		{"one class on an unlabelled (INV) suite", SanityInput{Suite: suiteOf(repeat("hateful", 30), nil)}, []string{FlagConstantSuite}, "30 of 30 suite test inputs"},
		{"both, in order", SanityInput{IIDPredicted: repeat("hateful", 20), IIDGold: mixed, Suite: suiteOf(repeat("hateful", 30), nil)}, []string{FlagConstantIID, FlagConstantSuite}, ""},
		{"suite loss falls", SanityInput{SuiteLosses: append(flat(1, 10), flat(0.5, 10)...)}, nil, ""},
		{"suite loss never falls", SanityInput{SuiteLosses: append(flat(0.7, 10), flat(0.7, 10)...)}, []string{FlagSuiteNotLearnt}, "first 10 suite batches 0.7, lowest later window 0.7, 2 windows"},
		{"non-finite losses are skipped", SanityInput{SuiteLosses: append(append(flat(0.7, 10), math.NaN(), math.Inf(1)), flat(0.7, 10)...)}, []string{FlagSuiteNotLearnt}, "2 windows"},
		{"too short to judge", SanityInput{SuiteLosses: flat(0.7, 19)}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags := Sanity(tc.in)
			var kinds []string
			for _, f := range flags {
				kinds = append(kinds, f.Kind)
			}
			if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
				t.Fatalf("flags %v, want %v", flags, tc.kinds)
			}
			if tc.want != "" && !strings.Contains(FlagSummary(flags), tc.want) {
				t.Errorf("reason %q lacks %q", FlagSummary(flags), tc.want)
			}
		})
	}
}
