package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/beluga-nlp/beluga/experiments"

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
	cellW       = vg.Length(9)
	minCellH    = vg.Length(9)
	panelGap    = vg.Length(12)
	titleH      = vg.Length(14)
	tickH       = vg.Length(10)
	barW        = vg.Length(10)
	fontSize    = vg.Length(8)
	nameSize    = vg.Length(6.5)
	nameMax     = 48 // characters of a functionality name shown
	maxAspect   = 3  // width : height at most
	figureInset = vg.Length(6)
)

// figureOrder returns the task's functionalities in Figure 1's column
// order: suite order, except that BeLUGA swaps QQP's 8th and 11th columns
// so that the Vocabulary tests stand together; the swap is made only when
// those two columns are the release suite's tests.
func (t *Table) figureOrder(task string) []int {
	fs := t.Functionalities[task]
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	if t.beluga[task] == "qqp" && len(fs) >= 11 &&
		fs[7].Name == "How can I become more {synonym}?" &&
		fs[10].Name == "How can I become more X != How can I become less X" {
		order[7], order[10] = 10, 7
	}
	return order
}

// figureScores lists the scores that get a row of panels: those some row
// other than the baseline has (the quickstart runs no func folds), or all
// of them for a table of the baseline alone.
func (t *Table) figureScores() []string {
	var out []string
	for _, s := range t.Scores {
		for _, r := range t.Rows {
			if r.Configuration == experiments.ConfigIID || r.Reference {
				continue
			}
			if slices.ContainsFunc(t.Tasks, func(task string) bool { return !math.IsNaN(r.Suite[task][s]) }) {
				out = append(out, s)
				break
			}
		}
	}
	if len(out) == 0 {
		return t.Scores
	}
	return out
}

// WriteHeatmap draws Figure 1 laid out for a page. Panels form a grid: one
// column per task, one row per score (seen, func, class, type; a score no
// row has is left out). In each
// panel the rows are the IID baseline and every configuration × method, the
// columns the suite score (Avg) and then every functionality's pass rate,
// coloured 0–100 on one shared colour bar. Each panel's columns are
// numbered by the functionality's place in the suite; under the bottom
// panel the numbers carry the functionality names, written upwards. Numbers
// and names are coloured by test type (MFT blue, INV red, DIR green); lines
// separate the baseline and the configurations, and the functionality
// classes. QQP's columns 8 and 11 are swapped as in BeLUGA. Cells grow
// taller when needed so that the figure is at most three times as wide as
// high. format is png, svg or pdf. Labels are kept ASCII, which PDF's
// standard fonts need.
func (t *Table) WriteHeatmap(w io.Writer, format string) error {
	if len(t.Rows) == 0 || len(t.Tasks) == 0 {
		return fmt.Errorf("heatmap: empty table")
	}
	txt := func(size vg.Length, c color.Color, xa text.XAlignment, ya text.YAlignment) draw.TextStyle {
		return text.Style{Color: c, Font: font.From(plot.DefaultFont, size), XAlign: xa, YAlign: ya, Handler: plot.DefaultTextHandler}
	}
	label := txt(fontSize, color.Black, draw.XRight, draw.YCenter)
	labelW := vg.Length(0)
	for i := range t.Rows {
		labelW = max(labelW, label.Width(ascii(rowLabel(t, i))))
	}
	labelW += 8
	nameStyle := func(c color.Color) draw.TextStyle {
		st := txt(nameSize, c, draw.XRight, draw.YCenter)
		st.Rotation = math.Pi / 2
		return st
	}
	namesH := vg.Length(0)
	panelW := map[string]vg.Length{}
	width := figureInset + labelW
	for _, task := range t.Tasks {
		for _, f := range t.Functionalities[task] {
			namesH = max(namesH, nameStyle(color.Black).Width(columnName(0, f)))
		}
		panelW[task] = cellW * vg.Length(1+len(t.Functionalities[task]))
		width += panelW[task] + panelGap
	}
	width += barW + 24
	namesH += 6
	scores := t.figureScores()
	nrows := vg.Length(len(t.Rows))
	bandH := func(cellH vg.Length) vg.Length { return titleH + cellH*nrows + tickH + panelGap }
	// Under the bottom panel the names take the place of the numbers.
	fixed := 2*figureInset + namesH - tickH - panelGap
	cellH := minCellH
	if height := fixed + vg.Length(len(scores))*bandH(cellH); width > maxAspect*height {
		// Taller cells, not smaller text: reach width/3 exactly.
		need := width/maxAspect - fixed - vg.Length(len(scores))*(titleH+tickH+panelGap)
		cellH = need / (vg.Length(len(scores)) * nrows)
	}
	height := fixed + vg.Length(len(scores))*bandH(cellH)

	var cw vg.CanvasWriterTo
	if format == "png" {
		// 200 dpi: the default 96 blurs the small labels.
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

	x0 := figureInset + labelW
	for _, task := range t.Tasks {
		fs := t.Functionalities[task]
		order := t.figureOrder(task)
		pw := panelW[task]
		for si, score := range scores {
			top := height - figureInset - vg.Length(si)*bandH(cellH)
			y0 := top - titleH // top of the cells
			panelH := cellH * nrows
			title := fmt.Sprintf("%s: %s", task, scoreTitles[score])
			dc.FillText(txt(fontSize+1, color.Black, draw.XCenter, draw.YCenter), vg.Point{X: x0 + pw/2, Y: top - titleH/2}, ascii(title))
			for ri, r := range t.Rows {
				y := y0 - cellH*vg.Length(ri+1)
				dc.FillPolygon(Rocket(r.Suite[task][score]/100), rect(x0, y, x0+cellW, y+cellH))
				rates := r.PassRates[task][score]
				for ci, k := range order {
					v := math.NaN()
					if k < len(rates) {
						v = rates[k]
					}
					x := x0 + cellW*vg.Length(ci+1)
					dc.FillPolygon(Rocket(v/100), rect(x, y, x+cellW, y+cellH))
				}
				if task == t.Tasks[0] {
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
				dc.StrokeLine2(thin, x0, y, x0+pw, y)
			}
			// Separators: after the baseline and between configurations...
			for ri := 1; ri < len(t.Rows); ri++ {
				if ri == 1 || t.Rows[ri].Configuration != t.Rows[ri-1].Configuration {
					y := y0 - cellH*vg.Length(ri)
					dc.StrokeLine2(sep, x0, y, x0+pw, y)
				}
			}
			// ...and after Avg and between functionality classes.
			for ci, k := range order {
				if ci == 0 || fs[k].Class != fs[order[ci-1]].Class {
					x := x0 + cellW*vg.Length(1+ci)
					dc.StrokeLine2(sep, x, y0-panelH, x, y0)
				}
			}
			// x tick labels: Avg, then the functionalities' numbers coloured
			// by test type; names under the bottom panel.
			ty := y0 - panelH - tickH/2
			dc.FillText(txt(fontSize-2, color.Black, draw.XCenter, draw.YCenter), vg.Point{X: x0 + cellW/2, Y: ty}, "Avg")
			for ci, k := range order {
				c := typeColour(fs[k].Type)
				x := x0 + cellW*vg.Length(ci+1) + cellW/2
				if si == len(scores)-1 {
					dc.FillText(nameStyle(c), vg.Point{X: x, Y: y0 - panelH - 2}, columnName(k+1, fs[k]))
				} else {
					dc.FillText(txt(fontSize-2.5, c, draw.XCenter, draw.YCenter), vg.Point{X: x, Y: ty}, fmt.Sprint(k+1))
				}
			}
		}
		x0 += pw + panelGap
	}
	// One shared colour bar, drawn as rectangles (gonum/plot's own colour bar
	// is flipped in PDF and has the wrong image type in SVG).
	bx := x0
	btop := height - figureInset - titleH
	bbot := btop - vg.Length(len(scores)-1)*bandH(cellH) - cellH*nrows
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

func typeColour(typ string) color.Color {
	if c := typeColours[typ]; c != nil {
		return c
	}
	return color.Black
}

// columnName is a functionality's label under the bottom panel: its number
// in the suite and its name, shortened to nameMax characters.
func columnName(n int, f Functionality) string {
	name := ascii(f.Name)
	if len(name) > nameMax {
		name = name[:nameMax-3] + "..."
	}
	return fmt.Sprintf("%d  %s", n, name)
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
