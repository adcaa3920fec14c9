package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/internal/csvcell"
)

// TemplateAxis is the grid key that gives a prompted configuration one row
// per prompt template (prompt.Spec.Template): the rows the per-template
// table reads.
const TemplateAxis = "prompt.template"

// TemplateLine is one line of the per-template table: a prompted row
// (configuration × method × its axes other than TemplateAxis) in one of
// Table 3's columns, the row's cell per template, and the spread of the
// values across templates. It is a view of Table 3's cells, as a
// LearningCurve is: a template's value is the cell of the row of that
// template, with its marks and standard error.
type TemplateLine struct {
	Configuration, Method string
	// Axes are the line's axes other than TemplateAxis, or empty.
	Axes string
	// Column is Table 3's column (Column.Header: "T_seen HATE").
	Column string
	// Cells and Marks are, per template, the row's cell in the column and
	// its footnote marks as Table 3 writes them (Column.Marks); a template
	// the line's row lacks has none.
	Cells map[string]Cell
	Marks map[string]string
	// Mean, Min and Max are over the templates with a value (N of them);
	// Worst and Best name the templates at Min and Max.
	Mean, Min, Max float64
	N              int
	Worst, Best    string
}

// Label names the line's row as Table 3 names it without its template.
func (l TemplateLine) Label() string {
	r := Row{Configuration: l.Configuration, Method: l.Method, Axes: l.Axes}
	return r.Label()
}

// TemplateLines collects the per-template table of a sweep over
// TemplateAxis: the templates in the order of Table 3's rows, and a line
// per Table 3 column and prompted row (without its template), in Table 3's
// column and row order, with a value for some template. A table whose rows were not swept over TemplateAxis
// has none: a run that scores several templates at once predicts the mean
// of their probabilities, and records each template's own scores in its
// train/metrics.json.
func (t *Table) TemplateLines() ([]string, []TemplateLine, error) {
	var templates []string
	var lines []*TemplateLine
	for _, c := range t.Columns() {
		byRow := map[[3]string]*TemplateLine{}
		for _, r := range t.Rows {
			tpl, ok := rowAxes(r)[TemplateAxis]
			if !ok || r.Reference {
				continue
			}
			if !slices.Contains(templates, tpl) {
				templates = append(templates, tpl)
			}
			var other []string
			for _, a := range strings.Fields(r.Axes) {
				if !strings.HasPrefix(a, TemplateAxis+"=") {
					other = append(other, a)
				}
			}
			k := [3]string{r.Configuration, r.Method, strings.Join(other, " ")}
			if byRow[k] == nil {
				byRow[k] = &TemplateLine{Configuration: k[0], Method: k[1], Axes: k[2], Column: c.Header,
					Cells: map[string]Cell{}, Marks: map[string]string{}}
				lines = append(lines, byRow[k])
			}
			cell := c.Cell(r)
			byRow[k].Cells[tpl], byRow[k].Marks[tpl] = cell, c.marks(r, cell)
		}
	}
	if len(templates) == 0 {
		return nil, nil, fmt.Errorf("no finished runs swept over %s: a per-template table needs the grid key %s (a run that scores several templates at once records each one's scores in its train/metrics.json)", TemplateAxis, TemplateAxis)
	}
	var out []TemplateLine
	for _, l := range lines {
		if l.spread(templates); l.N > 0 {
			out = append(out, *l)
		}
	}
	return templates, out, nil
}

// spread sets the line's mean, minimum and maximum over its templates'
// values, the first template in order winning a tie.
func (l *TemplateLine) spread(templates []string) {
	l.Mean, l.Min, l.Max = math.NaN(), math.NaN(), math.NaN()
	sum := 0.0
	for _, tpl := range templates {
		c, ok := l.Cells[tpl]
		if !ok || math.IsNaN(c.Value) {
			continue
		}
		v := c.Value
		if l.N == 0 || v < l.Min {
			l.Min, l.Worst = v, tpl
		}
		if l.N == 0 || v > l.Max {
			l.Max, l.Best = v, tpl
		}
		sum += v
		l.N++
	}
	if l.N > 0 {
		l.Mean = sum / float64(l.N)
	}
}

// WriteTemplatesMarkdown writes the per-template table: a line per
// prompted row and Table 3 column, a column per template with the row's
// value as Table 3 writes it (marks, ± standard error over replicates),
// then the mean, minimum and maximum across templates and their range.
func (t *Table) WriteTemplatesMarkdown(w io.Writer) error {
	templates, lines, err := t.TemplateLines()
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("Scores per prompt template (" + TemplateAxis + "): each value is the template's row of Table 3; Mean, Min, Max and Range are across templates.\n\n| Row | Column |")
	for _, tpl := range templates {
		b.WriteString(" " + mdEscape(tpl) + " |")
	}
	b.WriteString(" Mean | Min | Max | Range |\n|---|---|")
	b.WriteString(strings.Repeat("---:|", len(templates)+4))
	b.WriteString("\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "| %s | %s |", l.Label(), l.Column)
		for _, tpl := range templates {
			s := "–"
			if c, ok := l.Cells[tpl]; ok {
				s = t.valueText(c, l.Marks[tpl])
			}
			b.WriteString(" " + s + " |")
		}
		rng := "–"
		if l.N > 1 {
			rng = num(l.Max - l.Min)
		}
		fmt.Fprintf(&b, " %s | %s (%s) | %s (%s) | %s |\n", dash(num(l.Mean)), dash(num(l.Min)), mdEscape(l.Worst), dash(num(l.Max)), mdEscape(l.Best), rng)
	}
	b.WriteString("\nMarks as in Table 3 (its footnotes name the runs).")
	if t.seeds() {
		fmt.Fprintf(&b, " A template's value is the mean ± standard error over %d replicates; the spread is of those means.", len(t.Replicates))
	}
	b.WriteString("\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteTemplatesCSV writes the per-template table's values, full
// precision, one line per prompted row, column and template (config,
// method, axes, column, template, value, se, marks), each line's spread
// across templates (mean, min, max, range, worst and best template)
// repeated on its templates' lines.
func (t *Table) WriteTemplatesCSV(w io.Writer) error {
	templates, lines, err := t.TemplateLines()
	if err != nil {
		return err
	}
	cw := csvcell.NewWriter(w)
	cw.Write([]string{"config", "method", "axes", "column", "template", "value", "se", "marks", "mean", "min", "max", "range", "worst", "best", "templates"})
	for _, l := range lines {
		for _, tpl := range templates {
			c, ok := l.Cells[tpl]
			if !ok {
				continue
			}
			cw.Write([]string{l.Configuration, l.Method, l.Axes, l.Column, tpl, csvNum(c.Value), csvNum(c.SE()), l.Marks[tpl],
				csvNum(l.Mean), csvNum(l.Min), csvNum(l.Max), csvNum(l.Max - l.Min), l.Worst, l.Best, strconv.Itoa(l.N)})
		}
	}
	cw.Flush()
	return cw.Error()
}
