package train

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/suitescore"
)

var updateEval = flag.Bool("update-evalsuite", false, "rewrite testdata/evalsuite")

// cycledPredictor answers the i-th input with probs[i % len(probs)]
// (nil: an unparsed answer).
func cycledPredictor(probs [][]float32) predictFunc {
	return func(_ context.Context, inputs []predict.Input) ([]predict.Output, error) {
		outs := make([]predict.Output, len(inputs))
		for i := range outs {
			outs[i].Probs = probs[i%len(probs)]
		}
		return outs, nil
	}
}

// evalSuite's files — the suite predictions in BeLUGA's format, the
// results, the case verdicts and the constant predictors' results — are
// those of the evaluation before it went through package suitescore, bit
// for bit, for each reading: a two-way model squashed onto a 3-way
// sentiment suite (at the float32 band edges too), binary_conf on a
// two-label suite (0.5 exactly too), a task whose classes are the suite's
// in another order (ties too), and unparsed answers.
func TestEvalSuiteGolden(t *testing.T) {
	third, twoThirds := float32(1)/3, float32(2)/3
	binary := [][]float32{{0.1, 0.9}, {0.9, 0.1}, {0.5, 0.5}, {1 - third, third}, {1 - twoThirds, twoThirds}, {0.6, 0.4}, {0.4, 0.6}, {0.66, 0.34}, {0.34, 0.66}, {0.8, 0.2}, {0.25, 0.75}}
	three := [][]float32{{0.7, 0.2, 0.1}, {0.1, 0.7, 0.2}, {0.2, 0.1, 0.7}, {0.4, 0.4, 0.2}, {0.3, 0.3, 0.4}, {1. / 3, 1. / 3, 1. / 3}}
	for _, tc := range []struct {
		name, suite string
		labels      []string
		probs       [][]float32
	}{
		{"squash", "tiny_suite.jsonl", []string{"negative", "positive"}, binary},
		{"binary", "tiny_qqp.jsonl", []string{"not duplicate", "duplicate"}, binary},
		{"reordered", "intent_suite.jsonl", []string{"complaint", "greeting", "question"}, three},
		{"unparsed", "intent_suite.jsonl", []string{"greeting", "question", "complaint"}, append([][]float32{nil}, three...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := suites.Open(filepath.Join("testdata", tc.suite))
			if err != nil {
				t.Fatal(err)
			}
			task := &Task{Name: tc.name, Labels: tc.labels, MFTLoss: "ce"}
			dir := t.TempDir()
			_, constant, err := evalSuite(context.Background(), cycledPredictor(tc.probs), task, s, nil, dir)
			if err != nil {
				t.Fatal(err)
			}
			files := []string{"suite_predictions.txt", "results.json", "cases.jsonl"}
			for i, c := range constant {
				name := fmt.Sprintf("constant_%d_%s.json", i, strings.ReplaceAll(c.Label, " ", "_"))
				if err := c.Suite.WriteJSON(filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
				files = append(files, name)
			}
			golden := filepath.Join("testdata", "evalsuite", tc.name)
			for _, name := range files {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if *updateEval {
					os.MkdirAll(golden, 0o755)
					if err := os.WriteFile(filepath.Join(golden, name), got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(filepath.Join(golden, name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s:\n%s", name, golden, firstDiff(got, want))
				}
			}
		})
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range min(len(g), len(w)) {
		if !bytes.Equal(g[i], w[i]) {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + string(g[i]) + "\n want " + string(w[i])
		}
	}
	return "lengths differ"
}

// A run's evaluation and beluga test score a model on a suite by one path
// (suitescore.Run) and differ only in how they read its probabilities;
// with real models (each family's tiny checkpoint, its classes in the
// suite's order) on a two-label suite and on a 3-way sentiment suite
// (squashed), every case gets the same verdict and every input the same
// predicted label from evalSuite as from beluga test's reading
// (suitescore.PredictJSONL, the model's classes in the suite's order).
func TestEvalSuiteScoresAsBelugaTest(t *testing.T) {
	type testCase struct {
		model, suite string
		labels       []string
	}
	var cases []testCase
	for _, model := range []string{"bert", "bert-fp16", "distilbert", "electra", "roberta", "deberta-v2"} {
		cases = append(cases, testCase{model, "tiny_qqp.jsonl", []string{"not duplicate", "duplicate"}},
			testCase{model, "tiny_suite.jsonl", []string{"negative", "positive"}})
	}
	for _, tc := range cases {
		t.Run(tc.model+"/"+tc.suite, func(t *testing.T) {
			ctx := context.Background()
			m, err := pretrained.Load(ctx, filepath.Join("..", "models", "testdata", "hfsaved", tc.model), pretrained.Options{MaxLength: 128})
			if err != nil {
				t.Fatal(err)
			}
			run := func(ctx context.Context, inputs []predict.Input) ([]predict.Output, error) {
				return predict.RunContext(ctx, m.Classifier, m.Tokenizer, inputs, 64)
			}
			s, err := suites.Open(filepath.Join("testdata", tc.suite))
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := evalSuite(ctx, run, &Task{Name: "t", Labels: tc.labels, MFTLoss: "ce"}, s, nil, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			want, err := suitescore.Run(ctx, s, run, suitescore.PredictJSONL([]int{0, 1}), metrics.ScoreOptions{Split: suites.SplitTest})
			if err != nil {
				t.Fatal(err)
			}
			verdicts := func(r *metrics.Result) string {
				var b strings.Builder
				for _, c := range r.Cases {
					fmt.Fprintf(&b, "%s/%d %s", c.Functionality, c.Case, c.Verdict)
					for _, in := range c.Inputs {
						fmt.Fprintf(&b, " %q", in.Pred)
					}
					b.WriteByte('\n')
				}
				return b.String()
			}
			if g, w := verdicts(got), verdicts(want.Result); g != w || len(got.Cases) == 0 {
				t.Errorf("a run's evaluation:\n%s\nbeluga test's:\n%s", g, w)
			}
		})
	}
}
