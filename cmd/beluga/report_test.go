package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/report/tfevents"
)

// syntheticSpec is a SENT spec of the synthetic model (the IID baseline,
// IID+T vanilla seen and held out by test type) storing into out.
func syntheticSpec(name, out string) string {
	return `name: ` + name + `
out: ` + out + `
tasks:
  - {name: SENT, data: sst2, suite: sentiment, folds: {type: [MFT, DIR, INV]}}
model: {name: synthetic}
configurations: [IID+T]
methods: [vanilla]
scores: [seen, type]
`
}

// syntheticSweep writes into dir an experiment spec of SENT (IID+T vanilla,
// seen and type scores, the given seeds) and runs it with the synthetic
// runner into dir/store; it returns the spec's path, its store and runs.
// extra is YAML added to the spec (seeds: [1, 2]).
func syntheticSweep(t *testing.T, dir, name, extra string) (string, *experiments.Store, []experiments.Run) {
	t.Helper()
	spec := writeFile(t, filepath.Join(dir, "spec.yaml"), syntheticSpec(name, "store")+extra)
	s, runs, err := loadRuns(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := experiments.Execute(context.Background(), storeOf(s), runs, experimentstest.Runner{}, experiments.Options{Logger: discardLogger()}); err != nil {
		t.Fatal(err)
	}
	return spec, storeOf(s), runs
}

func TestReportSeedsIntervalsComparisons(t *testing.T) {
	dir := t.TempDir()
	spec, _, _ := syntheticSweep(t, dir, "cli-seeds", "seeds: [1, 2]\n")
	cmp := filepath.Join(dir, "cmp.csv")
	out, err := execute(t, "report", spec, "--trials", "50", "--ci", "95", "--resamples", "100", "--comparisons", cmp)
	if err != nil {
		t.Fatal(err)
	}
	// mean ± SE over the two seeds, then the interval.
	if !strings.Contains(out, " ± ") || !strings.Contains(out, "[") {
		t.Errorf("report with seeds and --ci:\n%s", out)
	}
	recs := readCSV(t, cmp)
	if h := strings.Join(recs[0], ","); !strings.HasPrefix(h, "task,config,method,score,number,functionality") || !strings.HasSuffix(h, "p,q,ci95_lo,ci95_hi") {
		t.Errorf("comparisons header %s", h)
	}
	if _, err := execute(t, "report", spec, "--ci", "100"); err == nil {
		t.Error("no error for a 100% interval")
	}
	if _, err := execute(t, "report", spec, "--ci", "95", "--bootstrap", "templates"); err == nil {
		t.Error("no error for an unknown --bootstrap")
	}
	spread := filepath.Join(dir, "spread.csv")
	if _, err := execute(t, "report", spec, "--trials", "10", "--bootstrap", "cases", "--spread", spread, "--swing", "5"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(spread); err != nil || !strings.HasPrefix(string(b), "task,config,method,score,number,functionality,class,type,seeds,mean,min,max,range,q1,median,q3,iqr\n") {
		t.Errorf("spread CSV %q, %v", b, err)
	}
	if _, err := execute(t, "report", spec, "--swing", "5"); err == nil {
		t.Error("no error for --swing without --spread")
	}
}

func TestPlotCurves(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "train"), 0o755)
	os.WriteFile(filepath.Join(dir, "train", "curve.jsonl"), []byte(`{"step":0,"kind":"mft","loss":0.7,"lr":2e-05}
{"step":1,"kind":"inv","loss":0.5,"lr":1e-05}
`), 0o644)
	png, events := filepath.Join(dir, "curve.png"), filepath.Join(dir, "tb")
	if _, err := execute(t, "plot", "curves", dir, "-o", png, "--tfevents", events); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(png); err != nil {
		t.Error(err)
	}
	files, _ := filepath.Glob(filepath.Join(events, "events.out.tfevents.*"))
	if len(files) != 1 {
		t.Fatalf("event files %v", files)
	}
	evs, err := tfevents.ReadFile(files[0])
	if err != nil || len(evs) != 5 {
		t.Errorf("%d events, %v", len(evs), err)
	}
	if _, err := execute(t, "plot", "curves", t.TempDir(), "-o", png); err == nil {
		t.Error("no error for a directory without a curve")
	}
}

// --format html writes the page whole or not at all: a broken run leaves
// an existing file as it was, with an error naming the run's file.
func TestReportHTML(t *testing.T) {
	dir := t.TempDir()
	spec, store, runs := syntheticSweep(t, dir, "cli-html", "")
	page := filepath.Join(dir, "report.html")
	if _, err := execute(t, "report", spec, "--trials", "50", "--format", "html", "-o", page); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="beluga-view"`, `id="beluga-cases-0"`, "DecompressionStream"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report.html has no %s", want)
		}
	}
	if strings.Contains(string(b), "http://") || strings.Contains(string(b), "https://") {
		t.Error("report.html refers to the network")
	}
	res := filepath.Join(store.RunDir(runs[len(runs)-1].ID()), experiments.ResultFile)
	os.WriteFile(res, []byte(`{"functionalities": [`), 0o644)
	_, err = execute(t, "report", spec, "--trials", "50", "--format", "html", "-o", page)
	if err == nil || !strings.Contains(err.Error(), res) {
		t.Errorf("broken %s: error %v, want one naming it", res, err)
	}
	if after, _ := os.ReadFile(page); string(after) != string(b) {
		t.Error("a failed report changed the existing report.html")
	}
}

// A spec whose store is not where its out: says (beluga quickstart writes
// ./quickstart-out; the spec's out: is relative to specs/) is refused by
// report, serve and plot heatmap with an error that says how to name the
// store, not only that it has no finished runs.
func TestReportSpecWithoutStore(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "specs", "spec.yaml")
	os.MkdirAll(filepath.Dir(spec), 0o755)
	writeFile(t, spec, syntheticSpec("cli-nostore", "elsewhere-out"))
	for _, args := range [][]string{
		{"report", spec, "--trials", "10"},
		{"report", spec, "--format", "html", "-o", filepath.Join(dir, "report.html")},
		{"serve", spec, "--port", "0"},
		{"plot", "heatmap", spec, "-o", filepath.Join(dir, "fig.png")},
	} {
		_, err := execute(t, args...)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "specs", "elsewhere-out")) || !strings.Contains(err.Error(), "--store DIR") {
			t.Errorf("%s: error %v, want one naming the missing store and --store", strings.Join(args[:len(args)-1], " "), err)
		}
	}
	// --store names one that is there.
	s, runs, err := loadRuns(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Out = filepath.Join(dir, "store")
	if _, err := experiments.Execute(context.Background(), storeOf(s), runs, experimentstest.Runner{}, experiments.Options{Logger: discardLogger()}); err != nil {
		t.Fatal(err)
	}
	if _, err := execute(t, "report", spec, "--trials", "10", "--store", s.Out); err != nil {
		t.Errorf("report --store: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe to write from the command's goroutine
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveURL starts beluga serve with args (--port 0 added) until the test
// ends and returns the address it serves on.
func serveURL(t *testing.T, args ...string) string {
	t.Helper()
	root := NewCmdBeluga()
	var out syncBuffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append(append([]string{"serve"}, args...), "--port", "0"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	addr := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/`)
	var url string
	for start := time.Now(); url == "" && time.Since(start) < 20*time.Second; time.Sleep(20 * time.Millisecond) {
		url = addr.FindString(out.String())
	}
	if url == "" {
		t.Fatalf("serve said %q, no address on 127.0.0.1", out.String())
	}
	return url
}

// beluga serve shows the page beluga report --format html writes, --ci's
// bootstrap intervals included.
func TestServeIntervals(t *testing.T) {
	dir := t.TempDir()
	spec, _, _ := syntheticSweep(t, dir, "cli-serve", "")
	url := serveURL(t, spec, "--trials", "20", "--ci", "95", "--resamples", "50")
	resp, err := http.Get(url + "api/view")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var view struct {
		CI    float64 `json:"ci"`
		Table struct {
			Cells [][]struct {
				Lo *float64 `json:"lo"`
			} `json:"cells"`
		} `json:"table"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&view); err != nil {
		t.Fatal(err)
	}
	if view.CI != 95 || len(view.Table.Cells) == 0 || view.Table.Cells[0][0].Lo == nil {
		t.Errorf("served view: ci %v, cells %v: want 95%% intervals", view.CI, view.Table.Cells)
	}
}

// report's per-group tables, learning-curve table, baseline and G accuracy
// flags: the files are written in the format their extension names, a
// spec's baseline: is read unless --baseline says otherwise, and bad values
// are refused before anything is written.
func TestReportGroupsCurveBaselineFlags(t *testing.T) {
	dir := t.TempDir()
	spec, _, _ := syntheticSweep(t, dir, "cli-groups", "seeds: [1, 2]\ngrid: {train_size: [10, 20]}\nbaseline: IID train_size=10\n")
	groupsMD, groupsCSV, curveMD, curveCSV := filepath.Join(dir, "g.md"), filepath.Join(dir, "g.csv"), filepath.Join(dir, "lc.md"), filepath.Join(dir, "lc.csv")
	for _, args := range [][]string{
		{"--groups", groupsMD, "--learning-curve", curveMD},
		{"--groups", groupsCSV, "--learning-curve", curveCSV, "--g-accuracy", "fold"},
	} {
		if out, err := execute(t, append([]string{"report", spec, "--trials", "20"}, args...)...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	for path, want := range map[string]string{
		groupsMD:  "| IID+T: Vanilla (train_size=10) | (all type folds) |",
		groupsCSV: "task,score,config,method,group,case_set,cases,baseline,constant,constant_by,seen,held_out,gap,gap_p,seen_se",
		curveMD:   "the baseline row, IID: Vanilla train_size=10",
		curveCSV:  "task,config,method,axes,measure,train_size,mean,se,n,min,max,p,marks",
	} {
		if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v, want %q in:\n%s", path, err, want, b)
		}
	}
	out, err := execute(t, "report", spec, "--trials", "20", "--baseline", "none", "--learning-curve", "-")
	if err != nil || !strings.Contains(out, "No baseline row: nothing is tested.") || strings.Contains(out, "↑") {
		t.Errorf("--baseline none: %v\n%s", err, out)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--baseline", "IID train_size=30"}},
		{[]string{"--g-accuracy", "mean"}},
		{[]string{"--groups", filepath.Join(dir, "g.txt")}},
	} {
		if out, err := execute(t, append([]string{"report", spec, "--trials", "20"}, tc.args...)...); err == nil || strings.Contains(out, "| Config |") {
			t.Errorf("%v: error %v after writing\n%s", tc.args, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "g.txt")); err == nil {
		t.Error("a refused --groups file was written")
	}
}

// A side table the store cannot give fails beluga report with nothing of
// the report written: not Table 3, not its p-values, not another side
// table asked for beside it.
func TestReportWritesNothingWhenASideTableFails(t *testing.T) {
	for _, side := range [][]string{
		{"--templates", "templates.md"},   // the quickstart swept no prompt.template
		{"--learning-curve", "curve.csv"}, // nor train_size
	} {
		dir := t.TempDir()
		args := []string{"report", "testdata/quickstart-store", "-o", filepath.Join(dir, "table.md"), "--groups", filepath.Join(dir, "groups.md")}
		args = append(args, side[0], filepath.Join(dir, side[1]))
		if out, err := execute(t, args...); err == nil {
			t.Errorf("beluga report %s on a store without it: no error\n%s", side[0], out)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("beluga report %s failed but wrote %v", side[0], names)
		}
	}
}
