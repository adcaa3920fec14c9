package report

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/suites"
)

// TestTestReportCalibrationSection: a model's calibration section goes
// into the test report's Markdown (headings under "## Calibration"), and
// survives calibration.json: written, read back with its NaNs (an empty
// bin's mean) as NaN, and read by ReadTestCalibration of a folder that has
// none as nil.
func TestTestReportCalibrationSection(t *testing.T) {
	one := 1
	cases := []metrics.CaseVerdict{
		{Functionality: "a", Class: "Vocabulary", Verdict: metrics.Pass, Inputs: []metrics.CaseInput{{Label: "pos", Pred: "pos", PredClass: &one, Probs: []float64{0.1, 0.9}}}},
		{Functionality: "a", Class: "Vocabulary", Verdict: metrics.Fail, Inputs: []metrics.CaseInput{{Label: "neg", Pred: "pos", PredClass: &one, Probs: []float64{0.3, 0.7}}}},
	}
	cal, err := NewTestCalibration("m", cases, nil)
	if err != nil || cal == nil {
		t.Fatal(cal, err)
	}
	res := &metrics.Result{Task: "t", Score: fp(50), Functionalities: []metrics.FunctionalityResult{{Name: "a", Class: "Vocabulary", Type: suites.MFT, Cases: 2, Failed: 1, PassRate: fp(50)}}, Cases: cases}
	info := &TestInfo{Model: "m", Suite: "s.jsonl", ModelLabels: []string{"neg", "pos"}, Match: map[string]string{"neg": "neg", "pos": "pos"}}
	r, err := NewTestReport("t", TestModel{Info: info, Result: res, Cases: cases, Calibration: cal})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Calibration\n\n### Calibration per test (labelled inputs)", "| a | Vocabulary | 2 | 50.0% | 80.0% |", "Worst test: a, pass rate 50.0% (1 of 2 cases"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
	dir := t.TempDir()
	if got, err := ReadTestCalibration(dir); got != nil || err != nil {
		t.Errorf("a folder without calibration.json: %v, %v", got, err)
	}
	if err := WriteTestCalibration(filepath.Join(dir, TestCalibrationFile), cal); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTestCalibration(dir)
	if err != nil {
		t.Fatal(err)
	}
	k, want := got.Tests[1].Calibration, cal.Tests[1].Calibration
	if got.Model != "m" || k.N != 2 || k.ECE != want.ECE || !sameFloat(k.Brier, want.Brier) || !math.IsNaN(k.Brier) || !math.IsNaN(k.Bins[0].Confidence) || k.Bins[6].N != 1 || k.Bins[8].N != 1 ||
		got.Worst.Name != "a" || got.Worst.Lo != cal.Worst.Lo || got.SVG != cal.SVG {
		t.Errorf("read back %+v, wrote %+v", got, cal)
	}
}

// TestCalibrationPerTestOrder: the per-test table lists all labelled
// inputs first, then the tests worst calibrated (largest ECE) first, equal
// ECEs in suite order.
func TestCalibrationPerTestOrder(t *testing.T) {
	test := func(name string, ece float64) metrics.FunctionalityCalibration {
		return metrics.FunctionalityCalibration{Functionality: name, Calibration: metrics.Calibration{N: 1, ECE: ece, Brier: math.NaN()}}
	}
	c := &TestCalibration{Tests: []metrics.FunctionalityCalibration{test(metrics.AllLabelledInputs, 0.2),
		test("low", 0.1), test("high", 0.4), test("mid", 0.2), test("mid too", 0.2)}}
	var b bytes.Buffer
	if err := c.WriteMarkdown(&b, "## "); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Split(l, " | "); len(f) > 2 && strings.HasPrefix(l, "| ") && f[2] == "1" {
			got = append(got, strings.TrimPrefix(f[0], "| "))
		}
	}
	if want := []string{metrics.AllLabelledInputs, "high", "mid", "mid too", "low"}; !slices.Equal(got, want) {
		t.Errorf("order %q, want %q:\n%s", got, want, b.String())
	}
}
