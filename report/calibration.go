package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
)

// CalibrationCurve is one labelled set of predictions' calibration, a line
// of the reliability diagram (the user's data, a suite's labelled inputs).
type CalibrationCurve struct {
	Label string
	metrics.Calibration
}

// CalibrationFigure is what the calibration figure shows: reliability
// curves on the left, and on the right the confidence histogram of passing
// and failing cases (or right and wrong predictions).
type CalibrationFigure struct {
	Curves []CalibrationCurve
	// Passing and Failing are confidences in [0, 1]; PassLabel and
	// FailLabel name them in the legend ("passing cases", "failing cases"
	// when empty). With neither, the figure is the reliability diagram
	// alone.
	Passing, Failing     []float64
	PassLabel, FailLabel string
	// HistogramBins is the number of equal-width histogram bins over
	// [0, 1]; 0 means 20.
	HistogramBins int
}

// Calibration figure text sizes, in points: none under minText.
const (
	calTitleSize = vg.Length(9)
	calLabelSize = vg.Length(8)
	calTickSize  = minText
	calKeySize   = minText
)

var (
	calPalette = []color.RGBA{
		{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
		{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff},
	}
	passColour = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
	failColour = color.RGBA{0xd6, 0x27, 0x28, 0xff}
)

// WriteCalibrationPlot draws the figure opt.Width inches wide (PaperWidth
// by default), in format png (300 dpi), svg or pdf. The reliability
// diagram plots each non-empty bin's accuracy against its mean confidence,
// one line per curve, over the diagonal a calibrated model follows; a
// curve's legend entry gives its ECE, Brier score and size. The histogram
// shows, per confidence bin, the share of the passing and of the failing
// cases that fall there, so that a few failures are as visible as many
// passes: failures made with high confidence are the over-confident ones.
// No text is smaller than 7 pt; labels are kept ASCII for PDF's fonts.
func WriteCalibrationPlot(w io.Writer, format string, fig CalibrationFigure, opt HeatmapOptions) error {
	if len(fig.Curves) == 0 && len(fig.Passing)+len(fig.Failing) == 0 {
		return fmt.Errorf("calibration plot: nothing to draw")
	}
	width := opt.Width
	if width == 0 {
		width = PaperWidth
	}
	if width < 3 {
		return fmt.Errorf("calibration plot: %g in is too narrow (at least 3 in)", width)
	}
	var panels []*plot.Plot
	key := plot.NewLegend()
	if len(fig.Curves) > 0 {
		p, err := reliabilityPanel(fig.Curves, &key)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	if len(fig.Passing)+len(fig.Failing) > 0 {
		p, err := histogramPanel(fig)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	w0 := vg.Length(width) * vg.Inch
	// Square panels side by side: a reliability diagram's axes are both
	// probabilities.
	// The curves' key, one line each, goes under the panels: it is wider
	// than a panel.
	keyH := vg.Length(0)
	if len(fig.Curves) > 0 {
		keyH = vg.Length(len(fig.Curves))*vg.Points(10) + vg.Points(6)
	}
	h := w0/2 + vg.Points(10) + keyH
	var cw vg.CanvasWriterTo
	if format == "png" {
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w0, h), vgimg.UseDPI(300))}
	} else {
		var err error
		if cw, err = draw.NewFormattedCanvas(w0, h, format); err != nil {
			return fmt.Errorf("calibration plot: %w", err)
		}
	}
	dc := draw.New(cw)
	dc.FillPolygon(color.White, rect(0, 0, w0, h))
	if keyH > 0 {
		key.Top, key.Left = true, true
		key.TextStyle.Font.Size = calKeySize
		key.ThumbnailWidth = vg.Points(14)
		key.Draw(draw.Canvas{Canvas: dc, Rectangle: vg.Rectangle{Min: vg.Point{X: dc.Min.X + vg.Points(30), Y: dc.Min.Y + vg.Points(2)}, Max: vg.Point{X: dc.Max.X, Y: dc.Min.Y + keyH}}})
		dc = draw.Crop(dc, 0, 0, keyH, 0)
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	if len(panels) == 1 {
		// One panel: centred, as wide as it is beside another.
		dc = draw.Crop(dc, w0/4, -w0/4, 0, 0)
	}
	canvases := plot.Align([][]*plot.Plot{panels}, tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[0][i])
	}
	_, err := cw.WriteTo(w)
	return err
}

// styled sets every text of p to the calibration figure's sizes.
func styled(p *plot.Plot, title, x, y string) {
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = calTitleSize
	p.X.Label.Text, p.Y.Label.Text = x, y
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = calLabelSize
		a.Tick.Label.Font.Size = calTickSize
	}
	p.Legend.TextStyle.Font.Size = calKeySize
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(4), -vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(14)
}

func unitAxes(p *plot.Plot) {
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	ticks := plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.2, Label: "0.2"}, {Value: 0.4, Label: "0.4"}, {Value: 0.6, Label: "0.6"}, {Value: 0.8, Label: "0.8"}, {Value: 1, Label: "1"}})
	p.X.Tick.Marker = ticks
	p.Y.Tick.Marker = ticks
}

func reliabilityPanel(curves []CalibrationCurve, key *plot.Legend) (*plot.Plot, error) {
	p := plot.New()
	styled(p, "Reliability", "confidence (mean per bin)", "accuracy")
	unitAxes(p)
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return nil, fmt.Errorf("reliability diagram: %w", err)
	}
	diag.Color, diag.Width, diag.Dashes = color.Gray{Y: 0x90}, vg.Points(0.8), []vg.Length{vg.Points(3), vg.Points(2)}
	p.Add(diag)
	for i, c := range curves {
		var pts plotter.XYs
		for _, b := range c.Bins {
			if b.N > 0 {
				pts = append(pts, plotter.XY{X: b.Confidence, Y: b.Accuracy})
			}
		}
		if len(pts) == 0 {
			continue
		}
		col := calPalette[i%len(calPalette)]
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("reliability diagram %s: %w", c.Label, err)
		}
		l.Color, l.Width = col, vg.Points(1.2)
		s.Color, s.Shape, s.Radius = col, draw.CircleGlyph{}, vg.Points(2)
		p.Add(l, s)
		key.Add(ascii(curveKey(c)), l, s)
	}
	return p, nil
}

// curveKey is a curve's legend entry: its label, size and binning, ECE and
// Brier score.
func curveKey(c CalibrationCurve) string {
	bins := map[metrics.Binning]string{metrics.EqualWidth: "equal-width", metrics.EqualMass: "equal-mass"}[c.Binning]
	scores := fmt.Sprintf("ECE %.3f", c.ECE)
	if !math.IsNaN(c.Brier) {
		scores += fmt.Sprintf(", Brier %.3f", c.Brier)
	}
	return fmt.Sprintf("%s (n=%d, %d %s bins): %s", c.Label, c.N, len(c.Bins), bins, scores)
}

func histogramPanel(fig CalibrationFigure) (*plot.Plot, error) {
	n := fig.HistogramBins
	if n == 0 {
		n = 20
	}
	if n < 1 || n > 1000 {
		return nil, fmt.Errorf("confidence histogram: %d bins (want 1 to 1000)", n)
	}
	p := plot.New()
	styled(p, "Confidence", "confidence", "share of the cases")
	unitAxes(p)
	p.Y.Max = 0
	passLabel, failLabel := fig.PassLabel, fig.FailLabel
	if passLabel == "" {
		passLabel = "passing cases"
	}
	if failLabel == "" {
		failLabel = "failing cases"
	}
	for _, s := range []struct {
		label string
		conf  []float64
		col   color.RGBA
	}{{passLabel, fig.Passing, passColour}, {failLabel, fig.Failing, failColour}} {
		if len(s.conf) == 0 {
			continue
		}
		counts := make([]float64, n)
		for i, c := range s.conf {
			if !(c >= 0 && c <= 1) {
				return nil, fmt.Errorf("confidence histogram: %s: confidence %d is %v, outside [0, 1]", s.label, i, c)
			}
			// Bins (lo, hi] with the first closed, as the reliability bins.
			k := int(math.Ceil(c*float64(n))) - 1
			counts[max(0, min(k, n-1))]++
		}
		h := &plotter.Histogram{Width: 1 / float64(n), FillColor: color.NRGBA{R: s.col.R, G: s.col.G, B: s.col.B, A: 0x60}}
		h.LineStyle = draw.LineStyle{Color: s.col, Width: vg.Points(0.8)}
		for k, c := range counts {
			share := c / float64(len(s.conf))
			h.Bins = append(h.Bins, plotter.HistogramBin{Min: float64(k) / float64(n), Max: float64(k+1) / float64(n), Weight: share})
			p.Y.Max = math.Max(p.Y.Max, share)
		}
		p.Add(h)
		p.Legend.Add(ascii(fmt.Sprintf("%s (n=%d)", s.label, len(s.conf))), h)
	}
	// Room above the bars for the legend.
	p.Y.Max = math.Min(1, p.Y.Max*1.3)
	p.Y.Tick.Marker = plot.DefaultTicks{}
	return p, nil
}

// WriteCalibrationPlotFile writes the figure to path in the format its
// extension names (.png, .svg or .pdf), atomically.
func WriteCalibrationPlotFile(path string, fig CalibrationFigure, opt HeatmapOptions) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch format {
	case "png", "svg", "pdf":
	default:
		return fmt.Errorf("calibration plot %s: unknown format %q (want .png, .svg or .pdf)", path, format)
	}
	return atomicfile.Write(path, func(w io.Writer) error { return WriteCalibrationPlot(w, format, fig, opt) })
}
