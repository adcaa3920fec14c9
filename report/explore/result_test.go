package explore

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/suites"
)

// resultSource is the test report of a model scored on train/testdata's
// tiny sentiment suite: every input predicted positive with probability
// 0.9 but "a godo film", predicted negative, which breaks the first typos
// case.
func resultSource(t *testing.T) *Source {
	t.Helper()
	s, err := suites.Open(filepath.Join("..", "..", "train", "testdata", "tiny_suite.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var preds []metrics.Prediction
	for _, f := range s.Functionalities {
		for _, c := range f.Cases {
			for _, in := range c.Inputs {
				p := metrics.Prediction{Class: 1, Probs: []float64{0.1, 0.9}}
				if in.Text == "a godo film" {
					p = metrics.Prediction{Class: 0, Probs: []float64{0.8, 0.2}}
				}
				preds = append(preds, p)
			}
		}
	}
	res, err := metrics.Score(s, preds, metrics.ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cases := filepath.Join(t.TempDir(), "cases.jsonl")
	if err := res.WriteCases(cases); err != nil {
		t.Fatal(err)
	}
	info := &report.TestInfo{Model: "my-model", Suite: "tiny_suite.jsonl", ModelLabels: []string{"NEG", "POS"}, SuiteLabels: s.ModelLabels,
		Match: map[string]string{"NEG": "negative", "POS": "positive"}, Flags: []string{"constant-suite: constant predictor"},
		Descriptions: map[string]string{"typos": "Add one typo to the input"}}
	tr, err := report.NewTestReport("beluga test", report.TestModel{Info: info, Result: res, Cases: res.Cases})
	if err != nil {
		t.Fatal(err)
	}
	src, err := FromTest(tr, []TestRun{{CasesFile: cases, Labels: s.Labels}})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestTestReportView: the view carries the test report (no Table 3, no
// heatmap) and each test's cases with the model's per-input verdicts read
// from its case file.
func TestTestReportView(t *testing.T) {
	src := resultSource(t)
	v := src.View
	if v.Test == nil || len(v.Table.Columns) != 0 || len(v.Tasks) != 0 || len(v.Funcs) != 5 || len(v.Runs) != 1 {
		t.Fatalf("view %+v", v)
	}
	cs, err := src.Cases(3) // typos
	if err != nil {
		t.Fatal(err)
	}
	rc := cs.Runs["model"]
	if rc == nil || rc.V[0] != 'F' || rc.In[0] != "PPF" || rc.Viol[0][2] != 0.7 || rc.Worst[0] != 0.7 {
		t.Errorf("typos: %+v", rc)
	}
}

// TestTestReportInBrowser: the page of a tested model shows the per-test
// table with fail rates, the grid with its numbers printed in the cells,
// the suite score with what it leaves out, no Table 3; a test's name opens
// its failing cases with the breaking input marked.
func TestTestReportInBrowser(t *testing.T) {
	ctx := browser(t)
	src := resultSource(t)
	path := writePage(t, src)
	var rows, matrix, summary, body, title, marked, rate string
	link := `#tests tr[data-test="typos"] a`
	if err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#tests tbody tr").length + ""`, &rows),
		chromedp.Text(`#test-matrix`, &matrix, chromedp.ByQuery),
		chromedp.Text(`#test-summary`, &summary, chromedp.ByQuery),
		chromedp.Text(`#tests tr[data-test="typos"] td[data-k="rate"]`, &rate, chromedp.ByQuery),
		chromedp.Text(`main`, &body, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "main", "test-report.png")
	if err := chromedp.Run(ctx,
		chromedp.Click(link, chromedp.ByQuery),
		chromedp.WaitVisible(`#cases tbody tr`, chromedp.ByQuery),
		chromedp.Text(`#func-title`, &title, chromedp.ByQuery),
		chromedp.Text(`#cases tbody tr .inp.breaks`, &marked, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "main", "test-report-failing-case.png")
	if rows != "5" || !strings.Contains(rate, "33.3%") {
		t.Errorf("per-test table: %s rows, typos fail rate %q", rows, rate)
	}
	if !strings.Contains(matrix, "100.0% (2)") || !strings.Contains(matrix, "33.3% (1)") {
		t.Errorf("the grid does not print its fail rates:\n%s", matrix)
	}
	if !strings.Contains(summary, "over 5 of 5 tests") || strings.Contains(body, "Table 3") || strings.Contains(body, "baseline") {
		t.Errorf("summary %q; page:\n%s", summary, body)
	}
	if title != "typos" || !strings.Contains(marked, "a godo film") {
		t.Errorf("title %q, marked input %q", title, marked)
	}
}

// TestFromTestRefuses: no report, or case files that do not follow its
// models, is an error, never a panic.
func TestFromTestRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *report.TestReport
		runs []TestRun
		want string
	}{
		{"no report", nil, nil, "no test report"},
		{"case files", &report.TestReport{Models: []string{"a", "b"}}, []TestRun{{}}, "2 models with 1 case files"},
	} {
		if _, err := FromTest(tc.r, tc.runs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
