package report

import (
	"bytes"
	"context"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/metrics"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// sweep runs the synthetic sweep into a fresh store and returns it with its runs.
func sweep(t *testing.T) (*experiments.Store, []experiments.RunSpec) {
	t.Helper()
	spec, err := experiments.LoadSpec(filepath.Join("testdata", "sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := experiments.Expand(spec, experimentstest.FoldLister{})
	if err != nil {
		t.Fatal(err)
	}
	store := &experiments.Store{Dir: t.TempDir()}
	sum, err := experiments.Execute(context.Background(), store, runs, experimentstest.Runner{}, experiments.Options{Jobs: 2, Logger: quiet()})
	if err != nil || sum.Err() != nil {
		t.Fatal(err, sum.Err())
	}
	return store, runs
}

func testTable(t *testing.T) *Table {
	t.Helper()
	store, runs := sweep(t)
	tab, err := FromStore(store, runs, Options{Trials: 500, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

func TestTableLayout(t *testing.T) {
	tab := testTable(t)
	if got := strings.Join(tab.Tasks, ","); got != "SENT,PARA" {
		t.Errorf("tasks %s", got)
	}
	var labels []string
	for _, r := range tab.Rows {
		labels = append(labels, r.Label())
	}
	if got, want := strings.Join(labels, "|"), "IID: Vanilla|IID-T: Vanilla|IID-T: LP|IID+T: Vanilla|IID+T: LP"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
	cols := tab.Columns()
	if len(cols) != 2+4*2+1 || cols[0].Header != "IID SENT" || cols[2].Header != "G_seen SENT" || cols[len(cols)-1].Header != "Avg" {
		t.Errorf("columns %v", len(cols))
	}
	base, vanilla := tab.Rows[0], tab.Rows[1]
	// The synthetic runner makes trained models pass far more seen cases
	// than the baseline: G_seen must be significantly higher.
	if !(vanilla.G["SENT"]["seen"] > base.G["SENT"]["seen"]) || vanilla.PG["SENT"]["seen"] >= Significance {
		t.Errorf("G_seen %v vs baseline %v, p %v", vanilla.G["SENT"]["seen"], base.G["SENT"]["seen"], vanilla.PG["SENT"]["seen"])
	}
	if !math.IsNaN(base.PAvg) {
		t.Errorf("baseline has a p-value %v", base.PAvg)
	}
	// Every G is the harmonic mean of the i.i.d. and suite scores.
	for _, r := range tab.Rows {
		for _, task := range tab.Tasks {
			for _, s := range tab.Scores {
				if g, want := r.G[task][s], metrics.HarmonicMean(r.IID[task], r.Suite[task][s]); math.Abs(g-want) > 1e-9 {
					t.Errorf("%s %s %s: G %v, want %v", r.Label(), task, s, g, want)
				}
			}
		}
	}
}

func TestFromDirMatchesFromStore(t *testing.T) {
	store, runs := sweep(t)
	a, err := FromStore(store, runs, Options{Trials: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := FromDir(store.Dir, Options{Trials: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A directory carries no task order: tasks come alphabetically.
	if got := strings.Join(b.Tasks, ","); got != "PARA,SENT" {
		t.Errorf("tasks from a directory: %s", got)
	}
	if len(a.Rows) != len(b.Rows) {
		t.Fatalf("%d rows from the store, %d from the directory", len(a.Rows), len(b.Rows))
	}
	for i := range a.Rows {
		x, y := a.Rows[i], b.Rows[i]
		// p-values differ: randomisation visits items in task order.
		if x.Label() != y.Label() || math.Abs(x.Avg-y.Avg) > 1e-9 {
			t.Errorf("row %d: %s %v vs %s %v", i, x.Label(), x.Avg, y.Label(), y.Avg)
		}
		for _, task := range a.Tasks {
			for _, s := range a.Scores {
				if math.Abs(x.G[task][s]-y.G[task][s]) > 1e-9 {
					t.Errorf("row %d %s %s: %v vs %v", i, task, s, x.G[task][s], y.G[task][s])
				}
			}
		}
	}
}

func TestGoldenFormats(t *testing.T) {
	tab := testTable(t)
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"table.md", func(b *bytes.Buffer) error { return tab.WriteMarkdown(b) }},
		{"table.tex", func(b *bytes.Buffer) error { return tab.WriteLaTeX(b) }},
		{"table.csv", func(b *bytes.Buffer) error { return tab.WriteCSV(b) }},
		{"pvalues.csv", func(b *bytes.Buffer) error { return tab.WritePValuesCSV(b) }},
		{"passrates.csv", func(b *bytes.Buffer) error { return tab.WritePassRatesCSV(b) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

func TestLaTeXCompiles(t *testing.T) {
	pdflatex, err := exec.LookPath("pdflatex")
	if err != nil {
		t.Skip("pdflatex not installed (Debian: texlive-latex-recommended)")
	}
	tab := testTable(t)
	var b bytes.Buffer
	b.WriteString("\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[dvipsnames]{xcolor}\n\\usepackage[landscape]{geometry}\n\\begin{document}\n")
	if err := tab.WriteLaTeX(&b); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\\end{document}\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.tex"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pdflatex, "-interaction=nonstopmode", "-halt-on-error", "t.tex")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pdflatex: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "t.pdf")); err != nil {
		t.Fatal(err)
	}
}

func TestHeatmapFormats(t *testing.T) {
	tab := testTable(t)
	dir := t.TempDir()
	for _, ext := range []string{"png", "svg", "pdf"} {
		path := filepath.Join(dir, "fig."+ext)
		if err := tab.WriteHeatmapFile(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		magic := map[string]string{"png": "\x89PNG", "svg": "<?xml", "pdf": "%PDF"}[ext]
		if !bytes.HasPrefix(b, []byte(magic)) {
			t.Errorf("%s does not start with %q", ext, magic)
		}
	}
	if err := tab.WriteHeatmapFile(filepath.Join(dir, "fig.gif")); err == nil {
		t.Error("no error for an unknown format")
	}
}

func TestRocketIsOrderedDarkToLight(t *testing.T) {
	lum := func(v float64) float64 {
		c := Rocket(v)
		return 0.2126*float64(c.R) + 0.7152*float64(c.G) + 0.0722*float64(c.B)
	}
	prev := -1.0
	for v := 0.0; v <= 1; v += 0.01 {
		if l := lum(v); l < prev-1e-9 {
			t.Fatalf("luminance falls at %v: %v < %v", v, l, prev)
		} else {
			prev = l
		}
	}
}
