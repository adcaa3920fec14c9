package report

import (
	"bytes"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

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
