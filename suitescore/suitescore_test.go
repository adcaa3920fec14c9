package suitescore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/suites"
)

func open(t *testing.T, name string) *suites.Suite {
	t.Helper()
	s, err := suites.Open(filepath.Join("..", "train", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Inputs are the scored cases' inputs in suite order, pairs as pairs, as
// many as metrics.Score expects predictions for.
func TestInputs(t *testing.T) {
	s := open(t, "tiny_qqp.jsonl")
	for _, split := range []suites.Split{"", suites.SplitTrain, suites.SplitTest} {
		in := Inputs(s, split)
		if len(in) != metrics.ScoredInputs(s, split) {
			t.Errorf("split %q: %d inputs, metrics.ScoredInputs %d", split, len(in), metrics.ScoredInputs(s, split))
		}
	}
	all := Inputs(s, "")
	if all[0].Text != "a good film" || all[0].TextPair == nil || *all[0].TextPair != "a great film" {
		t.Errorf("first input %+v, want the pair (a good film, a great film)", all[0])
	}
}

// fixed answers the i-th input with probs[i % len(probs)].
func fixed(probs [][]float32) Predictor {
	return func(_ context.Context, inputs []predict.Input) ([]predict.Output, error) {
		outs := make([]predict.Output, len(inputs))
		for i := range outs {
			outs[i].Probs = probs[i%len(probs)]
		}
		return outs, nil
	}
}

// A training run reads its model's probabilities as BeLUGA writes them
// and beluga test as beluga eval reads beluga predict's output; the two
// readings differ only in the last bits of a probability and at a
// boundary (a tie, P = 0.5, the squash band's edges). Away from those, the
// same model outputs scored through both give every case the same
// verdict and every input the same prediction, on each kind of suite: a
// two-way model squashed onto a 3-way suite, two classes, three classes
// in another order than the suite's.
func TestReadingsAgree(t *testing.T) {
	two := [][]float32{{0.1, 0.9}, {0.9, 0.1}, {0.45, 0.55}, {0.6, 0.4}, {0.2, 0.8}, {0.75, 0.25}, {0.38, 0.62}}
	three := [][]float32{{0.7, 0.2, 0.1}, {0.1, 0.7, 0.2}, {0.2, 0.1, 0.7}, {0.5, 0.3, 0.2}}
	for _, tc := range []struct {
		name, suite string
		probs       [][]float32
		// the model's classes as suite classes, and BeLUGA's reading
		match   []int
		belugaR BeLUGA
	}{
		{"squash", "tiny_suite.jsonl", two, []int{0, 1}, BeLUGA{Labels: 3, Squash: true}},
		{"binary", "tiny_qqp.jsonl", two, []int{0, 1}, BeLUGA{Labels: 2, ToSuite: []int{0, 1}}},
		{"three, reordered", "intent_suite.jsonl", three, []int{2, 0, 1}, BeLUGA{Labels: 3, ToSuite: []int{2, 0, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, tc.suite)
			opt := metrics.ScoreOptions{Split: suites.SplitTest}
			train, err := Run(context.Background(), s, fixed(tc.probs), tc.belugaR.Read, opt)
			if err != nil {
				t.Fatal(err)
			}
			test, err := Run(context.Background(), s, fixed(tc.probs), PredictJSONL(tc.match), opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(train.Result.Cases) == 0 || len(train.Result.Cases) != len(test.Result.Cases) {
				t.Fatalf("%d and %d cases", len(train.Result.Cases), len(test.Result.Cases))
			}
			for i, a := range train.Result.Cases {
				b := test.Result.Cases[i]
				preds := func(c metrics.CaseVerdict) []string {
					var out []string
					for _, in := range c.Inputs {
						out = append(out, in.Pred)
					}
					return out
				}
				if a.Functionality != b.Functionality || a.Case != b.Case || a.Verdict != b.Verdict || !slices.Equal(preds(a), preds(b)) {
					t.Errorf("case %s/%d: a run's reading %s %v, beluga test's %s %v", a.Functionality, a.Case, a.Verdict, preds(a), b.Verdict, preds(b))
				}
			}
			for i, f := range train.Result.Functionalities {
				if g := test.Result.Functionalities[i]; fmt.Sprint(f.Failed, f.Filtered, f.Cases) != fmt.Sprint(g.Failed, g.Filtered, g.Cases) {
					t.Errorf("functionality %s: %+v and %+v", f.Name, f, g)
				}
			}
		})
	}
}

// PredictJSONL reads a model's probabilities exactly as beluga eval reads
// them from beluga predict's file (--predictions-format predict_jsonl):
// what beluga test scores is what eval would score from its predictions.
func TestPredictJSONLIsEvalsReading(t *testing.T) {
	outs := []predict.Output{{Probs: []float32{0.1, 0.9}}, {Probs: []float32{0.7, 0.3}}, {Probs: []float32{1. / 3, 2. / 3}}, {Probs: []float32{0.5, 0.5}}, {Probs: []float32{0.123456789, 0.876543211}}}
	path := filepath.Join(t.TempDir(), "predictions.jsonl")
	if err := predict.WriteOutputs(path, outs); err != nil {
		t.Fatal(err)
	}
	eval, err := metrics.ReadPredictions(path, metrics.PredictJSONL, len(outs), false)
	if err != nil {
		t.Fatal(err)
	}
	read := PredictJSONL([]int{0, 1})
	for i, o := range outs {
		got := read(o.Probs)
		if got.Class != eval[i].Class || !slices.Equal(got.Probs, eval[i].Probs) {
			t.Errorf("output %d: read %+v, eval %+v", i, got, eval[i])
		}
	}
}
