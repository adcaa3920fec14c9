package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/train"
)

var (
	update     = flag.Bool("update", false, "rewrite the golden files in testdata")
	heatmapDir = flag.String("heatmap-dir", "", "also write the test heatmaps into this directory, to look at them")
)

// sweep runs the synthetic sweep into a fresh store and returns it with its runs.
func sweep(t *testing.T) (*experiments.Store, []experiments.Run) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return sweepOf(t, string(b))
}

// sweepOf runs the synthetic sweep of a spec given as YAML.
func sweepOf(t *testing.T, yaml string) (*experiments.Store, []experiments.Run) {
	t.Helper()
	spec, err := experiments.ParseSpec([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := experiments.Expand(context.Background(), spec, &experiments.Inputs{Folds: experimentstest.FoldLister{}})
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
	var heads []string
	for _, c := range cols {
		heads = append(heads, c.Header)
	}
	// Task-major G columns, as the paper's Table 3.
	if got, want := strings.Join(heads, "|"), "IID SENT|IID PARA|G_seen SENT|G_func SENT|G_class SENT|G_type SENT|G_seen PARA|G_func PARA|G_class PARA|G_type PARA|Avg"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	base, vanilla := tab.Rows[0], tab.Rows[1]
	// The synthetic runner makes trained models pass far more seen cases
	// than the baseline: G_seen must be significantly higher.
	if !(vanilla.Cell(GKey("SENT", "seen")).Value > base.Cell(GKey("SENT", "seen")).Value) || vanilla.Cell(GKey("SENT", "seen")).P >= Significance {
		t.Errorf("G_seen %v vs baseline %v, p %v", vanilla.Cell(GKey("SENT", "seen")).Value, base.Cell(GKey("SENT", "seen")).Value, vanilla.Cell(GKey("SENT", "seen")).P)
	}
	if !math.IsNaN(base.Cell(AvgKey).P) {
		t.Errorf("baseline has a p-value %v", base.Cell(AvgKey).P)
	}
	// Every G is the harmonic mean of the i.i.d. and suite scores.
	for _, r := range tab.Rows {
		for _, task := range tab.Tasks {
			for _, s := range tab.Scores {
				if g, want := r.Cell(GKey(task, s)).Value, metrics.HarmonicMean(r.Cell(IIDKey(task)).Value, r.Cell(SuiteKey(task, s, "")).Value); math.Abs(g-want) > 1e-9 {
					t.Errorf("%s %s %s: G %v, want %v", r.Label(), task, s, g, want)
				}
			}
		}
	}
}

// samePValues fails unless a and b hold bit-identical p-values.
func samePValues(t *testing.T, what string, a, b *Table) {
	t.Helper()
	if len(a.Rows) != len(b.Rows) {
		t.Fatalf("%s: %d rows vs %d", what, len(a.Rows), len(b.Rows))
	}
	for i := range a.Rows {
		x, y := a.Rows[i], b.Rows[i]
		if x.Label() != y.Label() || !sameFloat(x.Cell(AvgKey).Value, y.Cell(AvgKey).Value) || !sameFloat(x.Cell(AvgKey).P, y.Cell(AvgKey).P) {
			t.Errorf("%s row %d: %s avg %v p %v vs %s avg %v p %v", what, i, x.Label(), x.Cell(AvgKey).Value, x.Cell(AvgKey).P, y.Label(), y.Cell(AvgKey).Value, y.Cell(AvgKey).P)
		}
		for _, task := range a.Tasks {
			for _, s := range a.Scores {
				if !sameFloat(x.Cell(GKey(task, s)).Value, y.Cell(GKey(task, s)).Value) || !sameFloat(x.Cell(GKey(task, s)).P, y.Cell(GKey(task, s)).P) {
					t.Errorf("%s row %d %s %s: G %v p %v vs G %v p %v", what, i, task, s, x.Cell(GKey(task, s)).Value, x.Cell(GKey(task, s)).P, y.Cell(GKey(task, s)).Value, y.Cell(GKey(task, s)).P)
				}
			}
		}
	}
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// TestTaskOrderIsBeLUGAs checks that tasks come in BeLUGA's order (sa, qqp,
// squad) whatever the order of the spec or of the store's directories, so
// that the randomisation test visits items in BeLUGA's order and its
// p-values reproduce bit for bit.
func TestTaskOrderIsBeLUGAs(t *testing.T) {
	store, runs := sweep(t)
	a, err := FromStore(store, runs, Options{Trials: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := FromDir(store.Dir, Options{Trials: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range []*Table{a, b} {
		if got := strings.Join(tab.Tasks, ","); got != "SENT,PARA" {
			t.Errorf("tasks %s, want SENT,PARA", got)
		}
	}
	samePValues(t, "directory vs spec", a, b)
	// The same sweep with PARA listed first.
	reversed, rruns := sweepOf(t, `name: report-test
tasks:
  - {name: PARA, data: qqp, suite: qqp}
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID-T, IID+T]
methods: [vanilla, lp]
`)
	c, err := FromStore(reversed, rruns, Options{Trials: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Tasks, ","); got != "SENT,PARA" {
		t.Errorf("tasks of a spec listing PARA first: %s", got)
	}
	samePValues(t, "spec order PARA, SENT vs SENT, PARA", a, c)
}

// TestDefaultSeedIs42 checks that the zero Options draw BeLUGA's
// random.Random(42), as the command line's default does.
func TestDefaultSeedIs42(t *testing.T) {
	store, runs := sweep(t)
	a, err := FromStore(store, runs, Options{Trials: 300})
	if err != nil {
		t.Fatal(err)
	}
	b, err := FromStore(store, runs, Options{Trials: 300, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	samePValues(t, "zero options vs seed 42", a, b)
}

// TestSignificanceWithoutFuncScores checks that a sweep without func runs
// (the quickstart's) still tests every G it has.
func TestSignificanceWithoutFuncScores(t *testing.T) {
	store, runs := sweepOf(t, `name: no-func
tasks:
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID-T]
methods: [vanilla]
scores: [seen, class, type]
`)
	tab, err := FromStore(store, runs, Options{Trials: 200})
	if err != nil {
		t.Fatal(err)
	}
	row := tab.Rows[1]
	for _, s := range []string{"seen", "class", "type"} {
		if p := row.Cell(GKey("SENT", s)).P; math.IsNaN(p) {
			t.Errorf("G_%s has no p-value", s)
		}
	}
	if p := row.Cell(GKey("SENT", "func")).P; !math.IsNaN(p) {
		t.Errorf("G_func, never run, has p-value %v", p)
	}
	// The columns are the scores asked for, and Avg is over them: the
	// row is complete, so it has an Avg, tested too.
	var heads []string
	for _, c := range tab.Columns() {
		heads = append(heads, c.Header)
	}
	if want := "IID SENT|G_seen SENT|G_class SENT|G_type SENT|Avg"; strings.Join(heads, "|") != want {
		t.Errorf("columns %s, want %s", strings.Join(heads, "|"), want)
	}
	var gs []float64
	for _, s := range []string{"seen", "class", "type"} {
		gs = append(gs, row.Cell(GKey("SENT", s)).Value)
	}
	if avg := row.Cell(AvgKey); math.Abs(avg.Value-metrics.Mean(gs)) > 1e-12 || math.IsNaN(avg.P) {
		t.Errorf("Avg %v p %v, want the mean %v of the three G shown, tested", avg.Value, avg.P, metrics.Mean(gs))
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
	for name, tab := range map[string]*Table{"single seed": testTable(t), "seeds and intervals": seedsTable(t)} {
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
			t.Fatalf("%s: pdflatex: %v\n%s", name, err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "t.pdf")); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHeatmapFormats(t *testing.T) {
	tab := testTable(t)
	dir := t.TempDir()
	for _, ext := range []string{"png", "svg", "pdf"} {
		path := filepath.Join(dir, "fig."+ext)
		if err := tab.WriteHeatmapFile(path, HeatmapOptions{}); err != nil {
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
	if err := tab.WriteHeatmapFile(filepath.Join(dir, "fig.gif"), HeatmapOptions{}); err == nil {
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

// TestRefusesResultsThatDoNotFitTheSpec tampers with one result at a time
// and expects the report to refuse, naming the run and the field, instead
// of printing wrong numbers.
func TestRefusesResultsThatDoNotFitTheSpec(t *testing.T) {
	find := func(runs []experiments.Run, score, task string) experiments.Run {
		for _, r := range runs {
			if r.Score == score && r.Task == task && r.Method == "vanilla" {
				return r
			}
		}
		t.Fatalf("no %s run", score)
		return experiments.Run{}
	}
	for _, tc := range []struct {
		name, score, field string
		edit               func(*experiments.Result)
	}{
		{"fewer functionalities", "seen", "functionalities", func(r *experiments.Result) { r.Functionalities = r.Functionalities[1:] }},
		{"extra verdicts", "seen", "functionalities[2].verdicts", func(r *experiments.Result) { r.Functionalities[2].Verdicts += "P" }},
		{"short i.i.d. vector", "seen", "iid_correct", func(r *experiments.Result) { r.IIDCorrect = r.IIDCorrect[:10] }},
		{"baseline's i.i.d. vector", "iid", "iid_correct", func(r *experiments.Result) { r.IIDCorrect = r.IIDCorrect[:10] }},
		// A func fold scoring another functionality (edited below: it
		// needs the fold's name).
		{"functionality outside the fold", "func", "functionalities[0]", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, runs := sweep(t)
			r := find(runs, tc.score, "PARA")
			if tc.score == "func" {
				// A fold scoring a functionality that exists but is not its own.
				for _, x := range runs {
					if x.Score == "func" && x.Task == "PARA" && x.Method == "vanilla" && x.Configuration == "IID-T" {
						r = x
						break
					}
				}
			}
			dir := store.RunDir(r.ID())
			res, err := experiments.ReadResult(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.score == "func" {
				base, _ := experiments.ReadResult(store.RunDir(find(runs, "iid", "PARA").ID()))
				for _, f := range base.Functionalities {
					if f.Name != r.Fold {
						res.Functionalities[0].Name = f.Name
						break
					}
				}
			} else {
				tc.edit(res)
			}
			if err := experiments.WriteResult(dir, res); err != nil {
				t.Fatal(err)
			}
			// The store refuses a result edited after its run was done.
			_, err = FromStore(store, runs, Options{Trials: 10})
			var ie *IncompleteError
			if !errors.As(err, &ie) || len(ie.Gaps) != 1 || ie.Gaps[0].State != experiments.Damaged || !strings.Contains(err.Error(), filepath.Join(dir, experiments.ResultFile)) {
				t.Fatalf("an edited result: error %v, want the run damaged, naming its file", err)
			}
			// A runner that wrote such a result: the report refuses it.
			experimentstest.Reseal(t, dir)
			_, err = FromStore(store, runs, Options{Trials: 10})
			var re *ResultError
			if !errors.As(err, &re) {
				t.Fatalf("error %v, want a ResultError", err)
			}
			// A baseline at fault is found by the runs that disagree with it;
			// the message names both.
			if re.Run != r.ID() && tc.score != "iid" || re.Field != tc.field {
				t.Errorf("error names run %s field %s, want run %s field %s: %v", re.Run, re.Field, r.ID(), tc.field, err)
			}
			if !strings.Contains(err.Error(), re.Run) {
				t.Errorf("message %q does not name the run", err)
			}
		})
	}
}

func seedsTable(t *testing.T) *Table { return seedsTableWith(t, BootstrapCases) }

// seedsTableWith is the two-seed test sweep with intervals of one bootstrap
// kind; the case-level goldens predate the hierarchical bootstrap and stay
// byte for byte.
func seedsTableWith(t *testing.T, bootstrap string) *Table {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sweep-seeds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	store, runs := sweepOf(t, string(b))
	tab, err := FromStore(store, runs, Options{Trials: 200, CI: 95, Resamples: 200, Bootstrap: bootstrap})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestHierarchicalIntervals checks the hierarchical table against the
// case-level one: the same values and per-functionality intervals (a pass
// rate is about one functionality, so both kinds resample its cases with
// the same draws), the same i.i.d. intervals, and suite-score intervals at
// least as wide wherever the functionalities' pass rates differ; the CSV is
// a golden.
func TestHierarchicalIntervals(t *testing.T) {
	cases, hier := seedsTable(t), seedsTableWith(t, BootstrapHierarchical)
	if hier.Bootstrap != BootstrapHierarchical || cases.Bootstrap != BootstrapCases {
		t.Fatalf("tables say %q and %q", hier.Bootstrap, cases.Bootstrap)
	}
	wider := 0
	for i, hr := range hier.Rows {
		cr := cases.Rows[i]
		for _, task := range hier.Tasks {
			for _, score := range hier.Scores {
				for k := range hier.Functionalities[task] {
					iv, civ := hr.Cell(PassKey(task, score, "", k)).CI, cr.Cell(PassKey(task, score, "", k)).CI
					if !sameFloat(iv.Lo, civ.Lo) || !sameFloat(iv.Hi, civ.Hi) {
						t.Errorf("%s %s %s functionality %d: pass-rate interval %v, case-level %v", hr.Label(), task, score, k, iv, civ)
					}
				}
				h, c := hr.Cell(SuiteKey(task, score, "")).CI, cr.Cell(SuiteKey(task, score, "")).CI
				if h.Hi-h.Lo > c.Hi-c.Lo {
					wider++
				}
			}
			if hr.Cell(IIDKey(task)).CI != cr.Cell(IIDKey(task)).CI && !(math.IsNaN(hr.Cell(IIDKey(task)).CI.Lo) && math.IsNaN(cr.Cell(IIDKey(task)).CI.Lo)) {
				// The i.i.d. examples are resampled after the
				// functionality draws, so their draws differ; only the
				// value they bracket is shared.
				if iv := hr.Cell(IIDKey(task)).CI; !(iv.Lo <= hr.Cell(IIDKey(task)).Value && hr.Cell(IIDKey(task)).Value <= iv.Hi) {
					t.Errorf("%s %s: i.i.d. interval %v misses %v", hr.Label(), task, iv, hr.Cell(IIDKey(task)).Value)
				}
			}
		}
	}
	if wider == 0 {
		t.Error("no suite-score interval is wider with functionalities resampled")
	}
	var b bytes.Buffer
	if err := hier.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "seeds-hierarchical.csv", b.Bytes())
}

func TestSeedsAndIntervals(t *testing.T) {
	tab := seedsTable(t)
	if got := strings.Join(tab.Replicates, ","); got != "seed=1,seed=2" {
		t.Fatalf("replicates %s", got)
	}
	for _, c := range tab.Columns() {
		for _, r := range tab.Rows {
			reps := c.Reps(r)
			if len(reps) != 2 {
				t.Errorf("%s %s: %d replicates", r.Label(), c.Header, len(reps))
				continue
			}
			mean, se := metrics.MeanSE([]float64{reps["seed=1"], reps["seed=2"]})
			if math.Abs(mean-c.Value(r)) > 1e-9 || !sameFloat(se, c.SE(r)) {
				t.Errorf("%s %s: %v ± %v, replicates give %v ± %v", r.Label(), c.Header, c.Value(r), c.SE(r), mean, se)
			}
			iv := c.CI(r)
			if !(iv.Lo <= iv.Hi && iv.Lo >= 0 && iv.Hi <= 100) {
				t.Errorf("%s %s: interval %v", r.Label(), c.Header, iv)
			}
		}
	}
	// Per-functionality q-values are Benjamini–Hochberg of the p-values.
	row := tab.Rows[1]
	for _, s := range tab.Scores {
		ps := make([]float64, len(tab.Functionalities["SENT"]))
		for k := range ps {
			ps[k] = row.Cell(PassKey("SENT", s, "", k)).P
		}
		want := metrics.BenjaminiHochberg(ps)
		for k := range ps {
			if q := row.Cell(PassKey("SENT", s, "", k)).Q; !sameFloat(q, want[k]) || q < ps[k] {
				t.Errorf("%s functionality %d: q %v, p %v", s, k, q, ps[k])
			}
		}
	}
}

func TestGoldenSeedsFormats(t *testing.T) {
	tab := seedsTable(t)
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"seeds.md", func(b *bytes.Buffer) error { return tab.WriteMarkdown(b) }},
		{"seeds.tex", func(b *bytes.Buffer) error { return tab.WriteLaTeX(b) }},
		{"seeds.csv", func(b *bytes.Buffer) error { return tab.WriteCSV(b) }},
		{"seeds-pvalues.csv", func(b *bytes.Buffer) error { return tab.WritePValuesCSV(b) }},
		{"seeds-comparisons.csv", func(b *bytes.Buffer) error { return tab.WriteComparisonsCSV(b) }},
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

// TestHeatmapAtPaperWidth checks Figure 1 as it is printed: exactly the
// width asked for (a paper's 6.5 in by default, one column's 3.25 in), no
// text under 7 pt, and every functionality's full name in the key (wrapped,
// never cut) — for a table of two rows and one task (the quickstart's), for
// the test sweep, and for three tasks of 53 functionalities, which no longer
// fit side by side and are stacked.
func TestHeatmapAtPaperWidth(t *testing.T) {
	store, runs := sweepOf(t, `name: quick
tasks:
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID-IID+T]
methods: [vanilla]
scores: [seen, class, type]
`)
	quick, err := FromStore(store, runs, Options{Trials: 1})
	if err != nil {
		t.Fatal(err)
	}
	wide := testTable(t)
	// Three tasks of 53 functionalities and two rows: the widest shape.
	three := &Table{Tasks: []string{"SENT", "PARA", "READ"}, Scores: wide.Scores, Functionalities: map[string][]Functionality{}, Rows: wide.Rows[:2]}
	for _, task := range three.Tasks {
		for k := range 53 {
			three.Functionalities[task] = append(three.Functionalities[task], Functionality{Name: fmt.Sprintf("functionality number %d of a long list", k), Class: fmt.Sprint(k / 6), Type: "MFT"})
		}
	}
	textRE := regexp.MustCompile(`font-size:([0-9.]+)px[^"]*">([^<]*)</text>`)
	widthRE := regexp.MustCompile(`<svg width="([0-9.]+)pt"`)
	for name, tab := range map[string]*Table{"quickstart": quick, "test sweep": wide, "three wide tasks": three} {
		for _, inches := range []float64{0, 3.25, 11} {
			var b bytes.Buffer
			if err := tab.WriteHeatmap(&b, "svg", HeatmapOptions{Width: inches}); err != nil {
				t.Fatalf("%s at %g in: %v", name, inches, err)
			}
			want := inches
			if want == 0 {
				want = PaperWidth
			}
			m := widthRE.FindSubmatch(b.Bytes())
			if m == nil || string(m[1]) != fmt.Sprint(want*72) {
				t.Errorf("%s at %g in: svg width %q, want %gpt", name, inches, m, want*72)
			}
			var texts []string
			for _, m := range textRE.FindAllSubmatch(b.Bytes(), -1) {
				size, err := strconv.ParseFloat(string(m[1]), 64)
				if err != nil || size < 7 {
					t.Errorf("%s at %g in: text %q at %s pt, want at least 7", name, inches, m[2], m[1])
				}
				texts = append(texts, html.UnescapeString(string(m[2])))
			}
			all := strings.Join(texts, " ")
			for _, task := range tab.Tasks {
				for k, f := range tab.Functionalities[task] {
					if entry := fmt.Sprintf("%d %s", k+1, ascii(f.Name)); !strings.Contains(all, entry) {
						t.Errorf("%s at %g in: the key lacks %q", name, inches, entry)
					}
				}
			}
			if strings.Contains(all, "...") {
				t.Errorf("%s at %g in: a label is cut: %s", name, inches, all)
			}
		}
		if *heatmapDir != "" {
			var b bytes.Buffer
			if err := tab.WriteHeatmap(&b, "png", HeatmapOptions{}); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(*heatmapDir, strings.ReplaceAll(name, " ", "-")+".png"), b.Bytes(), 0o644)
		}
	}
	if err := wide.WriteHeatmap(io.Discard, "png", HeatmapOptions{Width: 0.5}); err == nil {
		t.Error("a 0.5 in figure was drawn")
	}
}

func TestFigureOrderSwapsQQPColumns8And11(t *testing.T) {
	fs := make([]Functionality, 12)
	for i := range fs {
		fs[i] = Functionality{Name: fmt.Sprint("f", i+1)}
	}
	fs[7].Name = "How can I become more {synonym}?"
	fs[10].Name = "How can I become more X != How can I become less X"
	tab := &Table{Tasks: []string{"PARA", "SENT"}, Functionalities: map[string][]Functionality{"PARA": fs, "SENT": fs},
		beluga: map[string]string{"PARA": "qqp", "SENT": "sentiment"}}
	if got := fmt.Sprint(tab.figureOrder("PARA")); got != "[0 1 2 3 4 5 6 10 8 9 7 11]" {
		t.Errorf("QQP order %s", got)
	}
	if got := fmt.Sprint(tab.figureOrder("SENT")); got != "[0 1 2 3 4 5 6 7 8 9 10 11]" {
		t.Errorf("sentiment order %s", got)
	}
}

func TestReplicateNamesDropFixedGridValues(t *testing.T) {
	store, runs := sweepOf(t, `name: grid-seeds
tasks:
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID+T]
methods: [vanilla]
scores: [seen]
seeds: [1, 2]
grid: {lr: [0.001], epochs: [1, 2]}
`)
	tab, err := FromStore(store, runs, Options{Trials: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tab.Replicates, ","); got != "seed=1 epochs=1,seed=1 epochs=2,seed=2 epochs=1,seed=2 epochs=2" {
		t.Errorf("replicates %s", got)
	}
	if reps := tab.Columns()[0].Reps(tab.Rows[1]); len(reps) != 4 || math.IsNaN(reps["seed=2 epochs=1"]) {
		t.Errorf("replicate values %v", reps)
	}
}

// TestSpreadCSV checks the per-functionality spread over the two seeds of
// the test sweep: with two seeds min and max are the seeds' pass rates, so
// their mean is the table's pass rate and Q1/Q3 sit a quarter of the way in;
// a swing threshold keeps exactly the lines whose range exceeds it.
func TestSpreadCSV(t *testing.T) {
	tab := seedsTable(t)
	var all bytes.Buffer
	if err := tab.WriteSpreadCSV(&all, 0); err != nil {
		t.Fatal(err)
	}
	golden(t, "seeds-spread.csv", all.Bytes())
	recs, err := csv.NewReader(&all).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return v
	}
	const swing = 10.0
	want := 0
	for _, r := range recs[1:] {
		n, mean, lo, hi, q1, q3 := num(r[8]), num(r[9]), num(r[10]), num(r[11]), num(r[13]), num(r[15])
		if n != 2 || math.Abs(mean-(lo+hi)/2) > 1e-6 || math.Abs(q1-(lo+(hi-lo)/4)) > 1e-6 || math.Abs(q3-(hi-(hi-lo)/4)) > 1e-6 {
			t.Errorf("line %v: inconsistent spread", r)
		}
		if hi-lo > swing {
			want++
		}
	}
	var sw bytes.Buffer
	if err := tab.WriteSpreadCSV(&sw, swing); err != nil {
		t.Fatal(err)
	}
	got, err := csv.NewReader(&sw).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got)-1 != want || want == 0 || want == len(recs)-1 {
		t.Errorf("swing > %v: %d lines, want %d of %d", swing, len(got)-1, want, len(recs)-1)
	}
	if err := tab.WriteSpreadCSV(&sw, -1); err == nil {
		t.Error("no error for a negative swing")
	}
}

// A metadata score (the fake suite's meta:group) is a column of its own,
// its held-out values per-group columns, and its panel a figure row: each
// case's verdict comes from the one fold that held its group out, a
// functionality without groups has no pass rate, and the cell has a value
// only when every group's fold is done.
func TestMetaScore(t *testing.T) {
	store, runs := sweepOf(t, `
name: report-meta
tasks:
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID+T]
methods: [vanilla]
scores: [seen, func, "meta:group"]
`)
	tab, err := FromStore(store, runs, Options{Trials: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tab.Scores, experimentstest.MetaScore) || !slices.Equal(tab.Groups["SENT"][experimentstest.MetaScore], []string{"g0", "g1", "g2"}) {
		t.Fatalf("scores %v, groups %v", tab.Scores, tab.Groups)
	}
	row := tab.Rows[1]
	rates := tab.PassRates(row, "SENT", experimentstest.MetaScore, "")
	if n := len(experimentstest.Suite); len(rates) != n || !math.IsNaN(rates[n-1]) || slices.ContainsFunc(rates[:n-1], math.IsNaN) {
		t.Errorf("pass rates %v: want one per grouped functionality, none for the last", rates)
	}
	// The merged verdicts: every case of a grouped functionality scored
	// by exactly its group's fold, so the pass rate is the fold results'.
	var per [][]string
	for _, r := range runs {
		if r.Score == experimentstest.MetaScore && r.Configuration == row.Configuration {
			res, err := experiments.ReadResult(store.RunDir(r.ID()))
			if err != nil {
				t.Fatal(err)
			}
			var vs []string
			for _, f := range res.Functionalities {
				vs = append(vs, f.Verdicts)
			}
			per = append(per, vs)
		}
	}
	for k := range len(experimentstest.Suite) - 1 {
		pass, run := 0, 0
		for _, vs := range per {
			for _, b := range vs[k] {
				switch b {
				case experiments.Pass:
					pass, run = pass+1, run+1
				case experiments.Fail:
					run++
				}
			}
		}
		if want := 100 * float64(pass) / float64(run); math.Abs(rates[k]-want) > 1e-9 {
			t.Errorf("functionality %d: pass rate %v, folds give %v", k, rates[k], want)
		}
	}
	var headers []string
	for _, c := range tab.Columns() {
		headers = append(headers, c.Header)
	}
	want := []string{"IID SENT", "G_seen SENT", "G_func SENT", "G_group SENT", "T_group=g0 SENT", "T_group=g1 SENT", "T_group=g2 SENT", "Avg"}
	if !slices.Equal(headers, want) {
		t.Errorf("columns %v, want %v", headers, want)
	}
	if v := row.Cell(SuiteKey("SENT", experimentstest.MetaScore, "g1")).Value; math.IsNaN(v) || v <= 0 {
		t.Errorf("group g1's suite score %v", v)
	}
	wantRows := []string{"seen", "func", "meta:group", "meta:group=g0", "meta:group=g1", "meta:group=g2"}
	if got := tab.figureScores(); !slices.Equal(got, wantRows) {
		t.Errorf("figure rows %v, want %v", got, wantRows)
	}
	// A group's panel shows its fold's pass rates: those of the merged
	// score where the group's cases are the only ones scored.
	suite, g1 := tab.figureValues(row, "SENT", "meta:group=g1")
	if suite != row.Cell(SuiteKey("SENT", experimentstest.MetaScore, "g1")).Value || len(g1) != len(rates) || !math.IsNaN(g1[len(g1)-1]) || math.IsNaN(g1[0]) {
		t.Errorf("group g1's panel: %v %v", suite, g1)
	}
	var fig bytes.Buffer
	if err := tab.WriteHeatmap(&fig, "svg", HeatmapOptions{}); err != nil || !strings.Contains(fig.String(), "Held out: group=g2") {
		t.Errorf("heatmap: %v, has the group panel: %v", err, strings.Contains(fig.String(), "Held out: group=g2"))
	}
	// One group's fold missing: the metadata cell has no value yet.
	var fewer []experiments.Run
	for _, r := range runs {
		if !(r.Score == experimentstest.MetaScore && r.Fold == "g2") {
			fewer = append(fewer, r)
		}
	}
	part, err := build(store, fewer, Options{Trials: 100}, runs)
	if err != nil {
		t.Fatal(err)
	}
	if v := part.Rows[1].Cell(SuiteKey("SENT", experimentstest.MetaScore, "")).Value; !math.IsNaN(v) {
		t.Errorf("suite score %v with a fold missing", v)
	}
}

// A task is BeLUGA's by its name alone (experiments.BuiltinTasks), never by
// the names of its files: a declared task whose suite file says
// "sentiment" was once ranked, and its heatmap laid out, as SENT.
func TestBuiltinTaskByNameNotFileName(t *testing.T) {
	tests := []struct {
		run  experiments.Run
		task string
		rank int
	}{
		{experiments.Run{Task: "SENT", Train: train.RunSpec{Suite: "sentiment"}}, "sentiment", 0},
		{experiments.Run{Task: "sentiment"}, "sentiment", 0},
		{experiments.Run{Task: "PARA", Train: train.RunSpec{IIDTrain: "qqp"}}, "qqp", 1},
		{experiments.Run{Task: "squad"}, "squad", 2},
		{experiments.Run{Task: "hate", Train: train.RunSpec{IIDTrain: "data/sst2-like.tsv", Suite: "suites/sentiment_suite.jsonl"}}, "", 3},
		{experiments.Run{Task: "quora", Train: train.RunSpec{Suite: "qqp_suite.jsonl"}}, "", 3},
	}
	for _, tc := range tests {
		if got := belugaTask(tc.run); got != tc.task {
			t.Errorf("belugaTask(%s, suite %s) = %q, want %q", tc.run.Task, tc.run.Train.Suite, got, tc.task)
		}
		if got := taskRank(tc.run); got != tc.rank {
			t.Errorf("taskRank(%s, suite %s) = %d, want %d", tc.run.Task, tc.run.Train.Suite, got, tc.rank)
		}
	}
}

// A task's evaluation sets are columns of their own beside its i.i.d.
// score, with the trained rows tested against the baseline (McNemar) and
// their mean ± SE over seeds; a task without i.i.d. data gets them too.
func TestEvalSetColumns(t *testing.T) {
	for _, tc := range []struct {
		name, task, configs, header string
	}{
		{"with i.i.d. data", "{name: SENT, data: sst2, suite: sentiment, eval: [{name: yelp, path: yelp.tsv}, {name: amazon, path: amazon.tsv}]}", "[IID+T]", "| Config | Method | IID SENT | IID:amazon SENT | IID:yelp SENT | G_seen SENT |"},
		{"suite only", "{name: HATE, labels: [no, yes], suite: hatecheck, eval: [{name: davidson, path: davidson.tsv}]}", "[T]", "| IID:davidson HATE |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The sets' files, digested as the runs' inputs (their
			// results are synthetic).
			t.Chdir(t.TempDir())
			for _, f := range []string{"yelp.tsv", "amazon.tsv", "davidson.tsv"} {
				if err := os.WriteFile(f, []byte("sentence\tlabel\n"+f+"\t1\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			store, runs := sweepOf(t, "name: eval\ntasks: ["+tc.task+"]\nmodel: {name: synthetic}\nconfigurations: "+tc.configs+"\nmethods: [vanilla]\nscores: [seen]\nseeds: [1, 2]\n")
			tab, err := FromStore(store, runs, Options{Trials: 200, Seed: 1, CI: 95, Resamples: 200})
			if err != nil {
				t.Fatal(err)
			}
			var md bytes.Buffer
			if err := tab.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(md.String(), tc.header) {
				t.Fatalf("table lacks %q:\n%s", tc.header, md.String())
			}
			for _, row := range tab.Rows {
				for _, set := range tab.EvalSets[runs[0].Task] {
					c := row.Cell(EvalSetKey(runs[0].Task, set))
					if len(c.Reps) != 2 || math.IsNaN(c.Value) || c.Value > 75 {
						t.Errorf("%s %s: %+v, want two seeds around 67-70%%", row.Label(), set, c)
					}
					if !(c.CI.Lo < c.Value && c.Value < c.CI.Hi) {
						t.Errorf("%s %s: %v not inside its interval %+v", row.Label(), set, c.Value, c.CI)
					}
					if trained := row.Configuration != experiments.ConfigIID; trained && tab.Rows[0].Configuration == experiments.ConfigIID && math.IsNaN(c.P) {
						t.Errorf("%s %s: not tested against the baseline", row.Label(), set)
					}
				}
			}
		})
	}
}

// TestOneComputationIsOneReplicate: runs that differ only in a setting
// they do not read (a vanilla run listed once per LP-FT probing rate, as
// sweeps listed them before runs were identified by their effective spec)
// are one run: the table counts it once, as one replicate, with the same
// values as without the copies.
func TestOneComputationIsOneReplicate(t *testing.T) {
	store, runs := sweepOf(t, `name: one-computation
tasks:
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID+T]
methods: [vanilla]
scores: [seen]
seeds: [1, 2]
`)
	want, err := FromStore(store, runs, Options{Trials: 10})
	if err != nil {
		t.Fatal(err)
	}
	listed := slices.Clone(runs)
	for _, r := range runs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var copy experiments.Run
		if err := json.Unmarshal(b, &copy); err != nil {
			t.Fatal(err)
		}
		copy.Train.ProbeHyper.LR = 5e-4
		copy.Swept = append(copy.Swept, "probe_hyper.lr")
		listed = append(listed, copy)
	}
	got, err := FromStore(store, listed, Options{Trials: 10})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := strings.Join(got.Replicates, ","), strings.Join(want.Replicates, ","); g != w {
		t.Errorf("replicates %q, want %q", g, w)
	}
	for _, col := range want.Columns() {
		for i, row := range want.Rows {
			if a, b := col.Reps(got.Rows[i]), col.Reps(row); fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("%s %s: replicate values %v, want %v", row.Label(), col.Header, a, b)
			}
		}
	}
}
