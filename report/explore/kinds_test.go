package explore

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/report"
)

// shippedKinds are the stores of the shipped specs that the command tests
// pin (cmd/beluga/testdata; see pins_report_test.go there), one per kind
// of experiment the page must show: BeLUGA's SENT and READ quickstarts,
// HateCheck under configuration T alone (no IID baseline: the table's
// first row is a trained one), HateCheck's target identities held out (a
// metadata score, a heatmap line and a group table per identity), and a
// learning curve (IID rows per training size).
var shippedKinds = []struct{ name, store string }{
	{"SENT", "quickstart-store"},
	{"READ", "quickstart-read-store"},
	{"T-only", "hatecheck-store"},
	{"IdentOut", "hatecheck-identout-store"},
	{"learning curve", "learning-curve-store"},
}

// Every shipped kind opens in the browser, from the report file and under
// serve: the table with all its rows, every heatmap line (a metadata
// score's groups included), every per-group table, and a functionality
// opened from a trained row's heatmap cell with that row's runs side by
// side — which a T-only store's page once left without columns, failing
// with "Cannot read properties of null".
func TestShippedSpecKindsInBrowser(t *testing.T) {
	ctx := browser(t)
	for _, kind := range shippedKinds {
		t.Run(kind.name, func(t *testing.T) {
			opt := fastReport
			if kind.name == "T-only" && envPath("BELUGA_SCREENSHOTS") != "" {
				// The docs' pictures show what beluga serve shows: the
				// p-values of the default 10,000 trials.
				opt = report.Options{}
			}
			src, err := FromDir(filepath.Join("..", "..", "cmd", "beluga", "testdata", kind.store), Options{Report: opt})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(src.Handler())
			defer srv.Close()
			for mode, url := range map[string]string{"file": "file://" + writePage(t, src), "serve": srv.URL + "/"} {
				var rows, lines, groups int
				var groupLines []int
				if err := chromedp.Run(ctx,
					chromedp.Navigate(url),
					chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
					chromedp.Evaluate(`document.querySelectorAll("#table3-grid tbody tr").length`, &rows),
					chromedp.Evaluate(`document.querySelectorAll("table.heat tbody tr").length`, &lines),
					chromedp.Evaluate(`document.querySelectorAll("table.groups").length`, &groups),
					chromedp.Evaluate(`[...document.querySelectorAll("table.groups")].map(t => t.querySelectorAll("tbody tr").length)`, &groupLines),
				); err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				wantLines := 0
				for _, task := range src.View.Tasks {
					wantLines += len(task.Heatmap)
				}
				if rows != len(src.View.Rows) || lines != wantLines || groups != len(src.View.Groups) {
					t.Errorf("%s: %d table rows, %d heatmap lines, %d group tables; want %d, %d, %d", mode, rows, lines, groups, len(src.View.Rows), wantLines, len(src.View.Groups))
				}
				for i, g := range src.View.Groups {
					if i < len(groupLines) && groupLines[i] != len(g.Lines) {
						t.Errorf("%s: group table %s has %d lines, want %d", mode, g.Title, groupLines[i], len(g.Lines))
					}
				}
				if kind.name == "IdentOut" {
					var labels string
					if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll("table.heat tbody tr th:nth-child(2)")].map(th => th.textContent).join("|")`, &labels)); err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(labels, "target_ident=Muslims") {
						t.Errorf("%s: heatmap lines %q lack the per-identity lines the PNG has", mode, labels)
					}
				}
				// A functionality from a trained row's first heatmap cell
				// with a rate.
				li, k := trainedCell(src)
				if li < 0 {
					t.Fatalf("no trained row's cell to open")
				}
				line := src.View.Tasks[0].Heatmap[li]
				var cols int
				var text string
				if err := chromedp.Run(ctx,
					chromedp.Click(fmt.Sprintf(`table.heat[data-task="0"] button[data-line="%d"][data-k="%d"]`, li, k), chromedp.ByQuery),
					chromedp.WaitVisible(`#cases tbody tr`, chromedp.ByQuery),
					chromedp.Evaluate(`document.querySelectorAll("#cases thead th").length - 2`, &cols),
					chromedp.Text(`#app`, &text, chromedp.ByQuery),
				); err != nil {
					t.Fatalf("%s: opening a functionality of %s: %v", mode, src.View.Rows[line.Row].Label, err)
				}
				if cols < 1 || strings.Contains(text, "Cannot read") || strings.Contains(text, "TypeError") {
					t.Errorf("%s: the functionality shows %d run columns; page: %.300s", mode, cols, text)
				}
				// The docs' T-only pictures (docs/explore-t-only-*.png),
				// under serve, where the page once failed.
				if kind.name == "T-only" && mode == "serve" {
					screenshot(t, ctx, "main", "explore-t-only-functionality.png")
					if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery)); err != nil {
						t.Fatal(err)
					}
					screenshot(t, ctx, "#table3-grid", "explore-t-only-table.png")
					screenshot(t, ctx, "#groups-0", "explore-t-only-groups.png")
					screenshot(t, ctx, `table.heat[data-task="0"]`, "explore-t-only-heatmap.png")
				}
			}
		})
	}
}

// trainedCell is the first heatmap cell with a rate on a trained row's
// line (not the IID baseline's).
func trainedCell(src *Source) (line, k int) {
	for li, l := range src.View.Tasks[0].Heatmap {
		if src.View.Rows[l.Row].Configuration == experiments.ConfigIID {
			continue
		}
		for k, c := range l.Cells {
			if c.Rate == c.Rate && len(c.Runs) > 0 {
				return li, k
			}
		}
	}
	return -1, -1
}

// The page's per-group tables and heatmap lines are the report's cells:
// each group line's numbers are report.GroupLines', each heatmap line's
// rates report.Table.FigureValues' (per-identity lines included), on the
// pinned IdentOut store.
func TestViewShowsTheReportsGroups(t *testing.T) {
	dir := filepath.Join("..", "..", "cmd", "beluga", "testdata", "hatecheck-identout-store")
	src, err := FromDir(dir, Options{Report: fastReport})
	if err != nil {
		t.Fatal(err)
	}
	tab := src.Table
	lines := tab.GroupLines()
	var shown []GroupLineView
	for _, g := range src.View.Groups {
		shown = append(shown, g.Lines...)
	}
	if len(lines) == 0 || len(shown) != len(lines) {
		t.Fatalf("%d group lines shown, the report has %d", len(shown), len(lines))
	}
	for i, l := range lines {
		v := shown[i]
		if v.Group != l.Group || v.Cases != l.Cases || !same(l.Seen.Value, v.Seen) || !same(l.HeldOut.Value, v.Held) || !same(l.Gap.Value, v.Gap) ||
			!same(l.Gap.P, v.GapP) || !same(l.Trivial, v.Trivial) || !same(l.Baseline.Value, v.Baseline) {
			t.Errorf("group line %d: view %+v, report %+v", i, v, l)
		}
	}
	groupsSeen := 0
	for _, hl := range src.View.Tasks[0].Heatmap {
		suite, rates := tab.FigureValues(tab.Rows[hl.Row], src.View.Tasks[0].Name, hl.Score)
		if !same(suite, hl.Suite) {
			t.Errorf("line %s %s: suite %v, report %v", src.View.Rows[hl.Row].Label, hl.Score, float64(hl.Suite), suite)
		}
		for k, c := range hl.Cells {
			if want := rates[tab.FigureOrder(src.View.Tasks[0].Name)[k]]; !same(want, c.Rate) {
				t.Errorf("line %s %s cell %d: %v, report %v", src.View.Rows[hl.Row].Label, hl.Score, k, float64(c.Rate), want)
			}
		}
		if strings.Contains(hl.Score, "=") {
			groupsSeen++
		}
	}
	if groupsSeen != 7 {
		t.Errorf("%d per-identity heatmap lines, want HateCheck's 7", groupsSeen)
	}
}
