package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/csvcell"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/splits"
)

// Column is one numeric column of Table 3: the cell at Key of every row.
type Column struct {
	// Header is the column's name, e.g. "IID SENT" or "G_seen SENT" or "Avg".
	Header string
	Key    CellKey
	// task, score and group name a metadata group column (groupColumns),
	// whose cells carry skewMark; empty for the others.
	task, score, group string
}

// marks are a row's cell's footnote markers in the column: cellMarks, and
// a metadata group column's skewMark.
func (c Column) marks(r *Row, cell Cell) string {
	m := cellMarks(r, cell)
	if c.group != "" {
		m += skewMark(r, c.task, c.score, c.group)
	}
	return m
}

// Cell returns a row's cell in the column.
func (c Column) Cell(r *Row) Cell { return r.Cell(c.Key) }

// Value returns a row's value in the column.
func (c Column) Value(r *Row) float64 { return r.Cell(c.Key).Value }

// P returns the p-value of a row's value against the baseline over test
// cases and examples.
func (c Column) P(r *Row) float64 { return r.Cell(c.Key).P }

// Reps returns a row's value per replicate.
func (c Column) Reps(r *Row) map[string]float64 { return r.Cell(c.Key).Reps }

// PSeeds returns the p-value of the paired t-test of a row's value over
// replicates against the baseline.
func (c Column) PSeeds(r *Row) float64 { return r.Cell(c.Key).PSeeds }

// CI returns the bootstrap interval of a row's value.
func (c Column) CI(r *Row) metrics.Interval { return r.Cell(c.Key).CI }

// Flags returns the sanity flags of the runs behind a row's value.
func (c Column) Flags(r *Row) []RunFlag { return r.Cell(c.Key).Flags }

// SE is the standard error of a row's value over replicates (NaN for one).
func (c Column) SE(r *Row) float64 { return r.Cell(c.Key).SE() }

// scoreName is a score as column headers spell it: seen, func, class, type,
// or a metadata score's column (meta:target_ident → target_ident).
func scoreName(score string) string {
	if col, ok := splits.FoldKind(score).MetaColumn(); ok {
		return col
	}
	return score
}

// scoreTitle is a score as figure panels title it: Seen, Func, Class,
// Type, or "Held out: target_ident".
func scoreTitle(score string) string {
	if s, ok := experiments.LookupScore(score); ok {
		return s.Title
	}
	return "Held out: " + scoreName(score)
}

// groupColumns are a metadata score's per-group columns: each held-out
// value's suite score, scored by the model that did not see it (prefix T_
// as the suite scores of tasks without i.i.d. data).
func (t *Table) groupColumns(task, score string) []Column {
	if !experiments.IsMetaScore(score) {
		return nil // func, class and type groups are the per-group tables' (GroupLines)
	}
	var cols []Column
	for _, g := range t.Groups[task][score] {
		cols = append(cols, Column{Header: "T_" + scoreName(score) + "=" + g + " " + task, Key: SuiteKey(task, score, g), task: task, score: score, group: g})
	}
	return cols
}

// Columns lists Table 3's columns as the paper lays them out: the i.i.d.
// score per task (and each i.i.d. metric the task declares, and its
// evaluation sets), then per task its G of each score the sweep asked for
// (SENT seen, func, class, type, then PARA ...; a metadata score followed
// by one column per group), then Avg, the mean of the G columns shown. A
// task without an i.i.d. score (a suite without i.i.d. data, trained with
// configuration T) has its suite scores instead (T_seen HATE ...), and no
// Avg is shown when no task has G.
func (t *Table) Columns() []Column {
	var cols []Column
	anyIID := false
	for _, task := range t.Tasks {
		if t.hasIID(task) {
			anyIID = true
			cols = append(cols, Column{Header: "IID " + task, Key: IIDKey(task)})
			for _, m := range t.Metrics[task] {
				cols = append(cols, Column{Header: "IID:" + m + " " + task, Key: MetricKey(task, m)})
			}
		}
		// Evaluation sets score tasks without i.i.d. data of their own too
		// (HateCheck's T runs scored on Davidson's tweets).
		for _, set := range t.EvalSets[task] {
			cols = append(cols, Column{Header: "IID:" + set + " " + task, Key: EvalSetKey(task, set)})
		}
	}
	for _, task := range t.Tasks {
		for _, score := range t.Scores {
			if !t.hasIID(task) {
				cols = append(cols, Column{Header: "T_" + scoreName(score) + " " + task, Key: SuiteKey(task, score, "")})
				cols = append(cols, t.groupColumns(task, score)...)
				continue
			}
			cols = append(cols, Column{Header: "G_" + scoreName(score) + " " + task, Key: GKey(task, score)})
			cols = append(cols, t.groupColumns(task, score)...)
		}
	}
	if !anyIID {
		return cols
	}
	return append(cols, Column{Header: "Avg", Key: AvgKey})
}

// hasIID says whether any row has an i.i.d. score for task.
func (t *Table) hasIID(task string) bool {
	for _, r := range t.Rows {
		if !math.IsNaN(r.Cell(IIDKey(task)).Value) {
			return true
		}
	}
	return false
}

// seeds reports whether the table shows mean ± SE over several replicates.
func (t *Table) seeds() bool { return len(t.Replicates) > 1 }

// best returns, per column, the value to set in bold: the largest as
// shown (two decimals), among cells without sanity flags and above every
// constant predictor on the same cases; NaN (nothing bold) when no cell
// has a value or several rows share the largest.
func (t *Table) best(cols []Column) []float64 {
	best := make([]float64, len(cols))
	for j, c := range cols {
		best[j] = math.NaN()
		tied := false
		for _, r := range t.Rows {
			cell := c.Cell(r)
			v := cell.Value
			if math.IsNaN(v) || len(cell.Flags) > 0 || r.Reference || trivial(r, cell) {
				continue
			}
			switch {
			case math.IsNaN(best[j]):
				best[j] = v
			case num(v) == num(best[j]):
				tied = true
			case v > best[j]:
				best[j], tied = v, false
			}
		}
		if tied {
			best[j] = math.NaN()
		}
	}
	return best
}

// bold says whether a row's cell in column j is set in bold: the column's
// best, the cell without sanity flags and above the constant predictors,
// the row not a computed reference.
func bold(best []float64, j int, r *Row, c Cell) bool {
	return !math.IsNaN(best[j]) && num(c.Value) == num(best[j]) && len(c.Flags) == 0 && !r.Reference && !trivial(r, c)
}

// trivial says whether a row's cell is not above what a constant
// predictor gets on the same cases (as shown, two decimals): a value a
// model that learnt nothing reaches, marked MarkTrivial. The computed
// rows themselves are not marked, nor is a cell whose cases all expect
// one label (a constant predictor passes every one: a single
// functionality of a one-label suite), where the comparison says nothing
// about learning.
func trivial(r *Row, c Cell) bool {
	if r.Reference || math.IsNaN(c.Value) || math.IsNaN(c.Trivial) || c.Trivial >= 100 {
		return false
	}
	v, w := num(c.Value), num(c.Trivial)
	x, _ := strconv.ParseFloat(v, 64)
	y, _ := strconv.ParseFloat(w, 64)
	return x <= y
}

// cellMarks are a cell's footnote markers: its sanity flags' and
// MarkTrivial.
func cellMarks(r *Row, c Cell) string {
	m := marks(c.Flags)
	if trivial(r, c) {
		m += MarkTrivial
	}
	return m
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
		fmt.Fprintf(&b, "| %s | %s |", r.Configuration, r.methodLabel())
		for j, c := range cols {
			cell := c.Cell(r)
			s := num(cell.Value)
			if s == "" {
				s = "–"
			} else if bold(best, j, r, cell) {
				s = "**" + s + "**"
			}
			if s != "–" {
				s += c.marks(r, cell)
			} else if incomplete(cell.Flags) {
				s += MarkIncomplete
			}
			if s != "–" && t.seeds() {
				s += " ± " + dash(num(cell.SE()))
			}
			if s != "–" && t.CI > 0 {
				s += " [" + dash(num(cell.CI.Lo)) + ", " + dash(num(cell.CI.Hi)) + "]"
			}
			switch t.mark(c, cell) {
			case 1:
				s += " ↑"
			case -1:
				s += " ↓"
			}
			b.WriteString(" " + s + " |")
		}
		b.WriteString("\n")
	}
	// Footnotes, each a paragraph after the table.
	for _, n := range t.Footnotes() {
		b.WriteString("\n" + n + "\n")
	}
	if n := t.baselineNote(); n != "" {
		b.WriteString("\n" + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// baselineNote names the row the arrows test against when it is not the
// table's first (the IID row at the largest train_size of a learning
// curve, or one the spec's baseline: or --baseline names): a reader takes
// the first row for BeLUGA's baseline. Empty otherwise, or when a table
// has no arrow.
func (t *Table) baselineNote() string {
	if t.base <= 0 || t.base >= len(t.Rows) {
		return ""
	}
	cols := t.Columns()
	for _, r := range t.Rows {
		for _, c := range cols {
			if t.mark(c, c.Cell(r)) != 0 {
				return "↑ ↓ significantly (p < 0.05) above or below the baseline row, " + rowRefOf(t.Rows[t.base]) + ", not the first row."
			}
		}
	}
	return ""
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// mark is +1 for a cell of column c significantly at or above the
// baseline's, −1 below, else 0.
func (t *Table) mark(c Column, cell Cell) int {
	base := t.Baseline()
	if base == nil || math.IsNaN(cell.Value) || math.IsNaN(cell.P) || cell.P >= Significance {
		return 0
	}
	if cell.Value >= c.Value(base) {
		return 1
	}
	return -1
}

// methodLabel is the row's method as tables and figures show it, with its
// axes' values when it has any: "IRM (irm_lambda=10)".
func (r *Row) methodLabel() string {
	if r.Axes == "" {
		return methodName(r.Method)
	}
	return methodName(r.Method) + " (" + r.Axes + ")"
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
	// Two header lines: the group (IID, each task's G, Avg), then the
	// column within it.
	b.WriteString(" & ")
	for i := 0; i < len(cols); {
		g, _ := latexGroup(cols[i].Header)
		n := 1
		for i+n < len(cols) {
			if g2, _ := latexGroup(cols[i+n].Header); g2 != g {
				break
			}
			n++
		}
		if n > 1 {
			fmt.Fprintf(&b, " & \\multicolumn{%d}{c}{%s}", n, g)
		} else {
			fmt.Fprintf(&b, " & %s", g)
		}
		i += n
	}
	b.WriteString(" \\\\\n")
	b.WriteString("Config & Method")
	for _, c := range cols {
		_, sub := latexGroup(c.Header)
		b.WriteString(" & " + sub)
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
		b.WriteString(config + " & " + latexEscape(r.methodLabel()))
		for j, c := range cols {
			cell := c.Cell(r)
			s := num(cell.Value)
			if s == "" {
				if incomplete(cell.Flags) {
					b.WriteString(" & --$^{" + latexMarks.Replace(MarkIncomplete) + "}$")
					continue
				}
				b.WriteString(" & --")
				continue
			}
			if bold(best, j, r, cell) {
				s = "\\textbf{" + s + "}"
			}
			if m := cols[j].marks(r, cell); m != "" {
				s += "$^{" + latexMarks.Replace(m) + "}$"
			}
			if t.seeds() {
				if se := num(cell.SE()); se != "" {
					s += "\\,{\\scriptsize$\\pm$" + se + "}"
				}
			}
			if t.CI > 0 {
				if iv := cell.CI; !math.IsNaN(iv.Lo) {
					s += "\\,{\\scriptsize[" + num(iv.Lo) + ", " + num(iv.Hi) + "]}"
				}
			}
			switch t.mark(c, cell) {
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
	for _, n := range t.Footnotes() {
		mark, text, _ := strings.Cut(n, " ")
		b.WriteString("\n\\par\\noindent{\\footnotesize $^{" + latexMarks.Replace(mark) + "}$ " + latexEscape(text) + "}\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// splitHeader splits a header at its last space: task names have none, a
// metadata group's value may ("T_target_ident=gay people HATE").
func splitHeader(h string) (measure, task string) {
	i := strings.LastIndexByte(h, ' ')
	if i < 0 {
		return h, ""
	}
	return h[:i], h[i+1:]
}

// latexGroup splits a column header into the header's group line and its
// own line: "IID SENT" → (IID, SENT), "G_seen SENT" → (SENT, $G_{Seen}$),
// "T_seen HATE" → (HATE, $T_{Seen}$), "Avg" → (Avg, "").
func latexGroup(h string) (group, sub string) {
	m, task := splitHeader(h)
	title := func(g string) string {
		if s, ok := experiments.LookupScore(g); ok {
			return s.Title
		}
		// A metadata score's column, or one of its groups.
		return strings.ReplaceAll(latexEscape(strings.ReplaceAll(g, "_", " ")), " ", `\ `)
	}
	if g, ok := strings.CutPrefix(m, "G_"); ok {
		return latexEscape(task), "$G_{\\mathrm{" + title(g) + "}}$"
	}
	if g, ok := strings.CutPrefix(m, "T_"); ok {
		return latexEscape(task), "$T_{\\mathrm{" + title(g) + "}}$"
	}
	return latexEscape(m), latexEscape(task)
}

var latexReplacer = strings.NewReplacer(`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`, `_`, `\_`, `{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`)

func latexEscape(s string) string { return latexReplacer.Replace(s) }

// latexMarks spells the flag markers in LaTeX math mode.
var latexMarks = strings.NewReplacer(MarkConstant, `\dagger`, MarkNotLearnt, `\ddagger`, MarkTrivial, `\S`, MarkIncomplete, `\P`, splits.SkewMark, `\|`)

// WriteCSV writes Table 3's values, full precision, one row per table row.
// A table of several replicates adds, after each column, its standard error
// ("… se") and its value in each replicate ("… seed=1", …); a table with
// intervals adds their ends ("… ci95 lo", "… ci95 hi").
func (t *Table) WriteCSV(w io.Writer) error {
	fields := []csvField{{"", func(c Cell) float64 { return c.Value }}}
	if t.seeds() {
		fields = append(fields, csvField{" se", Cell.SE})
		for _, rep := range t.Replicates {
			fields = append(fields, csvField{" " + rep, func(c Cell) float64 {
				if v, ok := c.Reps[rep]; ok {
					return v
				}
				return math.NaN()
			}})
		}
	}
	if t.CI > 0 {
		level := strconv.FormatFloat(t.CI, 'g', -1, 64)
		fields = append(fields,
			csvField{" ci" + level + " lo", func(c Cell) float64 { return c.CI.Lo }},
			csvField{" ci" + level + " hi", func(c Cell) float64 { return c.CI.Hi }})
	}
	return t.writeCSV(w, fields, t.anyFlags())
}

// WritePValuesCSV writes the p-values against the baseline in Table 3's
// layout: over test cases and examples (McNemar, randomisation) and, for a
// table of several replicates, over them ("… seeds", paired t-test).
func (t *Table) WritePValuesCSV(w io.Writer) error {
	fields := []csvField{{"", func(c Cell) float64 { return c.P }}}
	if t.seeds() {
		fields = append(fields, csvField{" seeds", func(c Cell) float64 { return c.PSeeds }})
	}
	return t.writeCSV(w, fields, false)
}

// A csvField is one number a CSV gives of every cell of a column: its
// header is the column's followed by suffix.
type csvField struct {
	suffix string
	value  func(Cell) float64
}

// writeCSV writes a CSV of the table's columns, each the fields given;
// withFlags adds a last column "flags" listing each row's flagged cells
// (flagsCSV).
func (t *Table) writeCSV(w io.Writer, fields []csvField, withFlags bool) error {
	cols := t.Columns()
	cw := csvcell.NewWriter(w)
	head := []string{"config", "method"}
	for _, c := range cols {
		for _, f := range fields {
			head = append(head, c.Header+f.suffix)
		}
	}
	if withFlags {
		head = append(head, "flags")
	}
	cw.Write(head)
	for _, r := range t.Rows {
		rec := []string{r.Configuration, r.methodColumn()}
		for _, c := range cols {
			cell := c.Cell(r)
			for _, f := range fields {
				rec = append(rec, csvNum(f.value(cell)))
			}
		}
		if withFlags {
			rec = append(rec, t.flagsCSV(r))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

func csvNum(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 8, 64)
}

// WritePassRatesCSV writes the per-functionality pass rates in BeLUGA's
// results_fine.csv layout, all tasks in one file: task, config, method,
// score, then one column per functionality (empty when filtered or not run).
// The baseline's score is "standard", as in BeLUGA.
func (t *Table) WritePassRatesCSV(w io.Writer) error {
	cw := csvcell.NewWriter(w)
	for _, task := range t.Tasks {
		head := []string{"task", "config", "method", "score"}
		for _, f := range t.Functionalities[task] {
			head = append(head, f.Name)
		}
		cw.Write(head)
		for i, r := range t.Rows {
			scores := t.Scores
			if i == 0 && r.Configuration == experiments.ConfigIID {
				scores = scores[:1]
			}
			for _, score := range scores {
				name := score
				if i == 0 && r.Configuration == experiments.ConfigIID {
					name = "standard"
				}
				rec := []string{task, r.Configuration, r.methodColumn(), name}
				for k := range t.Functionalities[task] {
					rec = append(rec, csvNum(r.Cell(PassKey(task, score, "", k)).Value))
				}
				cw.Write(rec)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteComparisonsCSV writes every functionality's comparison with the
// baseline, one line per task, row, score and functionality: its pass rate
// and the baseline's, the p-value of McNemar's exact test over the cases
// both scored, and the Benjamini–Hochberg q-value within the task and score
// (the 38–53 functionalities tested at once). A table with intervals adds
// the pass rate's bootstrap interval. A line "(suite score)" per task, row
// and score gives the suite score, the baseline's and the interval.
func (t *Table) WriteComparisonsCSV(w io.Writer) error {
	cw := csvcell.NewWriter(w)
	head := []string{"task", "config", "method", "score", "number", "functionality", "class", "type", "pass_rate", "baseline", "p", "q"}
	if t.CI > 0 {
		level := strconv.FormatFloat(t.CI, 'g', -1, 64)
		head = append(head, "ci"+level+"_lo", "ci"+level+"_hi")
	}
	cw.Write(head)
	base := t.Baseline()
	if base == nil {
		cw.Flush()
		return cw.Error()
	}
	for _, task := range t.Tasks {
		for _, r := range t.Rows {
			if r == base || r.Reference {
				continue
			}
			for _, score := range t.Scores {
				// The suite score's line, then each functionality's.
				nums := func(k CellKey) []string {
					c := r.Cell(k)
					out := []string{csvNum(c.Value), csvNum(base.Cell(k).Value), csvNum(c.P), csvNum(c.Q)}
					if t.CI > 0 {
						out = append(out, csvNum(c.CI.Lo), csvNum(c.CI.Hi))
					}
					return out
				}
				cw.Write(append([]string{task, r.Configuration, r.methodColumn(), score, "", "(suite score)", "", ""}, nums(SuiteKey(task, score, ""))...))
				for k, f := range t.Functionalities[task] {
					cw.Write(append([]string{task, r.Configuration, r.methodColumn(), score, strconv.Itoa(k + 1), f.Name, f.Class, f.Type},
						nums(PassKey(task, score, "", k))...))
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteSpreadCSV writes how every functionality's pass rate spreads over
// the replicates (seeds), one line per task, row, score and functionality:
// the number of seeds, mean, min, max, range (max − min), the quartiles and
// IQR (numpy's linear percentile). With swing > 0 only the functionalities
// whose pass rate swings more than swing points across seeds (range >
// swing) are written: the ones a single seed's verdict would misreport.
// The baseline's pass rates stand in for every score and are written once,
// as score "standard".
func (t *Table) WriteSpreadCSV(w io.Writer, swing float64) error {
	if swing < 0 || math.IsNaN(swing) {
		return fmt.Errorf("swing threshold %v: want a number of points ≥ 0", swing)
	}
	cw := csvcell.NewWriter(w)
	cw.Write([]string{"task", "config", "method", "score", "number", "functionality", "class", "type",
		"seeds", "mean", "min", "max", "range", "q1", "median", "q3", "iqr"})
	for _, task := range t.Tasks {
		for i, r := range t.Rows {
			scores := t.Scores
			if i == 0 && r.Configuration == experiments.ConfigIID {
				scores = scores[:1]
			}
			for _, score := range scores {
				name := score
				if i == 0 && r.Configuration == experiments.ConfigIID {
					name = "standard"
				}
				for k, f := range t.Functionalities[task] {
					c := r.Cell(PassKey(task, score, "", k))
					s := c.Spread()
					if s.N == 0 || (swing > 0 && !(s.Range() > swing)) {
						continue
					}
					cw.Write([]string{task, r.Configuration, r.methodColumn(), name, strconv.Itoa(k + 1), f.Name, f.Class, f.Type,
						strconv.Itoa(s.N), csvNum(c.Value), csvNum(s.Min), csvNum(s.Max), csvNum(s.Range()),
						csvNum(s.Q1), csvNum(s.Median), csvNum(s.Q3), csvNum(s.IQR())})
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
