package explore

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/report"
)

// The page is tested in a real browser: headless Chromium driven over the
// DevTools protocol. BELUGA_CHROMIUM names the binary; otherwise the usual
// names are looked up on PATH. BELUGA_SCREENSHOTS, when set, is a directory
// the tests write their screenshots into; BELUGA_EXPLORE_STORE, when set,
// is a store whose report the screenshots are of (else the fixture's).
// Relative paths in these variables are relative to the repository root,
// where the README's commands are typed (go test runs in this directory).

// rootPath resolves a path given relative to the repository root.
func rootPath(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join("..", "..", p)
}

// envPath is the path an environment variable names, from the root.
func envPath(name string) string { return rootPath(os.Getenv(name)) }

func chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("BELUGA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium found (install Debian's chromium, or set BELUGA_CHROMIUM): the page is not tested in a browser")
	return ""
}

// browser starts a headless Chromium with a fresh profile.
func browser(t testing.TB) context.Context {
	t.Helper()
	// A fresh profile, removed once the browser is gone (not t.TempDir:
	// Chromium's helpers may still write into it while the test ends).
	profile, err := os.MkdirTemp("", "beluga-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromium(t), err)
	}
	return ctx
}

// screenshot takes a PNG of sel, checks that it is an image of some size,
// and writes it into BELUGA_SCREENSHOTS when set (else a temporary
// directory, so that CI takes them too).
func screenshot(t *testing.T, ctx context.Context, sel, name string) {
	dir := envPath("BELUGA_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	var shot []byte
	if err := chromedp.Run(ctx, chromedp.Screenshot(sel, &shot, chromedp.ByQuery)); err != nil {
		t.Fatalf("screenshot of %s: %v", sel, err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(shot)); err != nil || cfg.Width < 50 || cfg.Height < 20 {
		t.Errorf("screenshot of %s: %d×%d PNG (%v), want one of the element", sel, cfg.Width, cfg.Height, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pageSource is the store the browser tests show.
func pageSource(t *testing.T) *Source {
	if dir := envPath("BELUGA_EXPLORE_STORE"); dir != "" {
		src, err := FromDir(dir, Options{Report: fastReport})
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	return fixtureSource(t)
}

// A failing heatmap cell of a trained row, for the test to click: the
// first line of a held-out score with a rate below 100 (a T-only store's
// first row is a trained one).
func failingCell(src *Source) (line, k int) {
	for li, l := range src.View.Tasks[0].Heatmap {
		if src.View.Rows[l.Row].Configuration == experiments.ConfigIID {
			continue
		}
		for k, c := range l.Cells {
			if c.Rate >= 0 && c.Rate < 100 && l.Score != "seen" {
				return li, k
			}
		}
	}
	return -1, -1
}

// exercise drives one page: the table, a heatmap click, the case table,
// the verdict filter, the search box, and a run's page.
func exercise(t *testing.T, ctx context.Context, url string, src *Source, shots string) {
	var rows, ready string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#table3-grid tbody tr").length + ""`, &rows),
		chromedp.Evaluate(`document.body.dataset.ready`, &ready),
	); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(len(src.View.Rows)); rows != want {
		t.Errorf("table has %s rows, want %s", rows, want)
	}
	screenshot(t, ctx, "#table3-grid", shots+"-table.png")
	screenshot(t, ctx, `table.heat[data-task="0"]`, shots+"-heatmap.png")
	line, k := failingCell(src)
	if line < 0 {
		t.Fatal("no failing held-out cell to click")
	}
	l := src.View.Tasks[0].Heatmap[line]
	fid := src.View.Tasks[0].Funcs[k]
	button := fmt.Sprintf(`table.heat[data-task="0"] button[data-line="%d"][data-k="%d"]`, line, k)
	var tipText, title, status string
	var verdicts []string
	if err := chromedp.Run(ctx,
		chromedp.ScrollIntoView(button, chromedp.ByQuery),
		chromedp.Sleep(50*time.Millisecond),
		chromedp.Evaluate(fmt.Sprintf(`(() => { const b = document.querySelector(%q); const r = b.getBoundingClientRect();
			b.dispatchEvent(new MouseEvent("mouseover", {bubbles: true, clientX: r.x + 2, clientY: r.y + 2})); return document.getElementById("tip").textContent; })()`, button), &tipText),
		chromedp.Click(button, chromedp.ByQuery),
		chromedp.WaitVisible(`#cases tbody tr`, chromedp.ByQuery),
		chromedp.Text(`#func-title`, &title, chromedp.ByQuery),
		chromedp.Text(`#case-status`, &status, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll("#cases tbody tr")].map(tr => tr.querySelector("td.focus .v").textContent)`, &verdicts),
	); err != nil {
		t.Fatal(err)
	}
	f := src.View.Funcs[fid]
	cell := l.Cells[k]
	for _, want := range []string{f.Name, f.Type, "pass rate ", fmt.Sprintf("%% over %d cases", cell.Cases), "run " + cell.Runs[0]} {
		if !strings.Contains(tipText, want) {
			t.Errorf("hover shows %q, want %q in it (the functionality, its type, pass rate and cases, and the run)", tipText, want)
		}
	}
	if title != f.Name {
		t.Errorf("clicked %q, opened %q", f.Name, title)
	}
	// The held-out run's verdicts: failing cases first, as many as it failed.
	cs, err := src.Cases(fid)
	if err != nil {
		t.Fatal(err)
	}
	held := cs.Runs[l.Cells[k].Runs[0]]
	fails := strings.Count(held.V, "F")
	if fails == 0 || len(verdicts) == 0 || verdicts[0] != "fail" {
		t.Errorf("case table's last column starts %v, want failing cases first (%d fail)", verdicts[:min(3, len(verdicts))], fails)
	}
	if want := fmt.Sprintf("%d cases", len(cs.Cases)); !strings.HasPrefix(status, want) {
		t.Errorf("status %q, want %q", status, want)
	}
	// Probabilities are named by the suite's classes where the suite is
	// found (a real store: BELUGA_EXPLORE_STORE), else only numbered (the
	// fixture's suite is missing).
	var probs string
	if err := chromedp.Run(ctx, chromedp.Text(`#cases .probs`, &probs, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	switch {
	case len(cs.Labels) == 0 && !strings.Contains(probs, " / "):
		t.Errorf("probabilities read %q, want numbers separated by /", probs)
	case len(cs.Labels) > 0 && (!strings.HasPrefix(probs, cs.Labels[0]+" ") || !strings.Contains(probs, " · "+cs.Labels[len(cs.Labels)-1]+" ")):
		t.Errorf("probabilities read %q, want each named by the suite's labels %v", probs, cs.Labels)
	}
	screenshot(t, ctx, "main", shots+"-functionality.png")
	// Filter: the held-out run's failures only.
	if err := chromedp.Run(ctx,
		chromedp.SetValue(`#f-verdict`, "F", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("f-verdict").dispatchEvent(new Event("change"))`, nil),
		chromedp.Poll(fmt.Sprintf(`document.getElementById("case-status").textContent.startsWith("%d cases")`, fails), nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate(`[...document.querySelectorAll("#cases tbody tr")].map(tr => tr.querySelector("td.focus .v").textContent)`, &verdicts),
	); err != nil {
		t.Fatalf("verdict filter: %v", err)
	}
	for _, v := range verdicts {
		if v != "fail" {
			t.Errorf("verdict filter F shows a %q case", v)
		}
	}
	// Split and metadata: the facets the case set has, as CaseSet.Select
	// counts them (the page's own filter in a file, the server's under
	// serve).
	facets := cs.Select(Query{})
	if len(facets.Splits) > 0 {
		split := facets.Splits[0]
		n := cs.Select(Query{Split: split}).Total
		if err := chromedp.Run(ctx,
			chromedp.SetValue(`#f-verdict`, "", chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("f-verdict").dispatchEvent(new Event("change"))`, nil),
			chromedp.SetValue(`#f-split`, split, chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("f-split").dispatchEvent(new Event("change"))`, nil),
			chromedp.Poll(fmt.Sprintf(`document.getElementById("case-status").textContent.startsWith("%d cases")`, n), nil, chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.SetValue(`#f-split`, "", chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("f-split").dispatchEvent(new Event("change"))`, nil),
		); err != nil {
			t.Fatalf("split filter %q (want %d cases): %v", split, n, err)
		}
	}
	for k, vs := range facets.Meta {
		n := cs.Select(Query{Meta: [2]string{k, vs[0]}}).Total
		if err := chromedp.Run(ctx,
			chromedp.Evaluate(fmt.Sprintf(`(() => { const s = document.getElementById("f-meta"); s.value = %q; s.dispatchEvent(new Event("change")); })()`, k+"\x00"+vs[0]), nil),
			chromedp.Poll(fmt.Sprintf(`document.getElementById("case-status").textContent.startsWith("%d cases")`, n), nil, chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Evaluate(`(() => { const s = document.getElementById("f-meta"); s.value = ""; s.dispatchEvent(new Event("change")); })()`, nil),
		); err != nil {
			t.Fatalf("metadata filter %s = %s (want %d cases): %v", k, vs[0], n, err)
		}
		break
	}
	// Search: a word of one case's first text.
	if len(cs.Cases[0].Inputs) > 0 {
		word := cs.Cases[0].Inputs[0].Text
		var n int
		for _, c := range cs.Cases {
			if len(c.Inputs) > 0 && strings.Contains(strings.ToLower(c.Inputs[0].Text+c.Inputs[len(c.Inputs)-1].Text), strings.ToLower(word)) {
				n++
			}
		}
		if err := chromedp.Run(ctx,
			chromedp.SetValue(`#f-verdict`, "", chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("f-verdict").dispatchEvent(new Event("change"))`, nil),
			chromedp.SendKeys(`#f-search`, word, chromedp.ByQuery),
			chromedp.Poll(fmt.Sprintf(`document.getElementById("case-status").textContent.startsWith("%d cases")`, n), nil, chromedp.WithPollingTimeout(10*time.Second)),
		); err != nil {
			t.Fatalf("search %q (want %d cases): %v", word, n, err)
		}
	}
	// A run's page: its curve and input coverage.
	run := l.Cells[k].Runs[0]
	var svg, coverage int
	var page string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(url+"#run/"+run),
		chromedp.WaitVisible(`#run-title`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("svg.curve polyline").length`, &svg),
		chromedp.Evaluate(`document.querySelectorAll("#run-coverage li").length`, &coverage),
		chromedp.Text(`#app`, &page, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if svg == 0 {
		t.Errorf("run %s: no curve drawn", run)
	}
	for _, r := range src.View.Runs {
		if r.ID != run {
			continue
		}
		if coverage != len(r.Coverage) {
			t.Errorf("run %s: %d input coverage lines shown, want %d", run, coverage, len(r.Coverage))
		}
		// The hyper-parameters it used and its timing, when stored.
		if r.Used != nil && !strings.Contains(page, "Hyper-parameters used") {
			t.Errorf("run %s: its page shows no hyper-parameters used", run)
		}
		if s := float64(r.Seconds); s == s && !strings.Contains(page, fmt.Sprintf("%.1f s", s)) {
			t.Errorf("run %s: its page shows no time (%.1f s)", run, s)
		}
	}
}

// writePage writes src's report file into a temporary directory and
// returns its path.
func writePage(t testing.TB, src *Source) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// The report file opens from disk, with no network.
func TestReportFileInBrowser(t *testing.T) {
	ctx := browser(t)
	src := pageSource(t)
	path := writePage(t, src)
	exercise(t, ctx, "file://"+path, src, "explore")
}

// beluga serve's pages: the same page with its data paged from api/.
func TestServeInBrowser(t *testing.T) {
	ctx := browser(t)
	src := pageSource(t)
	srv := httptest.NewServer(src.Handler())
	defer srv.Close()
	exercise(t, ctx, srv.URL+"/", src, "explore-serve")
	// Paging: a functionality's cases come 50 at a time.
	resp, err := srv.Client().Get(srv.URL + "/api/cases?func=0&offset=1&limit=2&runs=" + src.View.Runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("api/cases: %s", resp.Status)
	}
	for _, bad := range []string{"func=x", "func=0&offset=-1", "func=999"} {
		resp, err := srv.Client().Get(srv.URL + "/api/cases?" + bad)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("api/cases?%s: %s, want an error", bad, resp.Status)
		}
	}
}

// With several seeds and --ci, every cell of the page's table shows the
// mean ± standard error and the bootstrap interval, its hover each seed's
// value and the paired t-test's p-value: package report's numbers.
func TestSeedsAndIntervalsInBrowser(t *testing.T) {
	store, runs := sweepIn(t, sweepYAML(t, "seeds: [1, 2]\n"), t.TempDir(), caseRunner{})
	opt := report.Options{Trials: 100, CI: 95, Resamples: 100}
	src, err := Build(store, runs, Options{Report: opt})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := report.FromStore(store, runs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.View.Replicates) != 2 || src.View.CI != 95 {
		t.Fatalf("replicates %q, CI %v: want two seeds at 95%%", src.View.Replicates, src.View.CI)
	}
	cols := tab.Columns()
	r, c := tab.Rows[1], cols[0] // a trained row's i.i.d. score
	cell := src.View.Table.Cells[1][0]
	iv := c.CI(r)
	if !same(c.SE(r), cell.SE) || !same(iv.Lo, cell.Lo) || !same(iv.Hi, cell.Hi) || !same(c.PSeeds(r), cell.PSeed) || len(cell.Reps) != 2 {
		t.Errorf("row %s column %s: view %+v, table se %v [%v, %v] p over seeds %v, seeds %v", r.Label(), c.Header, cell, c.SE(r), iv.Lo, iv.Hi, c.PSeeds(r), c.Reps(r))
	}
	for rep, v := range c.Reps(r) {
		if !same(v, cell.Reps[rep]) {
			t.Errorf("row %s column %s replicate %s: view %v, table %v", r.Label(), c.Header, rep, cell.Reps[rep], v)
		}
	}
	path := writePage(t, src)
	ctx := browser(t)
	var text, title string
	if err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.Text(`#table3-grid tbody tr:nth-child(2) td.num`, &text, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#table3-grid tbody tr:nth-child(2) td.num").title`, &title),
	); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%.2f ± %.2f [%.2f, %.2f]", float64(cell.Value), float64(cell.SE), float64(cell.Lo), float64(cell.Hi))
	if !strings.HasPrefix(text, want) {
		t.Errorf("cell shows %q, want %q", text, want)
	}
	if !strings.Contains(title, fmt.Sprintf("paired t over seeds p = %.4f", float64(cell.PSeed))) {
		t.Errorf("cell's hover %q has no paired t-test", title)
	}
	for rep, v := range cell.Reps {
		if !strings.Contains(title, fmt.Sprintf("%s: %.2f", rep, float64(v))) {
			t.Errorf("cell's hover %q has no value for %s (%.2f)", title, rep, float64(v))
		}
	}
}

// Under serve a functionality's cases are fetched, and the fetches may come
// back out of order: the page draws the latest request's answer, not the
// last to arrive.
func TestServeLatestRequestWins(t *testing.T) {
	ctx := browser(t)
	src := fixtureSource(t)
	h := src.Handler()
	slow := make(chan struct{}) // closed once the slow request is answered
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/cases" && r.URL.Query().Get("verdict") == "P" {
			time.Sleep(700 * time.Millisecond) // the first of two requests answers last
			defer once.Do(func() { close(slow) })
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	line, k := failingCell(src)
	l := src.View.Tasks[0].Heatmap[line]
	fid := src.View.Tasks[0].Funcs[k]
	cs, err := src.Cases(fid)
	if err != nil {
		t.Fatal(err)
	}
	fails := strings.Count(cs.Runs[l.Cells[k].Runs[0]].V, "F")
	var status string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.Click(fmt.Sprintf(`table.heat[data-task="0"] button[data-line="%d"][data-k="%d"]`, line, k), chromedp.ByQuery),
		chromedp.WaitVisible(`#cases tbody tr`, chromedp.ByQuery),
		chromedp.Evaluate(`(() => { const s = document.getElementById("f-verdict");
			s.value = "P"; s.dispatchEvent(new Event("change"));
			s.value = "F"; s.dispatchEvent(new Event("change")); })()`, nil),
	); err != nil {
		t.Fatal(err)
	}
	select {
	case <-slow:
	case <-time.After(30 * time.Second):
		t.Fatal("the page never asked for the passing cases")
	}
	// The slow answer has left the server; give the page time to read it.
	if err := chromedp.Run(ctx,
		chromedp.Poll(`!document.getElementById("case-status").textContent.startsWith("Loading")`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Sleep(500*time.Millisecond),
		chromedp.Text(`#case-status`, &status, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d cases", fails); !strings.HasPrefix(status, want) {
		t.Errorf("after asking for passes, then failures: status %q, want %q (the failures)", status, want)
	}
}

// A partial report's page says so above its table, listing the runs it
// lacks per row, and marks the cells they leave incomplete (§) — the
// baseline's every cell, here; without --partial no page is made.
func TestPartialNoticeInBrowser(t *testing.T) {
	store, runs := sweepIn(t, sweepYAML(t, ""), t.TempDir(), caseRunner{})
	var base experiments.Run
	for _, r := range runs {
		if r.Score == experiments.ScoreIID && r.Task == "SENT" {
			base = r
		}
	}
	if err := os.RemoveAll(store.RunDir(base.ID())); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(store, runs, Options{Report: report.Options{Trials: 10}}); err == nil {
		t.Fatal("a store without its baseline made a page")
	}
	src, err := Build(store, runs, Options{Report: report.Options{Trials: 10, Partial: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.View.Partial) == 0 || !strings.Contains(strings.Join(src.View.Partial, "\n"), base.ID()+" SENT iid: missing") {
		t.Fatalf("view's partial notice %q does not name the baseline %s", src.View.Partial, base.ID())
	}
	path := writePage(t, src)
	ctx := browser(t)
	var notice, cell string
	if err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.Text(`#partial`, &notice, chromedp.ByQuery),
		chromedp.Text(`#table3-grid tbody tr:nth-child(1) td.num`, &cell, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notice, "Partial report") || !strings.Contains(notice, base.ID()+" SENT iid: missing") {
		t.Errorf("notice %q", notice)
	}
	if !strings.Contains(cell, report.MarkIncomplete) {
		t.Errorf("the baseline row's first cell shows %q, without the mark %s", cell, report.MarkIncomplete)
	}
}
