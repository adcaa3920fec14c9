package modeltest

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
)

var update = flag.Bool("update", false, "rewrite testdata/run")

// Run's results, case verdicts and predictions are those beluga test wrote
// before its scoring went through package suitescore, bit for bit: a
// two-way model squashed onto a 3-way sentiment suite (its classes in the
// other order), and the same model on a two-label suite through
// --label-map.
func TestRunGolden(t *testing.T) {
	for _, tc := range []struct {
		name, model, suite string
		labelMap           map[string]string
	}{
		{"squash", "../models/testdata/hfsaved/classifier", "../train/testdata/tiny_suite.jsonl", nil},
		{"squash-fp16", "../models/testdata/hfsaved/bert-fp16", "../train/testdata/tiny_suite.jsonl", nil},
		{"binary", "../models/testdata/hfsaved/classifier", "../train/testdata/tiny_qqp.jsonl", map[string]string{"POSITIVE": "duplicate", "NEGATIVE": "not duplicate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			if _, err := Run(context.Background(), Options{Model: tc.model, Suite: tc.suite, Out: out, LabelMap: datasets.LabelMapOf(tc.labelMap)}); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "run", tc.name)
			for _, name := range []string{ResultsFile, CasesFile, PredictionsFile} {
				got, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				if *update {
					os.MkdirAll(golden, 0o755)
					if err := os.WriteFile(filepath.Join(golden, name), got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if want, err := os.ReadFile(filepath.Join(golden, name)); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s (%v)", name, golden, err)
				}
			}
		})
	}
}
