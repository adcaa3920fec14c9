package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Column is one numeric column of Table 3.
type Column struct {
	// Header is the column's name, e.g. "IID SENT" or "G_seen SENT" or "Avg".
	Header string
	// Value and P return a row's value and p-value against the baseline.
	Value func(*Row) float64
	P     func(*Row) float64
}

var scoreTitles = map[string]string{"seen": "Seen", "func": "Func", "class": "Class", "type": "Type"}

// Columns lists Table 3's columns: the i.i.d. score per task, then G per
// score and task, then Avg.
func (t *Table) Columns() []Column {
	var cols []Column
	for _, task := range t.Tasks {
		cols = append(cols, Column{
			Header: "IID " + task,
			Value:  func(r *Row) float64 { return r.IID[task] },
			P:      func(r *Row) float64 { return r.PIID[task] },
		})
	}
	for _, score := range t.Scores {
		for _, task := range t.Tasks {
			cols = append(cols, Column{
				Header: "G_" + score + " " + task,
				Value:  func(r *Row) float64 { return r.G[task][score] },
				P:      func(r *Row) float64 { return r.PG[task][score] },
			})
		}
	}
	cols = append(cols, Column{Header: "Avg",
		Value: func(r *Row) float64 { return r.Avg },
		P:     func(r *Row) float64 { return r.PAvg }})
	return cols
}

// best returns, per column, the largest value (NaN ignored).
func (t *Table) best(cols []Column) []float64 {
	best := make([]float64, len(cols))
	for j, c := range cols {
		best[j] = math.NaN()
		for _, r := range t.Rows {
			if v := c.Value(r); !math.IsNaN(v) && (math.IsNaN(best[j]) || v > best[j]) {
				best[j] = v
			}
		}
	}
	return best
}

func num(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Significance is the level below which a p-value marks a cell.
const Significance = 0.05

// WriteMarkdown writes Table 3 as a Markdown table; the best value of each
// column is bold, and cells significantly above (↑) or below (↓) the
// baseline are marked.
func (t *Table) WriteMarkdown(w io.Writer) error {
	cols := t.Columns()
	best := t.best(cols)
	var b strings.Builder
	b.WriteString("| Config | Method |")
	for _, c := range cols {
		b.WriteString(" " + c.Header + " |")
	}
	b.WriteString("\n|---|---|")
	for range cols {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "| %s | %s |", r.Configuration, methodName(r.Method))
		for j, c := range cols {
			v := c.Value(r)
			s := num(v)
			if s == "" {
				s = "–"
			} else if v == best[j] {
				s = "**" + s + "**"
			}
			switch mark(v, c.Value(t.Rows[0]), c.P(r)) {
			case 1:
				s += " ↑"
			case -1:
				s += " ↓"
			}
			b.WriteString(" " + s + " |")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mark is +1 for significantly at or above the baseline, −1 below, else 0.
func mark(v, base, p float64) int {
	if math.IsNaN(v) || math.IsNaN(p) || p >= Significance {
		return 0
	}
	if v >= base {
		return 1
	}
	return -1
}

func methodName(m string) string {
	if n := experimentsMethodName(m); n != "" {
		return n
	}
	return m
}

// WriteLaTeX writes Table 3 as a booktabs tabular as gen_graphics.ipynb
// styles it: best per column in \textbf, cells significantly at or above the
// baseline in \textcolor{PineGreen}, below in \textcolor{red}. It needs
// \usepackage{booktabs} and \usepackage[dvipsnames]{xcolor}.
func (t *Table) WriteLaTeX(w io.Writer) error {
	cols := t.Columns()
	best := t.best(cols)
	var b strings.Builder
	b.WriteString("% Table 3 (beluga report). Needs \\usepackage{booktabs} and \\usepackage[dvipsnames]{xcolor}.\n")
	fmt.Fprintf(&b, "\\begin{tabular}{ll%s}\n\\toprule\n", strings.Repeat("r", len(cols)))
	// Two header lines: the measure, then the task.
	b.WriteString(" & ")
	for i := 0; i < len(cols); {
		h, _ := splitHeader(cols[i].Header)
		n := 1
		for i+n < len(cols) {
			if h2, _ := splitHeader(cols[i+n].Header); h2 != h {
				break
			}
			n++
		}
		if n > 1 {
			fmt.Fprintf(&b, " & \\multicolumn{%d}{c}{%s}", n, latexHeader(h))
		} else {
			fmt.Fprintf(&b, " & %s", latexHeader(h))
		}
		i += n
	}
	b.WriteString(" \\\\\n")
	b.WriteString("Config & Method")
	for _, c := range cols {
		_, task := splitHeader(c.Header)
		b.WriteString(" & " + latexEscape(task))
	}
	b.WriteString(" \\\\\n\\midrule\n")
	for i, r := range t.Rows {
		if i == 1 {
			b.WriteString("\\midrule\n")
		} else if i > 1 && r.Configuration != t.Rows[i-1].Configuration {
			b.WriteString("\\midrule\n")
		}
		config := latexEscape(r.Configuration)
		if i > 0 && r.Configuration == t.Rows[i-1].Configuration {
			config = ""
		}
		b.WriteString(config + " & " + latexEscape(methodName(r.Method)))
		for j, c := range cols {
			v := c.Value(r)
			s := num(v)
			if s == "" {
				b.WriteString(" & --")
				continue
			}
			if v == best[j] {
				s = "\\textbf{" + s + "}"
			}
			switch mark(v, c.Value(t.Rows[0]), c.P(r)) {
			case 1:
				s = "\\textcolor{PineGreen}{" + s + "}"
			case -1:
				s = "\\textcolor{red}{" + s + "}"
			}
			b.WriteString(" & " + s)
		}
		b.WriteString(" \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func splitHeader(h string) (measure, task string) {
	m, t, _ := strings.Cut(h, " ")
	return m, t
}

func latexHeader(h string) string {
	if g, ok := strings.CutPrefix(h, "G_"); ok {
		return "$G_{\\mathrm{" + scoreTitles[g] + "}}$"
	}
	return latexEscape(h)
}

var latexReplacer = strings.NewReplacer(`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`, `_`, `\_`, `{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`)

func latexEscape(s string) string { return latexReplacer.Replace(s) }

// WriteCSV writes Table 3's values, full precision, one row per table row.
func (t *Table) WriteCSV(w io.Writer) error {
	return t.writeCSV(w, func(c Column, r *Row) float64 { return c.Value(r) })
}

// WritePValuesCSV writes the p-values against the baseline in Table 3's layout.
func (t *Table) WritePValuesCSV(w io.Writer) error {
	return t.writeCSV(w, func(c Column, r *Row) float64 { return c.P(r) })
}

func (t *Table) writeCSV(w io.Writer, val func(Column, *Row) float64) error {
	cols := t.Columns()
	cw := csv.NewWriter(w)
	head := []string{"config", "method"}
	for _, c := range cols {
		head = append(head, c.Header)
	}
	cw.Write(head)
	for _, r := range t.Rows {
		rec := []string{r.Configuration, r.Method}
		for _, c := range cols {
			v := val(c, r)
			if math.IsNaN(v) {
				rec = append(rec, "")
			} else {
				rec = append(rec, strconv.FormatFloat(v, 'g', 8, 64))
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// WritePassRatesCSV writes the per-functionality pass rates in BeLUGA's
// results_fine.csv layout, all tasks in one file: task, config, method,
// score, then one column per functionality (empty when filtered or not run).
// The baseline's score is "standard", as in BeLUGA.
func (t *Table) WritePassRatesCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	for _, task := range t.Tasks {
		head := []string{"task", "config", "method", "score"}
		for _, f := range t.Functionalities[task] {
			head = append(head, f.Name)
		}
		cw.Write(head)
		for i, r := range t.Rows {
			scores := t.Scores
			if i == 0 && r.Configuration == "IID" {
				scores = scores[:1]
			}
			for _, score := range scores {
				name := score
				if i == 0 && r.Configuration == "IID" {
					name = "standard"
				}
				rec := []string{task, r.Configuration, r.Method, name}
				for _, v := range r.PassRates[task][score] {
					if math.IsNaN(v) {
						rec = append(rec, "")
					} else {
						rec = append(rec, strconv.FormatFloat(v, 'g', 8, 64))
					}
				}
				cw.Write(rec)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
