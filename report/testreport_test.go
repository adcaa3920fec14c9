package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/suites"
)

func fp(v float64) *float64 { return &v }

// The report says what the suite score leaves out, and the grid holds the
// worst fail rate of each capability × type with its number of tests, as
// CheckList's visual summary.
func TestTestReportScoreNoteAndGrid(t *testing.T) {
	res := &metrics.Result{Task: "sentiment", Score: fp(75), Functionalities: []metrics.FunctionalityResult{
		{Name: "a", Class: "Vocabulary", Type: suites.MFT, Cases: 10, Failed: 1, PassRate: fp(90)},
		{Name: "b", Class: "Vocabulary", Type: suites.MFT, Cases: 10, Filtered: 6, Failed: 2, PassRate: fp(50)},
		{Name: "reducers", Class: "Vocabulary", Type: suites.DIR, Cases: 4, Filtered: 4, Excluded: true},
		{Name: `"used to" should reduce`, Class: "Temporal", Type: suites.DIR, Cases: 4, Filtered: 4, Excluded: true},
		{Name: "all filtered", Class: "Negation", Type: suites.DIR, Cases: 3, Filtered: 3},
	}}
	info := &TestInfo{Model: "m", Suite: "s.pkl", ModelLabels: []string{"x"}, Match: map[string]string{"x": "y"}}
	r, err := NewTestReport("t", TestModel{Info: info, Result: res})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"over 2 of 5 tests", `leaves out "reducers", ""used to" should reduce" (BeLUGA leaves them out`, `"all filtered" (every case filtered)`} {
		if !strings.Contains(r.ScoreNote, want) {
			t.Errorf("score note %q lacks %q", r.ScoreNote, want)
		}
	}
	m := r.Matrix
	if m.Capabilities[0] != "Vocabulary" || m.Capabilities[1] != "Temporal" || m.Capabilities[2] != "Negation" {
		t.Errorf("capabilities %q, want CheckList's order", m.Capabilities)
	}
	c := m.Cells[0][0]
	if c.Tests != 2 || c.Worst[0] == nil || *c.Worst[0] != 50 || c.WorstTest != "b" {
		t.Errorf("Vocabulary × MFT: %+v, want the worst of 10%% and 50%% over 2 tests", c)
	}
	if r.Tests[1].Stats[0].FailRate == nil || *r.Tests[1].Stats[0].FailRate != 50 {
		t.Errorf("fail rate of b: %v, want 2 of the 4 cases not filtered", r.Tests[1].Stats[0].FailRate)
	}
}

// TestTestReportTwoModelsSayWhatOn: two models that filter different
// cases of a test each get their fail rate over their own unfiltered
// cases, McNemar's p over the cases both scored, and the Markdown table
// says so.
func TestTestReportTwoModelsSayWhatOn(t *testing.T) {
	verdicts := func(vs ...metrics.Verdict) []metrics.CaseVerdict {
		var out []metrics.CaseVerdict
		for i, v := range vs {
			out = append(out, metrics.CaseVerdict{Functionality: "a", Case: i, Verdict: v})
		}
		return out
	}
	a := verdicts(metrics.Fail, metrics.Fail, metrics.Pass, metrics.Filtered)
	b := verdicts(metrics.Pass, metrics.Filtered, metrics.Pass, metrics.Pass)
	model := func(name string, failed, filtered int, cases []metrics.CaseVerdict) TestModel {
		res := &metrics.Result{Task: "t", Functionalities: []metrics.FunctionalityResult{{Name: "a", Class: "Vocabulary", Type: suites.MFT, Cases: 4, Filtered: filtered, Failed: failed}}}
		return TestModel{Info: &TestInfo{Model: name, Suite: "s.jsonl"}, Result: res, Cases: cases}
	}
	r, err := NewTestReport("t", model("A", 2, 1, a), model("B", 0, 1, b))
	if err != nil {
		t.Fatal(err)
	}
	row := r.Tests[0]
	if *row.Stats[0].FailRate != 200.0/3 || *row.Stats[1].FailRate != 0 || row.Flips != 1 || row.P == nil || *row.P != 1 {
		t.Errorf("row %+v: want A 2 of 3, B 0 of 3, one flip over the 2 cases both scored", row)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if want := "## Tests: fail rates of A and B, each over the cases that model did not filter; McNemar's exact p over the cases both scored"; !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, md.String())
	}
}
