package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

// Rocket maps a value in [0, 1] to a colour of a perceptually ordered
// dark-to-light map close to seaborn's "rocket" (BeLUGA's Figure 1),
// interpolating linearly between anchors sampled from it.
func Rocket(v float64) color.RGBA {
	anchors := [...]color.RGBA{
		{0x03, 0x05, 0x1a, 0xff}, {0x2e, 0x1e, 0x3b, 0xff}, {0x70, 0x1f, 0x57, 0xff}, {0xad, 0x17, 0x59, 0xff},
		{0xe1, 0x33, 0x42, 0xff}, {0xf3, 0x76, 0x51, 0xff}, {0xf6, 0xb4, 0x8f, 0xff}, {0xfa, 0xeb, 0xdd, 0xff},
	}
	if math.IsNaN(v) {
		return color.RGBA{0xcc, 0xcc, 0xcc, 0xff}
	}
	v = math.Max(0, math.Min(1, v)) * float64(len(anchors)-1)
	i := int(v)
	if i >= len(anchors)-1 {
		return anchors[len(anchors)-1]
	}
	f := v - float64(i)
	a, b := anchors[i], anchors[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + f*(float64(y)-float64(x)))) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// Test-type colours of the x tick labels, as in Figure 1.
var typeColours = map[string]color.Color{
	"MFT": color.RGBA{0, 0, 0xff, 0xff},
	"INV": color.RGBA{0xff, 0, 0, 0xff},
	"DIR": color.RGBA{0, 0x80, 0, 0xff},
}

// Heatmap sizes, in points.
const (
	cellW, cellH = vg.Length(11), vg.Length(11)
	panelGap     = vg.Length(10)
	titleH       = vg.Length(18)
	tickH        = vg.Length(14)
	barW         = vg.Length(12)
	fontSize     = vg.Length(8)
)

// WriteHeatmap draws Figure 1: one panel per task (rows of panels) and score
// (columns of panels: seen, func, class, type). In each panel the rows are
// the IID baseline and every configuration × method, the columns the suite
// score (Avg) and then every functionality's pass rate, coloured 0–100 on
// one shared colour bar. Functionality numbers below the panels are coloured
// by test type (MFT blue, INV red, DIR green); lines separate the baseline
// and the configurations, and the functionality classes. format is png, svg
// or pdf. Labels are kept ASCII, which PDF's standard fonts need.
func (t *Table) WriteHeatmap(w io.Writer, format string) error {
	if len(t.Rows) == 0 || len(t.Tasks) == 0 {
		return fmt.Errorf("heatmap: empty table")
	}
	txt := func(size vg.Length, c color.Color, xa text.XAlignment, ya text.YAlignment) draw.TextStyle {
		return text.Style{Color: c, Font: font.From(plot.DefaultFont, size), XAlign: xa, YAlign: ya, Handler: plot.DefaultTextHandler}
	}
	label := txt(fontSize, color.Black, draw.XRight, draw.YCenter)
	labelW := vg.Length(0)
	for _, r := range t.Rows {
		labelW = max(labelW, label.Width(ascii(r.Label())))
	}
	labelW += 10
	maxCols := 0
	for _, task := range t.Tasks {
		maxCols = max(maxCols, 1+len(t.Functionalities[task]))
	}
	panelW := cellW * vg.Length(maxCols)
	panelH := cellH * vg.Length(len(t.Rows))
	scores := t.Scores
	width := labelW + vg.Length(len(scores))*(panelW+panelGap) + barW + 40
	height := vg.Length(len(t.Tasks))*(titleH+panelH+tickH+panelGap) + 10

	var cw vg.CanvasWriterTo
	if format == "png" {
		// 200 dpi: the default 96 blurs the small tick labels.
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(200))}
	} else {
		var err error
		if cw, err = draw.NewFormattedCanvas(width, height, format); err != nil {
			return fmt.Errorf("heatmap: %w", err)
		}
	}
	dc := draw.New(cw)
	dc.FillPolygon(color.White, rect(0, 0, width, height))
	thin := draw.LineStyle{Color: color.White, Width: 0.6}
	sep := draw.LineStyle{Color: color.RGBA{0, 0, 0xff, 0xff}, Width: 0.8}

	for ti, task := range t.Tasks {
		fs := t.Functionalities[task]
		top := height - 5 - vg.Length(ti)*(titleH+panelH+tickH+panelGap)
		y0 := top - titleH // top of the cells
		for si, score := range scores {
			x0 := labelW + vg.Length(si)*(panelW+panelGap)
			title := fmt.Sprintf("%s: %s", task, scoreTitles[score])
			dc.FillText(txt(fontSize+2, color.Black, draw.XCenter, draw.YCenter), vg.Point{X: x0 + cellW*vg.Length(1+len(fs))/2, Y: top - titleH/2}, ascii(title))
			for ri, r := range t.Rows {
				y := y0 - cellH*vg.Length(ri+1)
				vals := append([]float64{r.Suite[task][score]}, r.PassRates[task][score]...)
				for ci, v := range vals {
					x := x0 + cellW*vg.Length(ci)
					dc.FillPolygon(Rocket(v/100), rect(x, y, x+cellW, y+cellH))
				}
				if si == 0 {
					dc.FillText(label, vg.Point{X: x0 - 3, Y: y + cellH/2}, ascii(rowLabel(t, ri)))
				}
			}
			// White grid lines between cells, as seaborn's linewidths.
			for ci := 1; ci <= len(fs); ci++ {
				x := x0 + cellW*vg.Length(ci)
				dc.StrokeLine2(thin, x, y0-panelH, x, y0)
			}
			for ri := 1; ri < len(t.Rows); ri++ {
				y := y0 - cellH*vg.Length(ri)
				dc.StrokeLine2(thin, x0, y, x0+cellW*vg.Length(1+len(fs)), y)
			}
			// Separators: after the baseline and between configurations...
			for ri := 1; ri < len(t.Rows); ri++ {
				if ri == 1 || t.Rows[ri].Configuration != t.Rows[ri-1].Configuration {
					y := y0 - cellH*vg.Length(ri)
					dc.StrokeLine2(sep, x0, y, x0+cellW*vg.Length(1+len(fs)), y)
				}
			}
			// ...and after Avg and between functionality classes.
			for k := range fs {
				if k == 0 || fs[k].Class != fs[k-1].Class {
					x := x0 + cellW*vg.Length(1+k)
					dc.StrokeLine2(sep, x, y0-panelH, x, y0)
				}
			}
			// x tick labels: Avg, then 1..n coloured by test type.
			ty := y0 - panelH - tickH/2
			dc.FillText(txt(fontSize-2, color.Black, draw.XCenter, draw.YCenter), vg.Point{X: x0 + cellW/2, Y: ty}, "Avg")
			for k, f := range fs {
				c := typeColours[f.Type]
				if c == nil {
					c = color.Black
				}
				dc.FillText(txt(fontSize-2, c, draw.XCenter, draw.YCenter), vg.Point{X: x0 + cellW*vg.Length(k+1) + cellW/2, Y: ty}, fmt.Sprint(k+1))
			}
		}
	}
	// One shared colour bar, drawn as rectangles (gonum/plot's own colour bar
	// is flipped in PDF and has the wrong image type in SVG).
	bx := labelW + vg.Length(len(scores))*(panelW+panelGap)
	btop := height - 5 - titleH
	bbot := 5 + tickH
	const steps = 100
	for i := 0; i < steps; i++ {
		ya := bbot + (btop-bbot)*vg.Length(i)/steps
		yb := bbot + (btop-bbot)*vg.Length(i+1)/steps
		dc.FillPolygon(Rocket((float64(i)+0.5)/steps), rect(bx, ya, bx+barW, yb+0.3))
	}
	for v := 0; v <= 100; v += 20 {
		y := bbot + (btop-bbot)*vg.Length(v)/100
		dc.StrokeLine2(draw.LineStyle{Color: color.Black, Width: 0.5}, bx+barW, y, bx+barW+3, y)
		dc.FillText(txt(fontSize, color.Black, draw.XLeft, draw.YCenter), vg.Point{X: bx + barW + 5, Y: y}, fmt.Sprint(v))
	}
	_, err := cw.WriteTo(w)
	return err
}

// rowLabel is Figure 1's y label: "Config: Method" on the first row of a
// configuration block, the method alone below it.
func rowLabel(t *Table, i int) string {
	r := t.Rows[i]
	if i == 0 || r.Configuration != t.Rows[i-1].Configuration {
		return r.Label()
	}
	return methodName(r.Method)
}

func rect(x0, y0, x1, y1 vg.Length) []vg.Point {
	return []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

// ascii replaces what PDF's standard fonts cannot show.
func ascii(s string) string {
	return strings.Map(func(r rune) rune {
		if r > 126 || r < 32 {
			return '?'
		}
		return r
	}, s)
}

// WriteHeatmapFile writes the heatmap to path in the format its extension
// names (.png, .svg or .pdf), atomically.
func (t *Table) WriteHeatmapFile(path string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch format {
	case "png", "svg", "pdf":
	default:
		return fmt.Errorf("heatmap %s: unknown format %q (want .png, .svg or .pdf)", path, format)
	}
	return atomicfile.Write(path, func(w io.Writer) error { return t.WriteHeatmap(w, format) })
}
