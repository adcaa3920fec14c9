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
	"github.com/beluga-nlp/beluga/suites"
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

// HeatmapOptions lay the figure out for a page.
type HeatmapOptions struct {
	// Width is the figure's width in inches; 0 means PaperWidth. Labels keep
	// their point sizes at every width: a narrower figure gets narrower
	// cells, and panels that no longer fit side by side are stacked.
	Width float64
}

// PaperWidth is the text width of a one-column paper page (US letter or A4
// with one-inch margins), the width a figure is printed at.
const PaperWidth = 6.5

// Heatmap sizes, in points. No text is smaller than minText, the smallest
// size a printed figure is read at.
const (
	minText     = vg.Length(7)
	labelSize   = vg.Length(8) // row labels
	titleSize   = vg.Length(9) // panel titles
	minCellW    = vg.Length(9) // a two-digit column number at minText fits
	maxCellW    = vg.Length(18)
	cellH       = vg.Length(10)
	panelGap    = vg.Length(10)
	titleH      = vg.Length(13)
	tickH       = vg.Length(10)
	barW        = vg.Length(8)
	figureInset = vg.Length(4)
	keyGap      = vg.Length(8)
	keyColW     = vg.Length(150) // the narrowest column of the key
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
			if slices.ContainsFunc(t.Tasks, func(task string) bool { return !math.IsNaN(r.Cell(SuiteKey(task, s, "")).Value) }) {
				out = append(out, s)
				break
			}
		}
	}
	if len(out) == 0 {
		return t.Scores
	}
	// A metadata score's row of panels is followed by one per held-out
	// group (its fold's pass rates).
	var withGroups []string
	for _, s := range out {
		withGroups = append(withGroups, s)
		if !experiments.IsMetaScore(s) {
			continue // func, class and type folds are the panel's own columns
		}
		var groups []string
		for _, task := range t.Tasks {
			for _, g := range t.Groups[task][s] {
				if !slices.Contains(groups, g) {
					groups = append(groups, g)
				}
			}
		}
		for _, g := range groups {
			withGroups = append(withGroups, groupFigureScore(s, g))
		}
	}
	return withGroups
}

// groupFigureScore names the figure row of one held-out group of a
// metadata score, "meta:target_ident=women".
func groupFigureScore(score, group string) string { return score + "=" + group }

// figureValues returns what a row's panel of a figure row shows: the
// suite score (the Avg cell) and the pass rates of score, or of one group
// of a metadata score (groupFigureScore).
func (t *Table) figureValues(r *Row, task, score string) (float64, []float64) {
	if slices.Contains(t.Scores, score) {
		return r.Cell(SuiteKey(task, score, "")).Value, t.PassRates(r, task, score, "")
	}
	for s, groups := range t.Groups[task] {
		for _, g := range groups {
			if groupFigureScore(s, g) == score {
				return r.Cell(SuiteKey(task, s, g)).Value, t.PassRates(r, task, s, g)
			}
		}
	}
	return math.NaN(), nil
}

// heatmapLayout places Figure 1's parts on a page of a given width.
type heatmapLayout struct {
	width, height vg.Length
	left          vg.Length     // where the row labels start: the panels are centred
	labelW        vg.Length     // row labels
	cellW         vg.Length     // every cell
	bands         [][]panelPart // panels drawn side by side, band by band
	scores        []string      // one row of panels per score in each band
	key           []keyLine     // the column key, laid out
	keyH          vg.Length     // its height
	legendH       vg.Length     // the test-type legend's height
	barX          vg.Length     // the colour bar's left edge
	style         func(vg.Length, color.Color, text.XAlignment) draw.TextStyle
	smallest      vg.Length // the smallest text drawn
}

// keyLine is one line of the key: its text, colour and place.
type keyLine struct {
	text string
	c    color.Color
	x, y vg.Length // from the key's top left
	bold bool
}

func (t *Table) layoutHeatmap(widthIn float64) (*heatmapLayout, error) {
	if widthIn == 0 {
		widthIn = PaperWidth
	}
	if widthIn < 2 || widthIn > 40 || math.IsNaN(widthIn) {
		return nil, fmt.Errorf("heatmap: width %.3g in is outside 2–40 in", widthIn)
	}
	l := &heatmapLayout{width: vg.Length(widthIn) * vg.Inch, smallest: vg.Length(math.Inf(1))}
	l.style = func(size vg.Length, c color.Color, xa text.XAlignment) draw.TextStyle {
		l.smallest = min(l.smallest, size)
		return text.Style{Color: c, Font: font.From(plot.DefaultFont, size), XAlign: xa, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	}
	label := l.style(labelSize, color.Black, draw.XRight)
	for i := range t.Rows {
		l.labelW = max(l.labelW, label.Width(ascii(rowLabel(t, i))))
	}
	l.labelW += 6
	barBlock := barW + 4 + l.style(minText, color.Black, draw.XLeft).Width("100") + 2
	avail := l.width - 2*figureInset - l.labelW - barBlock - panelGap
	l.bands = t.panelBands(avail)
	if l.bands == nil {
		return nil, fmt.Errorf("heatmap: %.2g in leaves no room for the panels; give a larger width", widthIn)
	}
	l.cellW = maxCellW
	for _, band := range l.bands {
		l.cellW = min(l.cellW, (avail-bandGaps(band))/vg.Length(bandColumns(band)))
	}
	// Panels narrower than the page are centred on it.
	widest := vg.Length(0)
	for _, band := range l.bands {
		widest = max(widest, bandGaps(band)+l.cellW*vg.Length(bandColumns(band)))
	}
	l.left = figureInset + (avail-widest)/2
	l.scores = t.figureScores()
	l.layoutKey(t)
	bandH := vg.Length(len(l.scores)) * (titleH + cellH*vg.Length(len(t.Rows)) + tickH + panelGap)
	l.height = 2*figureInset + vg.Length(len(l.bands))*bandH + l.legendH + l.keyH
	return l, nil
}

// panelPart is one panel: a task's columns, or a run of them when the task
// has more functionalities than the page has room for.
type panelPart struct {
	task  string
	first bool  // the task's first part: it carries Avg
	cols  []int // positions in the task's figure order
}

func (p panelPart) width() int {
	if p.first {
		return 1 + len(p.cols)
	}
	return len(p.cols)
}

func bandColumns(band []panelPart) int {
	n := 0
	for _, p := range band {
		n += p.width()
	}
	return n
}

func bandGaps(band []panelPart) vg.Length { return panelGap * vg.Length(len(band)-1) }

// panelBands arranges the panels in avail points: every task side by side
// while each cell stays wide enough for a column number at minText, else a
// band per task, and a task too wide for one band is cut into the fewest
// parts of near-equal width that fit. It returns nil when not even one
// column fits.
func (t *Table) panelBands(avail vg.Length) [][]panelPart {
	whole := make([]panelPart, len(t.Tasks))
	for i, task := range t.Tasks {
		whole[i] = panelPart{task: task, first: true, cols: t.figureOrder(task)}
	}
	if (avail-bandGaps(whole))/vg.Length(bandColumns(whole)) >= minCellW {
		return [][]panelPart{whole}
	}
	fit := int(avail / minCellW)
	if fit < 2 {
		return nil
	}
	var bands [][]panelPart
	for _, p := range whole {
		n := p.width()
		parts := (n + fit - 1) / fit
		per := (n + parts - 1) / parts
		for i := 0; i < parts; i++ {
			lo, hi := max(0, i*per-1), min(len(p.cols), (i+1)*per-1) // Avg takes the first part's first column
			if i == 0 {
				lo = 0
			}
			bands = append(bands, []panelPart{{task: p.task, first: i == 0, cols: p.cols[lo:hi]}})
		}
	}
	return bands
}

// layoutKey writes the key to the column numbers: per task, "n  name" in
// columns across the page, long names wrapped rather than cut, coloured by
// test type; above it a legend of the test-type colours.
func (l *heatmapLayout) layoutKey(t *Table) {
	st := l.style(minText, color.Black, draw.XLeft)
	lineH := minText * 1.25
	l.legendH = lineH + 4
	full := l.width - 2*figureInset
	ncol := max(1, int(full/keyColW))
	colW := full / vg.Length(ncol)
	y := vg.Length(0)
	for _, task := range t.Tasks {
		fs := t.Functionalities[task]
		order := t.figureOrder(task)
		if len(t.Tasks) > 1 {
			l.key = append(l.key, keyLine{text: ascii(task), c: color.Black, y: y, bold: true})
			y += lineH
		}
		// Entries fill the columns top to bottom, as a reader scans them.
		type entry struct{ lines []string }
		entries := make([]entry, len(order))
		total := 0
		numW := st.Width(fmt.Sprint(len(fs))+"  ") + 1
		for ci, k := range order {
			entries[ci].lines = wrapText(st, ascii(fs[k].Name), colW-numW-6)
			total += len(entries[ci].lines)
		}
		perCol := (total + ncol - 1) / ncol
		col, used, colTop := 0, 0, y
		bottom := y
		for ci, k := range order {
			n := len(entries[ci].lines)
			if used > 0 && used+n > perCol && col < ncol-1 {
				col, used = col+1, 0
			}
			x := colW * vg.Length(col)
			c := typeColour(fs[k].Type)
			for j, line := range entries[ci].lines {
				ly := colTop + lineH*vg.Length(used+j)
				if j == 0 {
					l.key = append(l.key, keyLine{text: fmt.Sprint(k + 1), c: c, x: x, y: ly})
				}
				l.key = append(l.key, keyLine{text: line, c: c, x: x + numW, y: ly})
			}
			used += n
			bottom = max(bottom, colTop+lineH*vg.Length(used))
		}
		y = bottom + lineH/2
	}
	l.keyH = y + keyGap
}

// wrapText breaks s into lines no wider than w at spaces; a word wider
// than w stands on a line of its own.
func wrapText(st draw.TextStyle, s string, w vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		try := word
		if line != "" {
			try = line + " " + word
		}
		if line != "" && st.Width(try) > w {
			lines = append(lines, line)
			line = word
			continue
		}
		line = try
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// WriteHeatmap draws Figure 1 laid out for a page of opt.Width inches
// (PaperWidth by default). Panels form a grid: one column per task (tasks
// that do not fit side by side are stacked), one row per score (seen,
// func, class, type; a score no row has is left out). In each panel the
// rows are the IID baseline and every configuration × method, the columns
// the suite score (Avg) and then every functionality's pass rate, coloured
// 0–100 on one shared colour bar. Columns are numbered by the
// functionality's place in the suite, the numbers coloured by test type
// (MFT blue, INV red, DIR green); under the panels a legend gives the
// colours and a key gives every number's full name, wrapped, never cut.
// Lines separate the baseline and the configurations, and the
// functionality classes. QQP's columns 8 and 11 are swapped as in BeLUGA.
// No text is smaller than 7 pt. format is png, svg or pdf. Labels are kept
// ASCII, which PDF's standard fonts need.
func (t *Table) WriteHeatmap(w io.Writer, format string, opt HeatmapOptions) error {
	if len(t.Rows) == 0 || len(t.Tasks) == 0 {
		return fmt.Errorf("heatmap: empty table")
	}
	l, err := t.layoutHeatmap(opt.Width)
	if err != nil {
		return err
	}
	var cw vg.CanvasWriterTo
	if format == "png" {
		// 300 dpi: print resolution.
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(l.width, l.height), vgimg.UseDPI(300))}
	} else {
		if cw, err = draw.NewFormattedCanvas(l.width, l.height, format); err != nil {
			return fmt.Errorf("heatmap: %w", err)
		}
	}
	l.draw(draw.New(cw), t)
	_, err = cw.WriteTo(w)
	return err
}

func (l *heatmapLayout) draw(dc draw.Canvas, t *Table) {
	dc.FillPolygon(color.White, rect(0, 0, l.width, l.height))
	thin := draw.LineStyle{Color: color.White, Width: 0.5}
	sep := draw.LineStyle{Color: color.RGBA{0, 0, 0xff, 0xff}, Width: 0.7}
	label := l.style(labelSize, color.Black, draw.XRight)
	nrows := vg.Length(len(t.Rows))
	panelH := cellH * nrows
	scoreH := titleH + panelH + tickH + panelGap
	top := l.height - figureInset
	barTop, barBottom := top-titleH, vg.Length(0)
	for _, band := range l.bands {
		for si, score := range l.scores {
			ptop := top - vg.Length(si)*scoreH
			y0 := ptop - titleH // top of the cells
			x0 := l.left + l.labelW
			for _, part := range band {
				l.panel(dc, t, part, score, x0, ptop, y0, thin, sep)
				x0 += l.cellW*vg.Length(part.width()) + panelGap
			}
			for ri := range t.Rows {
				dc.FillText(label, vg.Point{X: l.left + l.labelW - 3, Y: y0 - cellH*vg.Length(ri) - cellH/2}, ascii(rowLabel(t, ri)))
			}
			barBottom = y0 - panelH
			l.barX = max(l.barX, x0)
		}
		top -= vg.Length(len(l.scores)) * scoreH
	}
	l.colourBar(dc, barTop, barBottom)

	// The legend of the test types, then the key.
	st := func(c color.Color) draw.TextStyle { return l.style(minText, c, draw.XLeft) }
	y := top - minText
	x := figureInset
	dc.FillText(st(color.Black), vg.Point{X: x, Y: y}, "Column numbers by test type:")
	x += st(color.Black).Width("Column numbers by test type:") + 6
	for _, tt := range suites.TestTypes() {
		if !t.hasType(string(tt)) {
			continue
		}
		c, legend := typeColour(string(tt)), tt.Spec().Legend
		dc.FillPolygon(c, rect(x, y-minText/2+1, x+minText-2, y+minText/2-1))
		x += minText + 1
		dc.FillText(st(c), vg.Point{X: x, Y: y}, legend)
		x += st(c).Width(legend) + 10
	}
	keyTop := top - l.legendH
	for _, k := range l.key {
		s := st(k.c)
		if k.bold {
			s = l.style(labelSize, k.c, draw.XLeft)
		}
		dc.FillText(s, vg.Point{X: figureInset + k.x, Y: keyTop - k.y - minText*0.6}, k.text)
	}
}

// panel draws one panel (a task, or part of one) for one score.
func (l *heatmapLayout) panel(dc draw.Canvas, t *Table, part panelPart, score string, x0, ptop, y0 vg.Length, thin, sep draw.LineStyle) {
	fs := t.Functionalities[part.task]
	cw := l.cellW
	pw := cw * vg.Length(part.width())
	panelH := cellH * vg.Length(len(t.Rows))
	title := fmt.Sprintf("%s: %s", part.task, scoreTitle(score))
	if !part.first {
		title += " (cont.)"
	}
	// Centred over the panel; one wider than its panel (few
	// functionalities, a long group name) ends at the panel's right edge,
	// not under the colour bar, and runs left into the free space above the
	// row labels.
	ts := l.style(titleSize, color.Black, draw.XCenter)
	tx := x0 + pw/2
	if tw := ts.Width(ascii(title)); tw > pw {
		tx = max(x0+pw-tw/2, figureInset+tw/2)
	}
	dc.FillText(ts, vg.Point{X: tx, Y: ptop - titleH/2}, ascii(title))
	// Column c of the panel: Avg first in a task's first part.
	colX := x0
	if part.first {
		colX += cw
	}
	for ri, r := range t.Rows {
		y := y0 - cellH*vg.Length(ri+1)
		suite, rates := t.figureValues(r, part.task, score)
		if part.first {
			dc.FillPolygon(Rocket(suite/100), rect(x0, y, x0+cw, y+cellH))
		}
		for ci, k := range part.cols {
			v := math.NaN()
			if k < len(rates) {
				v = rates[k]
			}
			x := colX + cw*vg.Length(ci)
			dc.FillPolygon(Rocket(v/100), rect(x, y, x+cw, y+cellH))
		}
	}
	// White grid lines between cells, as seaborn's linewidths.
	for ci := 1; ci < part.width(); ci++ {
		x := x0 + cw*vg.Length(ci)
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
	for ci, k := range part.cols {
		if ci == 0 && !part.first {
			continue
		}
		if ci == 0 || fs[k].Class != fs[part.cols[ci-1]].Class {
			x := colX + cw*vg.Length(ci)
			dc.StrokeLine2(sep, x, y0-panelH, x, y0)
		}
	}
	// Column labels: Avg (rotated when the cell is too narrow for it), then
	// the functionalities' numbers coloured by test type.
	ty := y0 - panelH - tickH/2
	if part.first {
		avg := l.style(minText, color.Black, draw.XCenter)
		if avg.Width("Avg") > cw+2 {
			avg.XAlign, avg.Rotation = draw.XRight, math.Pi/2
			dc.FillText(avg, vg.Point{X: x0 + cw/2, Y: y0 - panelH - 1}, "Avg")
		} else {
			dc.FillText(avg, vg.Point{X: x0 + cw/2, Y: ty}, "Avg")
		}
	}
	for ci, k := range part.cols {
		x := colX + cw*vg.Length(ci) + cw/2
		dc.FillText(l.style(minText, typeColour(fs[k].Type), draw.XCenter), vg.Point{X: x, Y: ty}, fmt.Sprint(k+1))
	}
}

// colourBar draws the one shared colour bar as rectangles (gonum/plot's own
// colour bar is flipped in PDF and has the wrong image type in SVG).
func (l *heatmapLayout) colourBar(dc draw.Canvas, top, bottom vg.Length) {
	bx := l.barX
	const steps = 100
	for i := 0; i < steps; i++ {
		ya := bottom + (top-bottom)*vg.Length(i)/steps
		yb := bottom + (top-bottom)*vg.Length(i+1)/steps
		dc.FillPolygon(Rocket((float64(i)+0.5)/steps), rect(bx, ya, bx+barW, yb+0.3))
	}
	tick := l.style(minText, color.Black, draw.XLeft)
	for v := 0; v <= 100; v += 20 {
		y := bottom + (top-bottom)*vg.Length(v)/100
		dc.StrokeLine2(draw.LineStyle{Color: color.Black, Width: 0.5}, bx+barW, y, bx+barW+2, y)
		dc.FillText(tick, vg.Point{X: bx + barW + 3, Y: y}, fmt.Sprint(v))
	}
}

// hasType reports whether some functionality of the table is of type typ:
// the legend names only the types the figure shows.
func (t *Table) hasType(typ string) bool {
	for _, task := range t.Tasks {
		for _, f := range t.Functionalities[task] {
			if f.Type == typ {
				return true
			}
		}
	}
	return false
}

func typeColour(typ string) color.Color {
	if tt := suites.TestType(typ); tt.Registered() {
		return tt.Spec().Colour
	}
	return color.Black
}

// rowLabel is Figure 1's y label: "Config: Method" on the first row of a
// configuration block, the method alone below it.
func rowLabel(t *Table, i int) string {
	r := t.Rows[i]
	if i == 0 || r.Configuration != t.Rows[i-1].Configuration {
		return r.Label()
	}
	return r.methodLabel()
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
func (t *Table) WriteHeatmapFile(path string, opt HeatmapOptions) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch format {
	case "png", "svg", "pdf":
	default:
		return fmt.Errorf("heatmap %s: unknown format %q (want .png, .svg or .pdf)", path, format)
	}
	return atomicfile.Write(path, func(w io.Writer) error { return t.WriteHeatmap(w, format, opt) })
}
