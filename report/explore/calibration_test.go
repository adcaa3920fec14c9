package explore

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/report"
)

// TestTestReportCalibrationInBrowser: the test report page shows the
// calibration section — the figure as an image that loads, the user's
// data with its confusion matrix, the calibration per test worst first,
// the worst test with its interval.
func TestTestReportCalibrationInBrowser(t *testing.T) {
	ctx := browser(t)
	src := resultSource(t)
	one, zero := 1, 0
	in := func(label string, k int, p float64) metrics.CaseInput {
		names := []string{"negative", "positive"}
		return metrics.CaseInput{Label: label, Pred: names[k], PredClass: &k, Probs: []float64{1 - p, p}}
	}
	cases := []metrics.CaseVerdict{
		{Functionality: "calibrated", Class: "Vocabulary", Verdict: metrics.Pass, Inputs: []metrics.CaseInput{in("positive", one, 0.9)}},
		{Functionality: "over-confident", Class: "Negation", Verdict: metrics.Fail, Inputs: []metrics.CaseInput{in("negative", one, 0.95)}},
		{Functionality: "over-confident", Class: "Negation", Verdict: metrics.Pass, Inputs: []metrics.CaseInput{in("negative", zero, 0.2)}},
	}
	data, err := metrics.MeasureLabelled("dev.tsv", []string{"negative", "positive"},
		[]metrics.Prediction{{Class: 1, Probs: []float64{0.2, 0.8}}, {Class: 0, Probs: []float64{0.7, 0.3}}, {Class: 1, Probs: []float64{0.4, 0.6}}}, []int{1, 0, 0}, 10)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := report.NewTestCalibration("my-model", cases, data)
	if err != nil {
		t.Fatal(err)
	}
	src.View.Test.Calibration = []*report.TestCalibration{cal}
	path := writePage(t, src)
	var loaded, section, first string
	if err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible(`#test-calibration`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#test-calibration img").complete`, nil),
		chromedp.Evaluate(`document.querySelector("#test-calibration img").naturalWidth + ""`, &loaded),
		chromedp.Text(`#test-calibration`, &section, chromedp.ByQuery),
		chromedp.Text(`#test-calibration table.calibration-tests tbody tr:nth-child(2) td`, &first, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "#test-calibration", "test-report-calibration.png")
	if loaded == "0" || loaded == "" {
		t.Errorf("the calibration figure did not load (natural width %q)", loaded)
	}
	for _, want := range []string{"Your data: dev.tsv", "3 labelled examples: accuracy 66.7%", "Confusion matrix", "Worst test: over-confident, pass rate 50.0% (1 of 2 cases"} {
		if !strings.Contains(section, want) {
			t.Errorf("the section lacks %q:\n%s", want, section)
		}
	}
	if first != "over-confident" {
		t.Errorf("first test after the total: %q, want the worst calibrated", first)
	}
}
