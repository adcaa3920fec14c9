package explore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/splits"
)

// skewedSource is a store whose held-out metadata runs recorded a split
// that leaves group g0 with 10 of T_test's 60 cases against 40 of the
// suite's 120: a skewed share (splits.SkewTolerance), as BeLUGA's own
// HateCheck split gives trans people.
func skewedSource(t *testing.T) *Source {
	t.Helper()
	store, runs := sweepIn(t, `
name: explore-skew
tasks:
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID+T]
methods: [vanilla]
scores: [seen, "meta:group"]
`, t.TempDir(), caseRunner{})
	bal := []splits.GroupBalance{{Value: "g0", Suite: 40, Train: 25, Validation: 5, Test: 10}, {Value: "g1", Suite: 40, Test: 25}, {Value: "g2", Suite: 40, Test: 25}}
	experimentstest.RecordGroupBalance(t, store, runs, bal)
	src, err := Build(store, runs, Options{Report: report.Options{Trials: 10}})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// The page marks a skewed held-out group as the Markdown report does: its
// Table 3 column's cells and its per-group line ‖ (and # for few T_test
// cases), with the report's own footnote giving the counts, both in the
// view and in the browser.
func TestSkewedGroupIsMarkedInBrowser(t *testing.T) {
	src := skewedSource(t)
	var md, groupsMD bytes.Buffer
	if err := src.Table.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := src.Table.WriteGroupsMarkdown(&groupsMD); err != nil {
		t.Fatal(err)
	}
	note := "IID+T: Vanilla group=g0: 10 of 60 T_test cases (16.7%), 40 of 120 suite cases (33.3%)"
	if !strings.Contains(md.String(), note) || !strings.Contains(groupsMD.String(), note) {
		t.Fatalf("the Markdown report lacks the skew note %q:\n%s\n%s", note, md.String(), groupsMD.String())
	}
	const col = "T_group=g0 SENT"
	v := src.View
	j := -1
	for k, c := range v.Table.Columns {
		if c.Header == col {
			j = k
		}
	}
	if j < 0 {
		t.Fatalf("no column %s in %+v", col, v.Table.Columns)
	}
	trained := -1
	for i, r := range v.Rows {
		if r.Configuration == "IID+T" {
			trained = i
		}
	}
	if got := v.Table.Cells[trained][j].FlagMarks; !strings.Contains(got, splits.SkewMark) {
		t.Errorf("view: %s cell marks %q, want %s", col, got, splits.SkewMark)
	}
	var g0 *GroupLineView
	for gi := range v.Groups {
		for li := range v.Groups[gi].Lines {
			if l := &v.Groups[gi].Lines[li]; l.Group == "g0" {
				g0 = l
			}
		}
	}
	want := ""
	for _, l := range src.Table.GroupLines() {
		if l.Group == "g0" {
			want = report.GroupMarks(l)
		}
	}
	if g0 == nil || g0.CasesMarks != want || !strings.Contains(want, splits.SkewMark) {
		t.Fatalf("view: group line g0 %+v, want the report's marks with %s", g0, splits.SkewMark)
	}
	if !strings.Contains(strings.Join(v.GroupFootnotes, "\n"), note) || !strings.Contains(strings.Join(v.Footnotes, "\n"), note) {
		t.Errorf("view: footnotes %q and group footnotes %q, want both with %q", v.Footnotes, v.GroupFootnotes, note)
	}

	ctx := browser(t)
	var cell, line, foot, groupFoot string
	if err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+writePage(t, src)),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll("#table3-grid tbody tr")].map(tr => tr.querySelector("td[data-col='`+col+`']")).filter(td => td).map(td => td.textContent).join("|")`, &cell),
		chromedp.Evaluate(`[...document.querySelectorAll("table.groups tbody tr")].filter(tr => tr.children[1].textContent === "g0").map(tr => tr.children[2].textContent).join("|")`, &line),
		chromedp.Evaluate(`(document.querySelector("#footnotes") || {}).textContent || ""`, &foot),
		chromedp.Evaluate(`(document.querySelector("#group-footnotes") || {}).textContent || ""`, &groupFoot),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cell, splits.SkewMark) {
		t.Errorf("browser: %s cells %q, without %s", col, cell, splits.SkewMark)
	}
	if !strings.Contains(line, splits.SkewMark) {
		t.Errorf("browser: g0's cases %q, without %s", line, splits.SkewMark)
	}
	if !strings.Contains(foot, note) || !strings.Contains(groupFoot, note) {
		t.Errorf("browser: footnotes %q / %q, want %q", foot, groupFoot, note)
	}
}
