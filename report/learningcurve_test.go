package report

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
)

const learningCurveSpec = `name: lc
tasks:
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID+T]
methods: [vanilla]
scores: [seen, class]
seeds: [1, 2, 3]
grid: {train_size: [100, 10], lr: [0.001]}
`

// TestLearningCurves: one line per configuration × method, a point per
// size in increasing order, each the table's cell there — the mean of its
// seeds' scores with their minimum and maximum, as the result files give
// them; held-out runs are left out. The default baseline is the IID row at
// the largest size: it has no p-value, the others do.
func TestLearningCurves(t *testing.T) {
	store, runs := sweepOf(t, learningCurveSpec)
	tab, err := FromStore(store, runs, Options{Trials: 200})
	if err != nil {
		t.Fatal(err)
	}
	if b := tab.Baseline(); b == nil || b.Configuration != experiments.ConfigIID || b.Axes != "train_size=100" {
		t.Fatalf("baseline %v, want IID at train_size=100", b)
	}
	curves, err := tab.LearningCurves()
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range curves {
		labels = append(labels, c.Label())
	}
	if got := strings.Join(labels, ", "); got != "SENT IID: Vanilla, SENT IID+T: Vanilla" {
		t.Fatalf("lines %s", got)
	}
	// The expected points, computed from the result files directly.
	want := map[string]map[float64][]float64{} // line|measure → size → values
	for _, r := range runs {
		if r.Score == experiments.ScoreClass {
			continue
		}
		res, err := experiments.ReadResult(store.RunDir(r.ID()))
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, f := range res.Functionalities {
			sum += f.PassRate()
		}
		size := r.TrainSize()
		for m, v := range map[string]float64{"accuracy": res.IIDScore(), CurveSuite: sum / float64(len(res.Functionalities))} {
			k := r.Configuration + "|" + m
			if want[k] == nil {
				want[k] = map[float64][]float64{}
			}
			want[k][size] = append(want[k][size], v)
		}
	}
	for _, c := range curves {
		for _, m := range []string{"accuracy", CurveSuite} {
			pts := c.Points[m]
			if len(pts) != 2 || pts[0].Size != 10 || pts[1].Size != 100 {
				t.Fatalf("%s %s: points %+v", c.Label(), m, pts)
			}
			for _, p := range pts {
				vs := want[c.Configuration+"|"+m][p.Size]
				lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
				for _, v := range vs {
					lo, hi, sum = min(lo, v), max(hi, v), sum+v
				}
				if p.N != 3 || len(vs) != 3 || math.Abs(p.Mean-sum/3) > 1e-9 || p.Min != lo || p.Max != hi {
					t.Errorf("%s %s at %v: %+v, want mean %v min %v max %v of %v", c.Label(), m, p.Size, p, sum/3, lo, hi, vs)
				}
				if isBase := c.Configuration == experiments.ConfigIID && p.Size == 100; isBase != math.IsNaN(p.P) {
					t.Errorf("%s %s at %v: p %v (the baseline is IID at 100)", c.Label(), m, p.Size, p.P)
				}
			}
		}
	}
	for _, ext := range []string{"png", "svg", "pdf"} {
		path := filepath.Join(t.TempDir(), "lc."+ext)
		if err := tab.WriteLearningCurveFile(path, "accuracy", "lc"); err != nil {
			t.Errorf("%s: %v", ext, err)
		}
	}
	var svg bytes.Buffer
	if err := tab.WriteLearningCurvePlot(&svg, "accuracy", "lc", "svg"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"SENT IID+T: Vanilla", "i.i.d. test accuracy", "suite score (seen)", ">100<", "band = min to max"} {
		if !strings.Contains(svg.String(), s) {
			t.Errorf("the SVG lacks %q", s)
		}
	}
	if err := tab.WriteLearningCurvePlot(&svg, "macro_f1", "lc", "svg"); err == nil || !strings.Contains(err.Error(), `no i.i.d. metric "macro_f1"`) {
		t.Errorf("an undeclared metric: %v", err)
	}
	var md bytes.Buffer
	if err := tab.WriteLearningCurveMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| training examples | 10 | 100 |", "| IID: Vanilla: i.i.d. accuracy |", "| IID+T: Vanilla: suite score (seen) |", "below the baseline row, IID: Vanilla train_size=100"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, md.String())
		}
	}
}

// TestLearningCurveOfTheBaselineAlone: configurations: [IID] is a
// learning curve of the i.i.d. model; the table and CSV carry every
// declared metric, the majority class's values, flagged and trivial points
// marked; the plot takes a declared metric and draws the majority class.
func TestLearningCurveOfTheBaselineAlone(t *testing.T) {
	w := identOut()
	w.yaml = strings.Replace(strings.Replace(w.yaml, "configurations: [IID+T]", "configurations: [IID]\nseeds: [1, 2]\ngrid: {train_size: [50, 100]}", 1),
		"    dev: {path: dev.csv}", "    dev: {path: dev.csv}\n    metrics: [macro_f1]", 1)
	w.flagged = map[string]bool{"base": true}
	store, runs := w.store(t)
	tab, err := FromStore(store, runs, Options{Trials: 100})
	if err != nil {
		t.Fatal(err)
	}
	curves, err := tab.LearningCurves()
	if err != nil {
		t.Fatal(err)
	}
	if len(curves) != 1 || curves[0].Configuration != experiments.ConfigIID || len(curves[0].Points["macro_f1"]) != 2 {
		t.Fatalf("curves %+v", curves)
	}
	// Every run gets 160 of 200 right; gold is 120 × class 0, 80 × class 1.
	// Macro-F1: class 0 precision 120/120... recounted from the runner.
	pred := w.predictions("base")
	wantF1 := 100 * macroF1(pred, w.iidGold, 2)
	if got := curves[0].Points["macro_f1"][0].Mean; math.Abs(got-wantF1) > 1e-9 {
		t.Errorf("macro-F1 %v, recount %v", got, wantF1)
	}
	var md, csvOut bytes.Buffer
	if err := tab.WriteLearningCurveMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := tab.WriteLearningCurveCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| IID: Vanilla: i.i.d. macro_f1 |", "| majority class: i.i.d. accuracy | 60.00 | 60.00 |", "| majority class: i.i.d. macro_f1 | 37.50 | 37.50 |", MarkConstant, "± "} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, md.String())
		}
	}
	if !strings.Contains(csvOut.String(), "HATE,IID,vanilla,,macro_f1,50,") || !strings.Contains(csvOut.String(), "HATE,Baseline,majority class,,macro_f1,,37.5,") {
		t.Errorf("CSV:\n%s", csvOut.String())
	}
	var svg bytes.Buffer
	if err := tab.WriteLearningCurvePlot(&svg, "macro_f1", "lc", "svg"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"i.i.d. test macro_f1", "majority class", "ringed: a run behind the point predicts one class"} {
		if !strings.Contains(svg.String(), s) {
			t.Errorf("the SVG lacks %q", s)
		}
	}
}

// TestLearningCurvesRefuse: a store with no swept runs, counts mixed with
// fractions, and an unknown format are errors, and nothing is written.
func TestLearningCurvesRefuse(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{strings.Replace(learningCurveSpec, "train_size: [100, 10]", "train_size: [100, 0.5]", 1), "mixes counts and fractions"},
		{strings.Replace(learningCurveSpec, "train_size: [100, 10], ", "", 1), "no finished runs swept over train_size"},
	} {
		store, runs := sweepOf(t, tc.spec)
		tab, err := FromStore(store, runs, Options{Trials: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tab.LearningCurves(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	store, runs := sweepOf(t, learningCurveSpec)
	tab, err := FromStore(store, runs, Options{Trials: 1})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lc.gif")
	if err := tab.WriteLearningCurveFile(path, "", ""); err == nil || !strings.Contains(err.Error(), `unknown format "gif"`) {
		t.Errorf("gif: %v", err)
	}
}

// A named baseline: the rows are tested against it; one that names no
// row, or several, is refused with the rows.
func TestNamedBaseline(t *testing.T) {
	store, runs := sweepOf(t, learningCurveSpec)
	for _, tc := range []struct{ baseline, want, err string }{
		{"", "IID: Vanilla train_size=100", ""},
		{"IID train_size=10", "IID: Vanilla train_size=10", ""},
		{"IID+T: vanilla train_size=10", "IID+T: Vanilla train_size=10", ""},
		{"none", "", ""},
		{"IID+T", "", "names no row"},
		{"IID train_size=5", "", "names no row"},
	} {
		tab, err := FromStore(store, runs, Options{Trials: 50, Baseline: tc.baseline})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.baseline, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if b := tab.Baseline(); b != nil {
			got = rowRefOf(b)
		}
		if got != tc.want {
			t.Errorf("%q: baseline %q, want %q", tc.baseline, got, tc.want)
		}
		for _, r := range tab.Rows {
			p := r.Cell(IIDKey("SENT")).P
			if (r == tab.Baseline() || tab.Baseline() == nil) != math.IsNaN(p) {
				t.Errorf("%q: row %s p %v", tc.baseline, rowRefOf(r), p)
			}
		}
		// Table 3 names the row its arrows test against when it is not
		// its first (the reader's default): IID train_size=10 is the
		// second row, the IID+T one the fourth.
		var md bytes.Buffer
		if err := tab.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		note := "below the baseline row, " + tc.want + ", not the first row."
		if named := tab.Baseline() != nil && tab.Baseline() != tab.Rows[0]; named != strings.Contains(md.String(), note) || strings.Contains(md.String(), "not the first row") != named {
			t.Errorf("%q: baseline %q not first: %v; Table 3:\n%s", tc.baseline, tc.want, named, md.String())
		}
	}
}
