package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/internal/csvcell"
)

// LearningCurve is one line of a learning-curve figure and table: a task ×
// configuration × method (× any other axis) at each training size
// (experiments.TrainSizeKey) it was trained with. It is a view of the
// table's cells: a point is the cell of the row trained at that size.
type LearningCurve struct {
	Task, Configuration, Method string
	// Axes are the line's other axes' values (a method setting), or empty.
	Axes string
	// Points are its cells by training size in increasing order, one per
	// measure: Points[m][i] is measure m (LearningCurveMeasures) at the
	// i-th size.
	Points map[string][]CurvePointStats
}

// CurvePointStats is one training size's value over the replicates (seeds
// and other grid points) trained with it.
type CurvePointStats struct {
	Size float64
	// Mean is the cell's value (the mean over replicates), SE its standard
	// error, Min and Max the lowest and highest replicate, N how many.
	Mean, SE, Min, Max float64
	N                  int
	// P is the p-value against the table's baseline row (NaN: untested).
	P float64
	// Marks are the cell's footnote marks: sanity flags of its runs (†, ‡:
	// a seed predicts one class, or never learnt the suite) and
	// MarkTrivial (not above a constant predictor on the same cases).
	Marks string
	// Flagged is how many of its runs have sanity flags.
	Flagged int
	// Mark is +1 (−1) when the value is significantly above (below) the
	// baseline row's, as Table 3's ↑ and ↓.
	Mark int
}

// Label names the line as the table names its row: "SENT IID+T: Vanilla".
func (c LearningCurve) Label() string {
	r := Row{Configuration: c.Configuration, Method: c.Method, Axes: c.Axes}
	return c.Task + " " + r.Label()
}

// CurveSuite is the learning curves' measure of the seen suite score (the
// mean T_test pass rate over functionalities); the others are the i.i.d.
// metrics ("accuracy", and those the task declares).
const CurveSuite = "suite"

// measureKey is the cell of a curve's measure.
func measureKey(task, measure string) CellKey {
	switch measure {
	case CurveSuite:
		return SuiteKey(task, experiments.ScoreSeen, "")
	case "accuracy":
		return IIDKey(task)
	}
	return MetricKey(task, measure)
}

// CurveMeasures lists a task's measures: accuracy and its declared
// metrics (when it has i.i.d. data), then the suite score.
func (t *Table) CurveMeasures(task string) []string {
	var out []string
	if t.hasIID(task) {
		out = append(out, "accuracy")
		out = append(out, t.Metrics[task]...)
	}
	return append(out, CurveSuite)
}

// measureTitle names a measure in tables and figures.
func measureTitle(m string) string {
	switch m {
	case CurveSuite:
		return "suite score (seen)"
	case "accuracy":
		return "i.i.d. accuracy"
	}
	return "i.i.d. " + m
}

// LearningCurves collects the table's learning curves: its rows trained at
// a training size, one line per task × configuration × method (and other
// axes), a point per size. Sizes given as fractions and as counts do not
// share an axis, so a mix is refused.
func (t *Table) LearningCurves() ([]LearningCurve, error) {
	type at struct {
		row  *Row
		size float64
	}
	byLine := map[string]*LearningCurve{}
	rows := map[string][]at{}
	var order []string
	kinds := map[bool]bool{}
	for _, r := range t.Rows {
		if r.Reference {
			continue
		}
		axes := rowAxes(r)
		v, ok := axes[experiments.TrainSizeKey]
		if !ok {
			continue
		}
		size, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("row %s: %s %q is not a number", r.Label(), experiments.TrainSizeKey, v)
		}
		kinds[size >= 1] = true
		var other []string
		for _, a := range strings.Fields(r.Axes) {
			if !strings.HasPrefix(a, experiments.TrainSizeKey+"=") {
				other = append(other, a)
			}
		}
		for _, task := range t.Tasks {
			line := LearningCurve{Task: task, Configuration: r.Configuration, Method: r.Method, Axes: strings.Join(other, " "), Points: map[string][]CurvePointStats{}}
			key := line.Label()
			if byLine[key] == nil {
				byLine[key] = &line
				order = append(order, key)
			}
			rows[key] = append(rows[key], at{r, size})
		}
	}
	if len(kinds) > 1 {
		return nil, fmt.Errorf("%s mixes counts and fractions: a learning curve needs one", experiments.TrainSizeKey)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no finished runs swept over %s: a learning curve needs the grid key %s", experiments.TrainSizeKey, experiments.TrainSizeKey)
	}
	var out []LearningCurve
	for _, key := range order {
		line := byLine[key]
		pts := rows[key]
		slices.SortStableFunc(pts, func(a, b at) int { return cmpFloat(a.size, b.size) })
		for _, m := range t.CurveMeasures(line.Task) {
			for _, p := range pts {
				line.Points[m] = append(line.Points[m], t.pointOf(p.row, measureKey(line.Task, m), p.size))
			}
		}
		out = append(out, *line)
	}
	return out, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pointOf is a row's cell as a curve's point.
func (t *Table) pointOf(r *Row, k CellKey, size float64) CurvePointStats {
	c := r.Cell(k)
	p := CurvePointStats{Size: size, Mean: c.Value, SE: c.SE(), Min: math.NaN(), Max: math.NaN(), P: c.P, Marks: cellMarks(r, c),
		Mark: t.mark(Column{Key: k}, c)}
	for _, v := range c.Reps {
		if math.IsNaN(v) {
			continue
		}
		if p.N == 0 || v < p.Min {
			p.Min = v
		}
		if p.N == 0 || v > p.Max {
			p.Max = v
		}
		p.N++
	}
	if p.N == 0 && !math.IsNaN(c.Value) {
		p.N, p.Min, p.Max = 1, c.Value, c.Value
	}
	var runs []string
	for _, f := range c.Flags {
		if !slices.Contains(runs, f.Run) {
			runs = append(runs, f.Run)
		}
	}
	p.Flagged = len(runs)
	return p
}

// curveReference is the majority class's value of a task's measure.
func (t *Table) curveReference(task, measure string) (float64, string) {
	for _, r := range t.refs {
		if r.Method == MethodMajority {
			return r.Cell(measureKey(task, measure)).Value, "majority class"
		}
	}
	return math.NaN(), ""
}

// curveReferences are the constant predictors a table's line of a task's
// measure is compared with: the majority class, and the best one-label
// predictor when it does better (a constant prediction passes every INV
// test of a suite, so on a suite score it often does).
func (t *Table) curveReferences(task, measure string) (values []float64, names []string) {
	v, by := t.curveReference(task, measure)
	if !math.IsNaN(v) {
		values, names = append(values, v), append(names, by)
	}
	best, bestBy := math.NaN(), ""
	for _, r := range t.refs {
		if x := r.Cell(measureKey(task, measure)).Value; !math.IsNaN(x) && (math.IsNaN(best) || x > best) {
			best, bestBy = x, r.Method
		}
	}
	if !math.IsNaN(best) && (math.IsNaN(v) || num(best) != num(v)) && (len(values) == 0 || best > v) {
		values, names = append(values, best), append(names, bestBy)
	}
	return values, names
}

// WriteLearningCurveMarkdown writes the learning curves as a table: a
// column per training size, a line per curve and measure (the i.i.d.
// accuracy and every metric the task declares, the suite score), each
// cell mean ± standard error over seeds, marked as Table 3's cells are (†
// ‡ flagged runs, § not above a constant predictor, ↑ ↓ significantly
// above or below the baseline row), then the majority class's values.
func (t *Table) WriteLearningCurveMarkdown(w io.Writer) error {
	curves, err := t.LearningCurves()
	if err != nil {
		return err
	}
	sizes := curveSizes(curves)
	var b strings.Builder
	b.WriteString("| training examples |")
	for _, s := range sizes {
		b.WriteString(" " + sizeLabel(s) + " |")
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---:|", len(sizes)))
	b.WriteString("\n")
	var tasks []string
	for _, c := range curves {
		if !slices.Contains(tasks, c.Task) {
			tasks = append(tasks, c.Task)
		}
	}
	for _, task := range tasks {
		for _, m := range t.CurveMeasures(task) {
			for _, c := range curves {
				if c.Task != task {
					continue
				}
				label := c.Configuration + ": " + methodName(c.Method)
				if c.Axes != "" {
					label += " (" + c.Axes + ")"
				}
				if len(tasks) > 1 {
					label = task + " " + label
				}
				fmt.Fprintf(&b, "| %s: %s |", label, measureTitle(m))
				for _, s := range sizes {
					b.WriteString(" " + curveCell(c.Points[m], s, t.seeds()) + " |")
				}
				b.WriteString("\n")
			}
			vs, bys := t.curveReferences(task, m)
			for i, v := range vs {
				fmt.Fprintf(&b, "| %s: %s |", bys[i], measureTitle(m))
				for range sizes {
					b.WriteString(" " + num(v) + " |")
				}
				b.WriteString("\n")
			}
		}
	}
	for _, n := range t.curveNotes(curves) {
		b.WriteString("\n" + n + "\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func curveCell(pts []CurvePointStats, size float64, seeds bool) string {
	for _, p := range pts {
		if p.Size != size {
			continue
		}
		s := num(p.Mean)
		if s == "" {
			return "–"
		}
		s += p.Marks
		if seeds {
			s += " ± " + dash(num(p.SE))
		}
		switch p.Mark {
		case 1:
			s += " ↑"
		case -1:
			s += " ↓"
		}
		return s
	}
	return "–"
}

func curveSizes(curves []LearningCurve) []float64 {
	var sizes []float64
	for _, c := range curves {
		for _, pts := range c.Points {
			for _, p := range pts {
				if !slices.Contains(sizes, p.Size) {
					sizes = append(sizes, p.Size)
				}
			}
		}
	}
	slices.Sort(sizes)
	return sizes
}

// sizeLabel writes a count with thousands separators, a fraction as it is.
func sizeLabel(s float64) string {
	if s < 1 {
		return strconv.FormatFloat(s, 'g', -1, 64)
	}
	d := strconv.FormatFloat(s, 'f', 0, 64)
	for i := len(d) - 3; i > 0; i -= 3 {
		d = d[:i] + "," + d[i:]
	}
	return d
}

// curveNotes explains a learning-curve table's marks and what it is tested
// against.
func (t *Table) curveNotes(curves []LearningCurve) []string {
	var out []string
	marks := ""
	for _, c := range curves {
		for _, pts := range c.Points {
			for _, p := range pts {
				marks += p.Marks
			}
		}
	}
	if t.seeds() {
		out = append(out, fmt.Sprintf("Mean ± standard error over %d replicates (%s).", len(t.Replicates), strings.Join(t.Replicates, ", ")))
	}
	if strings.Contains(marks, MarkConstant) || strings.Contains(marks, MarkNotLearnt) {
		out = append(out, MarkConstant+" "+MarkNotLearnt+" some run behind the value predicts (nearly) one class, or never learnt the suite (Table 3's footnotes name them).")
	}
	if strings.Contains(marks, MarkTrivial) {
		out = append(out, MarkTrivial+" not above the best constant predictor on the same data (its line is below each measure's; predicting one class passes every INV test of a suite).")
	}
	if base := t.Baseline(); base != nil {
		out = append(out, "↑ ↓ significantly (p < 0.05) above or below the baseline row, "+rowRefOf(base)+" (McNemar's exact test for accuracy, approximate randomisation for the suite score; declared metrics are not tested).")
	} else {
		out = append(out, "No baseline row: nothing is tested.")
	}
	return out
}

// WriteLearningCurveCSV writes the learning curves' points, full
// precision, one line per curve, measure and size: the mean over
// replicates, its standard error, the number of replicates, their minimum
// and maximum, the p-value against the baseline row, and the marks.
func (t *Table) WriteLearningCurveCSV(w io.Writer) error {
	curves, err := t.LearningCurves()
	if err != nil {
		return err
	}
	cw := csvcell.NewWriter(w)
	cw.Write([]string{"task", "config", "method", "axes", "measure", experiments.TrainSizeKey, "mean", "se", "n", "min", "max", "p", "marks"})
	for _, c := range curves {
		for _, m := range t.CurveMeasures(c.Task) {
			for _, p := range c.Points[m] {
				cw.Write([]string{c.Task, c.Configuration, c.Method, c.Axes, m, strconv.FormatFloat(p.Size, 'g', -1, 64),
					csvNum(p.Mean), csvNum(p.SE), strconv.Itoa(p.N), csvNum(p.Min), csvNum(p.Max), csvNum(p.P), p.Marks})
			}
			if c.Configuration == curves[0].Configuration && c.Method == curves[0].Method && c.Axes == curves[0].Axes {
				vs, bys := t.curveReferences(c.Task, m)
				for i, v := range vs {
					cw.Write([]string{c.Task, ConfigBaseline, bys[i], "", m, "", csvNum(v), "", "", "", "", "", ""})
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteLearningCurvePlot draws the curves: the i.i.d. metric (left;
// accuracy or a metric the task declares) and the suite score (right)
// against the training size on a log scale, one line per curve through
// the mean over replicates with a band from their minimum to their
// maximum. A point some run behind which has sanity flags (a seed that
// predicts one class) is circled in black, one not above a constant
// predictor drawn hollow; the majority class's value is a dashed grey
// line. format is png, svg or pdf.
func (t *Table) WriteLearningCurvePlot(w io.Writer, metric, title, format string) error {
	curves, err := t.LearningCurves()
	if err != nil {
		return err
	}
	if metric == "" {
		metric = "accuracy"
	}
	for _, c := range curves {
		if t.hasIID(c.Task) && !slices.Contains(t.CurveMeasures(c.Task), metric) {
			return fmt.Errorf("task %s has no i.i.d. metric %q (it has %s)", c.Task, metric, strings.Join(t.CurveMeasures(c.Task)[:len(t.CurveMeasures(c.Task))-1], ", "))
		}
	}
	palette := []color.RGBA{
		{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
		{0xff, 0x7f, 0x0e, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
	}
	sizes := curveSizes(curves)
	var ticks []plot.Tick
	for _, s := range sizes {
		ticks = append(ticks, plot.Tick{Value: s, Label: strconv.FormatFloat(s, 'g', -1, 64)})
	}
	anyFlagged, anyTrivial := false, false
	// The legend is drawn under the panels, where it hides no point: the
	// lines and reference lines on the left, the point marks on the right.
	lines, marks := plot.NewLegend(), plot.NewLegend()
	nLines, nMarks := 0, 0
	panel := func(name, measure string, legend bool) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = ascii(name)
		p.X.Label.Text = "training examples"
		if len(sizes) > 0 && sizes[len(sizes)-1] < 1 {
			p.X.Label.Text = "fraction of the training examples"
		}
		p.Y.Label.Text = "percent"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		var tasks []string
		for i, c := range curves {
			col := palette[i%len(palette)]
			pts := c.Points[measure]
			var line, band, hollow, flagged plotter.XYs
			for _, q := range pts {
				if q.N == 0 || math.IsNaN(q.Mean) {
					continue
				}
				line = append(line, plotter.XY{X: q.Size, Y: q.Mean})
				band = append(band, plotter.XY{X: q.Size, Y: q.Max})
				if strings.Contains(q.Marks, MarkTrivial) {
					hollow = append(hollow, plotter.XY{X: q.Size, Y: q.Mean})
				}
				if q.Flagged > 0 {
					flagged = append(flagged, plotter.XY{X: q.Size, Y: q.Mean})
				}
			}
			if len(line) == 0 {
				continue
			}
			if !slices.Contains(tasks, c.Task) {
				tasks = append(tasks, c.Task)
			}
			for j := len(pts) - 1; j >= 0; j-- {
				if pts[j].N > 0 && !math.IsNaN(pts[j].Mean) {
					band = append(band, plotter.XY{X: pts[j].Size, Y: pts[j].Min})
				}
			}
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, fmt.Errorf("learning curve: %w", err)
			}
			poly.Color = color.NRGBA{R: col.R, G: col.G, B: col.B, A: 0x40}
			poly.LineStyle.Width = 0
			l, s, err := plotter.NewLinePoints(line)
			if err != nil {
				return nil, fmt.Errorf("learning curve: %w", err)
			}
			l.Color, l.Width = col, vg.Points(1.2)
			s.Color, s.Shape = col, draw.CircleGlyph{}
			p.Add(poly, l, s)
			if legend {
				lines.Add(ascii(c.Label()), l, s)
				nLines++
			}
			if len(hollow) > 0 {
				h, _ := plotter.NewScatter(hollow)
				h.Color, h.Shape, h.Radius = color.White, draw.CircleGlyph{}, vg.Points(1.6)
				p.Add(h)
				anyTrivial = true
			}
			if len(flagged) > 0 {
				f, _ := plotter.NewScatter(flagged)
				f.Color, f.Shape, f.Radius = color.Black, draw.RingGlyph{}, vg.Points(5)
				p.Add(f)
				anyFlagged = true
			}
		}
		for _, task := range tasks {
			v, by := t.curveReference(task, measure)
			if math.IsNaN(v) || len(sizes) == 0 {
				continue
			}
			ref, err := plotter.NewLine(plotter.XYs{{X: sizes[0], Y: v}, {X: sizes[len(sizes)-1], Y: v}})
			if err != nil {
				return nil, fmt.Errorf("learning curve: %w", err)
			}
			ref.Color, ref.Width, ref.Dashes = color.Gray{Y: 0x70}, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(ref)
			if legend {
				label := by
				if len(tasks) > 1 {
					label = task + " " + by
				}
				lines.Add(ascii(label), ref)
				nLines++
			}
		}
		return p, nil
	}
	iid, err := panel("i.i.d. test "+strings.TrimPrefix(measureTitle(metric), "i.i.d. "), metric, true)
	if err != nil {
		return err
	}
	suite, err := panel("suite score (seen)", CurveSuite, false)
	if err != nil {
		return err
	}
	if anyFlagged {
		ring, _ := plotter.NewScatter(plotter.XYs{{}})
		ring.Color, ring.Shape, ring.Radius = color.Black, draw.RingGlyph{}, vg.Points(5)
		marks.Add("ringed: a run behind the point predicts one class", ring)
		nMarks++
	}
	if anyTrivial {
		h, _ := plotter.NewScatter(plotter.XYs{{}})
		h.Color, h.Shape, h.Radius = color.Gray{Y: 0x90}, draw.RingGlyph{}, vg.Points(2.5)
		marks.Add("hollow: not above a constant predictor", h)
		nMarks++
	}
	rowsH := vg.Length(max(nLines, nMarks)) * vg.Points(12)
	legendH := rowsH + vg.Points(10)
	cw, err := draw.NewFormattedCanvas(8*vg.Inch, 3.5*vg.Inch+legendH, format)
	if err != nil {
		return fmt.Errorf("learning curve: %w", err)
	}
	dc := draw.New(cw)
	for i, l := range []*plot.Legend{&lines, &marks} {
		if []int{nLines, nMarks}[i] == 0 {
			continue
		}
		l.Top, l.Left = true, true
		l.TextStyle.Font.Size = vg.Points(9)
		x0 := vg.Points(40) + vg.Length(i)*4*vg.Inch
		l.Draw(draw.Canvas{Canvas: dc, Rectangle: vg.Rectangle{Min: vg.Point{X: x0, Y: dc.Min.Y + vg.Points(4)}, Max: vg.Point{X: x0 + 3.8*vg.Inch, Y: dc.Min.Y + legendH}}})
	}
	dc = draw.Crop(dc, 0, 0, legendH, 0)
	// The title above both panels says what the band is.
	if title != "" {
		title += ": "
	}
	title += "line = mean over seeds, band = min to max"
	top := draw.Crop(dc, 0, 0, 0, -vg.Points(16))
	dc.FillText(draw.TextStyle{Color: color.Black, Font: iid.Title.TextStyle.Font, XAlign: draw.XCenter, YAlign: draw.YTop, Handler: iid.Title.TextStyle.Handler},
		vg.Point{X: dc.Center().X, Y: dc.Max.Y - vg.Points(2)}, ascii(title))
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadX: vg.Points(16)}
	canvases := plot.Align([][]*plot.Plot{{iid, suite}}, tiles, top)
	iid.Draw(canvases[0][0])
	suite.Draw(canvases[0][1])
	_, err = cw.WriteTo(w)
	return err
}

// WriteLearningCurveFile writes the table's learning curves to path in the
// format its extension names (.png, .svg or .pdf), atomically.
func (t *Table) WriteLearningCurveFile(path, metric, title string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch format {
	case "png", "svg", "pdf":
	default:
		return fmt.Errorf("learning curve %s: unknown format %q (want .png, .svg or .pdf)", path, format)
	}
	if _, err := t.LearningCurves(); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error { return t.WriteLearningCurvePlot(w, metric, title, format) })
}
