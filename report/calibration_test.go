package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
)

// calibrationFixture is an over-confident model on 400 labelled
// predictions, its right and wrong predictions' confidences, and its
// calibration in both binnings.
func calibrationFixture(t *testing.T) CalibrationFigure {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var preds []metrics.Prediction
	var gold []int
	var fig CalibrationFigure
	for range 400 {
		conf := 0.5 + 0.5*rng.Float64()
		right := rng.Float64() < conf-0.15
		g := 0
		if !right {
			g = 1
		}
		preds = append(preds, metrics.Prediction{Class: 0, Probs: []float64{conf, 1 - conf}})
		gold = append(gold, g)
		if right {
			fig.Passing = append(fig.Passing, conf)
		} else {
			fig.Failing = append(fig.Failing, conf)
		}
	}
	for _, b := range []metrics.Binning{metrics.EqualWidth, metrics.EqualMass} {
		c, err := metrics.Calibrate(preds, gold, 10, b)
		if err != nil {
			t.Fatal(err)
		}
		fig.Curves = append(fig.Curves, CalibrationCurve{Label: "your data", Calibration: c})
	}
	fig.PassLabel, fig.FailLabel = "right", "wrong"
	return fig
}

// TestCalibrationPlotAtPaperWidth checks the calibration figure as it is
// printed: the width asked for, no text under 7 pt, each curve's ECE in the
// key, both histograms named; and each format's file is what it says.
func TestCalibrationPlotAtPaperWidth(t *testing.T) {
	fig := calibrationFixture(t)
	textRE := regexp.MustCompile(`font-size:([0-9.]+)px[^"]*">([^<]*)</text>`)
	widthRE := regexp.MustCompile(`<svg width="([0-9.]+)pt"`)
	for name, f := range map[string]CalibrationFigure{
		"both panels":      fig,
		"reliability only": {Curves: fig.Curves},
		"histogram only":   {Passing: fig.Passing, Failing: fig.Failing},
	} {
		for _, inches := range []float64{0, 3.25} {
			var b bytes.Buffer
			if err := WriteCalibrationPlot(&b, "svg", f, HeatmapOptions{Width: inches}); err != nil {
				t.Fatalf("%s at %g in: %v", name, inches, err)
			}
			want := inches
			if want == 0 {
				want = PaperWidth
			}
			if m := widthRE.FindSubmatch(b.Bytes()); m == nil || string(m[1]) != fmt.Sprint(want*72) {
				t.Errorf("%s at %g in: svg width %q, want %gpt", name, inches, m, want*72)
			}
			var texts []string
			for _, m := range textRE.FindAllSubmatch(b.Bytes(), -1) {
				if size, err := strconv.ParseFloat(string(m[1]), 64); err != nil || size < 7 {
					t.Errorf("%s at %g in: text %q at %s pt, want at least 7", name, inches, m[2], m[1])
				}
				texts = append(texts, html.UnescapeString(string(m[2])))
			}
			all := strings.Join(texts, " | ")
			var keys []string
			if f.Curves != nil {
				keys = append(keys, "Reliability", "your data (n=400, 10 equal-width bins)", "your data (n=400, 10 equal-mass bins)",
					fmt.Sprintf("ECE %.3f, Brier %.3f", fig.Curves[0].ECE, fig.Curves[0].Brier), fmt.Sprintf("ECE %.3f, Brier %.3f", fig.Curves[1].ECE, fig.Curves[1].Brier))
			}
			if f.Passing != nil {
				keys = append(keys, "Confidence", fmt.Sprintf("(n=%d)", len(fig.Passing)), fmt.Sprintf("(n=%d)", len(fig.Failing)))
			}
			for _, k := range keys {
				if !strings.Contains(all, k) {
					t.Errorf("%s at %g in: no text %q in %s", name, inches, k, all)
				}
			}
		}
	}
	dir := t.TempDir()
	for ext, magic := range map[string]string{".png": "\x89PNG", ".svg": "<?xml", ".pdf": "%PDF"} {
		path := filepath.Join(dir, "calibration"+ext)
		if err := WriteCalibrationPlotFile(path, fig, HeatmapOptions{}); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || !bytes.HasPrefix(b, []byte(magic)) {
			t.Errorf("%s: does not start with %q (%v)", ext, magic, err)
		}
		if *heatmapDir != "" && ext == ".png" {
			b, _ := os.ReadFile(path)
			os.WriteFile(filepath.Join(*heatmapDir, "calibration.png"), b, 0o644)
		}
	}
	for _, tc := range []struct {
		name string
		fig  CalibrationFigure
		path string
		want string
	}{
		{"nothing", CalibrationFigure{}, "c.png", "nothing to draw"},
		{"format", fig, "c.jpg", "unknown format"},
		{"confidence", CalibrationFigure{Failing: []float64{1.5}}, "c.svg", "outside [0, 1]"},
	} {
		path := filepath.Join(dir, tc.path)
		if err := WriteCalibrationPlotFile(path, tc.fig, HeatmapOptions{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s: %s written after an error", tc.name, tc.path)
		}
	}
}

// TestCalibrationLines writes i.i.d. prediction and case files, as train
// writes them, into the test sweep's runs and checks each column's
// calibration against metrics.CalibrateInputs of the pooled lines, its
// worst group against the verdicts counted by hand, and that columns
// whose runs left no such files say so (NaN, "–") rather than 0.
func TestCalibrationLines(t *testing.T) {
	store, runs := sweep(t)
	rng := rand.New(rand.NewPCG(3, 4))
	labels := []string{"negative", "positive"}
	line := func() metrics.CaseInput {
		p := rng.Float64()
		k := 0
		if p > 0.5 {
			k = 1
		}
		gold := labels[k]
		if rng.Float64() < 0.3 {
			gold = labels[1-k]
		}
		return metrics.CaseInput{Text: "x", Label: gold, Pred: labels[k], PredClass: &k, Probs: []float64{1 - p, p}}
	}
	type col struct{ task, config, method, axes, score string }
	pooledIID, pooledTest := map[col][]metrics.CaseInput{}, map[col][]metrics.CaseInput{}
	withFiles := 0
	for _, r := range runs {
		if r.Score == experiments.ScoreSearch || r.Score == experiments.ScoreType {
			continue // no files, as a store written before them
		}
		withFiles++
		c := col{r.Task, r.Configuration, r.Method, r.Axes(), r.Score}
		dir := filepath.Join(store.RunDir(r.ID()), "train")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var iid, cases bytes.Buffer
		for range 30 {
			in := line()
			pooledIID[c] = append(pooledIID[c], in)
			b, _ := json.Marshal(in)
			iid.Write(append(b, '\n'))
		}
		for k := range 5 {
			v := metrics.CaseVerdict{Functionality: "f", Case: k, Verdict: metrics.Pass, Inputs: []metrics.CaseInput{line()}}
			if k == 4 {
				v.Verdict = metrics.Filtered // a filtered case's inputs do not count
			} else {
				pooledTest[c] = append(pooledTest[c], v.Inputs...)
			}
			b, _ := json.Marshal(v)
			cases.Write(append(b, '\n'))
		}
		os.WriteFile(filepath.Join(dir, "iid_predictions.jsonl"), iid.Bytes(), 0o644)
		os.WriteFile(filepath.Join(dir, "cases.jsonl"), cases.Bytes(), 0o644)
	}
	lines, err := CalibrationLines(store, runs, 10)
	if err != nil {
		t.Fatal(err)
	}
	if withFiles == 0 || len(lines) == 0 {
		t.Fatalf("%d runs with files, %d lines", withFiles, len(lines))
	}
	withoutFiles := 0
	for _, l := range lines {
		c := col{l.Task, l.Configuration, l.Method, l.Axes, l.Score}
		for _, m := range []struct {
			name string
			ins  []metrics.CaseInput
			b    metrics.Binning
			got  metrics.Calibration
		}{{"iid", pooledIID[c], metrics.EqualWidth, l.IID}, {"iid mass", pooledIID[c], metrics.EqualMass, l.IIDMass},
			{"test", pooledTest[c], metrics.EqualWidth, l.Test}, {"test mass", pooledTest[c], metrics.EqualMass, l.TestMass}} {
			if len(m.ins) == 0 {
				if m.got.N != 0 || !math.IsNaN(m.got.ECE) || !math.IsNaN(m.got.Brier) {
					t.Errorf("%v %s: no files, yet N %d ECE %v", c, m.name, m.got.N, m.got.ECE)
				}
				withoutFiles++
				continue
			}
			want, err := metrics.CalibrateInputs(m.ins, 10, m.b)
			if err != nil {
				t.Fatal(err)
			}
			if m.got.N != want.N || m.got.ECE != want.ECE || m.got.Brier != want.Brier {
				t.Errorf("%v %s: N %d ECE %v Brier %v, want %d %v %v", c, m.name, m.got.N, m.got.ECE, m.got.Brier, want.N, want.ECE, want.Brier)
			}
		}
		// The worst group, by hand from the runs' verdicts.
		counts := map[string][2]int{}
		for _, r := range runs {
			if r.Task != l.Task || r.Configuration != l.Configuration || r.Method != l.Method || r.Axes() != l.Axes || r.Score != l.Score {
				continue
			}
			res, err := experiments.ReadResult(store.RunDir(r.ID()))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Functionalities {
				g := f.Name
				if r.Score != experiments.ScoreSeen && r.Score != experiments.ScoreIID {
					g = r.Fold
				}
				n := counts[g]
				n[0] += strings.Count(f.Verdicts, "P")
				n[1] += strings.Count(f.Verdicts, "P") + strings.Count(f.Verdicts, "F")
				counts[g] = n
			}
		}
		worst := math.Inf(1)
		for _, n := range counts {
			if n[1] > 0 {
				worst = math.Min(worst, 100*float64(n[0])/float64(n[1]))
			}
		}
		n := counts[l.Worst.Name]
		if l.Worst.Rate != worst || n[0] != l.Worst.Passed || n[1] != l.Worst.Scored || !(l.Worst.Lo <= l.Worst.Rate && l.Worst.Rate <= l.Worst.Hi) {
			t.Errorf("%v: worst group %+v, by hand %v %v", c, l.Worst, worst, n)
		}
	}
	if withoutFiles == 0 {
		t.Error("every column had files: the test does not cover stores without them")
	}
	var md, csvOut bytes.Buffer
	if err := WriteCalibrationMarkdown(&md, lines, 10); err != nil {
		t.Fatal(err)
	}
	if err := WriteCalibrationCSV(&csvOut, lines); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil || len(recs) != len(lines)+1 || recs[0][6] != "ece_iid" || recs[0][10] != "ece_test" {
		t.Errorf("csv: %d records, head %v (%v)", len(recs), recs[0], err)
	}
	if !strings.Contains(md.String(), "| worst group |") || !strings.Contains(md.String(), "Wilson") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// TestTestCalibration builds the test report's calibration section from
// case verdicts: per test on the labelled inputs, the worst test with its
// Wilson interval, the figure as SVG; its JSON holds no NaN; and a model
// without labels or probabilities gets no section.
func TestTestCalibration(t *testing.T) {
	one, zero := 1, 0
	in := func(label string, k int, p float64) metrics.CaseInput {
		names := []string{"neg", "pos"}
		probs := []float64{1 - p, p}
		return metrics.CaseInput{Label: label, Pred: names[k], PredClass: &k, Probs: probs}
	}
	cases := []metrics.CaseVerdict{
		{Functionality: "f", Verdict: metrics.Pass, Inputs: []metrics.CaseInput{in("pos", one, 0.9)}},
		{Functionality: "f", Verdict: metrics.Fail, Inputs: []metrics.CaseInput{in("neg", one, 0.8)}},
		{Functionality: "g", Verdict: metrics.Fail, Inputs: []metrics.CaseInput{in("", zero, 0.3), in("", one, 0.6)}},
		{Functionality: "g", Verdict: metrics.Filtered, Inputs: []metrics.CaseInput{in("", zero, 0.3)}},
	}
	c, err := NewTestCalibration("m", cases, nil)
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	if len(c.Tests) != 2 || c.Tests[1].Functionality != "f" || c.Passing != 1 || c.Failing != 2 || !strings.HasPrefix(c.SVG, "<?xml") {
		t.Errorf("section %+v", c)
	}
	lo, hi := metrics.Wilson(0, 1, z95)
	if w := c.Worst; w.Name != "g" || w.Rate != 0 || w.Scored != 1 || w.Lo != 100*lo || w.Hi != 100*hi {
		t.Errorf("worst test %+v", w)
	}
	var b bytes.Buffer
	if err := c.WriteMarkdown(&b, "## "); err != nil || !strings.Contains(b.String(), "Worst test: g, pass rate 0.0% (0 of 1 cases") {
		t.Errorf("markdown (%v):\n%s", err, b.String())
	}
	if _, err := json.Marshal(c); err != nil {
		t.Error(err)
	}
	if _, err := json.Marshal(WorstGroup{Rate: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}); err != nil {
		t.Error(err)
	}
	if c, err := NewTestCalibration("m", []metrics.CaseVerdict{{Functionality: "f", Verdict: metrics.Pass}}, nil); c != nil || err != nil {
		t.Errorf("no probabilities: section %+v (%v)", c, err)
	}
}

// TestCalibrationLinesUnmeasurable gives every run i.i.d. lines with a
// gold label but a predicted class outside their probabilities: lines
// metrics.CalibrateInputs cannot measure, so the column is not measured
// (N 0, NaN) rather than the whole table failing for want of lines.
func TestCalibrationLinesUnmeasurable(t *testing.T) {
	store, runs := sweep(t)
	k := 2
	b, _ := json.Marshal(metrics.CaseInput{Text: "x", Label: "positive", Pred: "positive", PredClass: &k, Probs: []float64{0.4, 0.6}})
	for _, r := range runs {
		dir := filepath.Join(store.RunDir(r.ID()), "train")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "iid_predictions.jsonl"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lines, err := CalibrationLines(store, runs, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatal("no lines")
	}
	for _, l := range lines {
		if l.IID.N != 0 || !math.IsNaN(l.IID.ECE) || !math.IsNaN(l.IIDMass.ECE) {
			t.Errorf("%s %s %s: i.i.d. N %d ECE %v, want none measured", l.Task, l.Configuration, l.Score, l.IID.N, l.IID.ECE)
		}
	}
}
