package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/report/tfevents"
)

// CurveFile is the name of a run's stored training curve: JSON lines of
// {"step", "kind", "loss", "lr"}, one per update, as package train writes it.
const CurveFile = "curve.jsonl"

// CurvePoint is one logged update of a stored curve. Kind names the batch
// (mft, inv, dir, iid, or a method's own); a loss of −1 marks a non-finite
// loss (JSON has no NaN).
type CurvePoint struct {
	Step int     `json:"step"`
	Kind string  `json:"kind"`
	Loss float64 `json:"loss"`
	LR   float64 `json:"lr"`
}

// FindCurve returns the curve file of a run directory: the directory's own
// curve.jsonl, else the one its trainer wrote under train/; a curve file
// given directly is returned as it is.
func FindCurve(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return path, nil
	}
	for _, p := range []string{filepath.Join(path, CurveFile), filepath.Join(path, "train", CurveFile)} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("run %s: no %s (is it a run directory?)", path, CurveFile)
}

// ReadCurve reads a stored curve.
func ReadCurve(path string) ([]CurvePoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []CurvePoint
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p CurvePoint
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty curve", path)
	}
	return out, nil
}

// CurveScalars turns a curve into TensorBoard scalars: "loss/KIND" per
// batch kind and "lr", by step (non-finite losses left out).
func CurveScalars(curve []CurvePoint) []tfevents.Scalar {
	out := make([]tfevents.Scalar, 0, 2*len(curve))
	for _, p := range curve {
		if p.Loss >= 0 && !math.IsInf(p.Loss, 0) {
			out = append(out, tfevents.Scalar{Tag: "loss/" + p.Kind, Step: int64(p.Step), Value: p.Loss})
		}
		out = append(out, tfevents.Scalar{Tag: "lr", Step: int64(p.Step), Value: p.LR})
	}
	return out
}

// WriteCurveEvents writes a curve as a TensorBoard event file in dir
// (`tensorboard --logdir` on a run store then shows every run's curve).
func WriteCurveEvents(dir string, start time.Time, curve []CurvePoint) (string, error) {
	return tfevents.Write(dir, start, CurveScalars(curve))
}

// curveSmoothing is the widest window of the moving average drawn over each
// kind's losses: single-batch losses are too noisy to read.
const curveSmoothing = 25

// WriteCurvePlot draws a run's training curve: the loss per batch kind
// (faint points, and a centred moving average of curveSmoothing batches as
// a line) against the step, and the learning rate on a panel below. format is png,
// svg or pdf.
func WriteCurvePlot(w io.Writer, curve []CurvePoint, title, format string) error {
	loss := plot.New()
	loss.Title.Text = ascii(title)
	loss.Y.Label.Text = "loss"
	loss.Legend.Top = true
	byKind := map[string]plotter.XYs{}
	var kinds []string
	for _, p := range curve {
		if p.Loss < 0 || math.IsNaN(p.Loss) || math.IsInf(p.Loss, 0) {
			continue
		}
		if _, ok := byKind[p.Kind]; !ok {
			kinds = append(kinds, p.Kind)
		}
		byKind[p.Kind] = append(byKind[p.Kind], plotter.XY{X: float64(p.Step), Y: p.Loss})
	}
	slices.Sort(kinds)
	palette := []color.Color{
		color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
		color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	}
	for i, k := range kinds {
		c := palette[i%len(palette)]
		pts := byKind[k]
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("curve: %w", err)
		}
		rgba := c.(color.RGBA)
		faint := color.NRGBA{R: rgba.R, G: rgba.G, B: rgba.B, A: 0x50}
		sc.GlyphStyle = draw.GlyphStyle{Color: faint, Radius: vg.Points(1), Shape: draw.CircleGlyph{}}
		// A kind with few batches gets a narrower window, so that its line
		// still follows its points.
		line, err := plotter.NewLine(movingAverage(pts, max(1, min(curveSmoothing, len(pts)/8))))
		if err != nil {
			return fmt.Errorf("curve: %w", err)
		}
		line.Color, line.Width = c, vg.Points(1.2)
		loss.Add(sc, line)
		loss.Legend.Add(ascii(k), line)
	}
	lr := plot.New()
	lr.X.Label.Text = "step"
	lr.Y.Label.Text = "learning rate"
	var lrs plotter.XYs
	for _, p := range curve {
		lrs = append(lrs, plotter.XY{X: float64(p.Step), Y: p.LR})
	}
	line, err := plotter.NewLine(lrs)
	if err != nil {
		return fmt.Errorf("curve: %w", err)
	}
	lr.Add(line)
	lr.X.Min, lr.X.Max = loss.X.Min, loss.X.Max
	cw, err := draw.NewFormattedCanvas(6*vg.Inch, 5*vg.Inch, format)
	if err != nil {
		return fmt.Errorf("curve: %w", err)
	}
	// Aligned panels share the x axis's position.
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(6)}
	canvases := plot.Align([][]*plot.Plot{{loss}, {lr}}, tiles, draw.New(cw))
	loss.Draw(canvases[0][0])
	lr.Draw(canvases[1][0])
	_, err = cw.WriteTo(w)
	return err
}

// movingAverage smooths pts with a centred window of n points (shorter at
// the ends).
func movingAverage(pts plotter.XYs, n int) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, p := range pts {
		lo, hi := max(0, i-n/2), min(len(pts), i+n/2+1)
		sum := 0.0
		for _, q := range pts[lo:hi] {
			sum += q.Y
		}
		out[i] = plotter.XY{X: p.X, Y: sum / float64(hi-lo)}
	}
	return out
}

// WriteCurvePlotFile writes the plot to path in the format its extension
// names (.png, .svg or .pdf), atomically.
func WriteCurvePlotFile(path string, curve []CurvePoint, title string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch format {
	case "png", "svg", "pdf":
	default:
		return fmt.Errorf("curve plot %s: unknown format %q (want .png, .svg or .pdf)", path, format)
	}
	return atomicfile.Write(path, func(w io.Writer) error { return WriteCurvePlot(w, curve, title, format) })
}
