package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// beluga test scores a model as the three-step workflow of suite inputs,
// predict and eval --predictions-format predict_jsonl does, on a suite
// that carries no split (each computes BeLUGA's by the one rule): the same
// results file, byte for byte.
func TestTestScoresAsInputsPredictEval(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../train/testdata/tiny_suite.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	suite := filepath.Join(dir, "suite.jsonl")
	unsplit := regexp.MustCompile(`,"split":"[a-z]+"`).ReplaceAll(b, nil)
	if bytes.Equal(unsplit, b) {
		t.Fatal("the fixture carries no split to remove")
	}
	os.WriteFile(suite, unsplit, 0o644)
	model := "../../models/testdata/hfsaved/bert-fp16" // NEGATIVE, POSITIVE: the suite's model_labels' order
	in, preds, evalOut, testOut := filepath.Join(dir, "inputs.jsonl"), filepath.Join(dir, "preds.jsonl"), filepath.Join(dir, "eval.json"), filepath.Join(dir, "test")
	for _, args := range [][]string{
		{"suite", "inputs", suite, "--split", "test", "-o", in},
		{"predict", "--model", model, "--input", in, "-o", preds},
		{"eval", "--suite", suite, "--split", "test", "--predictions", preds, "--predictions-format", "predict_jsonl", "-o", evalOut},
		{"test", "--model", model, "--suite", suite, "--split", "test", "-o", testOut},
	} {
		if out, err := execute(t, args...); err != nil {
			t.Fatalf("beluga %v: %v\n%s", args, err, out)
		}
	}
	e, _ := os.ReadFile(evalOut)
	r, _ := os.ReadFile(filepath.Join(testOut, "results.json"))
	if len(e) == 0 || !bytes.Equal(e, r) {
		t.Errorf("eval's results:\n%s\nbeluga test's:\n%s", e, r)
	}
}
