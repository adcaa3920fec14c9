package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/splits"
)

// Column is one numeric column of Table 3.
type Column struct {
	// Header is the column's name, e.g. "IID SENT" or "G_seen SENT" or "Avg".
	Header string
	// Value and P return a row's value and p-value against the baseline
	// over test cases and examples.
	Value func(*Row) float64
	P     func(*Row) float64
	// Reps returns the row's value per replicate, PSeeds the p-value of the
	// paired t-test over replicates against the baseline, CI the bootstrap
	// interval.
	Reps   func(*Row) map[string]float64
	PSeeds func(*Row) float64
	CI     func(*Row) metrics.Interval
	// Flags returns the sanity flags of the runs behind a row's value.
	Flags func(*Row) []RunFlag
}

// SE is the standard error of a row's value over replicates (NaN for one).
func (c Column) SE(r *Row) float64 {
	var xs []float64
	for _, v := range c.Reps(r) {
		xs = append(xs, v)
	}
	_, se := metrics.MeanSE(xs)
	return se
}

var scoreTitles = map[string]string{"seen": "Seen", "func": "Func", "class": "Class", "type": "Type"}

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
	if t, ok := scoreTitles[score]; ok {
		return t
	}
	return "Held out: " + scoreName(score)
}

// groupColumns are a metadata score's per-group columns: each held-out
// value's suite score, scored by the model that did not see it (prefix T_
// as the suite scores of tasks without i.i.d. data).
func (t *Table) groupColumns(task, score string) []Column {
	var cols []Column
	nan := func(*Row) float64 { return math.NaN() }
	for _, g := range t.Groups[task][score] {
		cols = append(cols, Column{
			Header: "T_" + scoreName(score) + "=" + g + " " + task,
			Value: func(r *Row) float64 {
				if v, ok := r.Groups[task][score][g]; ok {
					return v
				}
				if r.Configuration == experiments.ConfigIID {
					// The baseline never saw the suite: its suite score
					// stands in, as for every score.
					return r.Suite[task][score]
				}
				return math.NaN()
			},
			P:      nan,
			Reps:   func(*Row) map[string]float64 { return nil },
			PSeeds: nan,
			CI:     func(*Row) metrics.Interval { return noInterval },
			Flags:  func(r *Row) []RunFlag { return r.Flags[task][score] },
		})
	}
	return cols
}

// Columns lists Table 3's columns as the paper lays them out: the i.i.d.
// score per task, then per task its G of each score (SENT seen, func,
// class, type, then PARA ...), then Avg. A task without an i.i.d. score
// (a suite without i.i.d. data, trained with configuration T) has its
// suite scores instead (T_seen HATE ...), and no Avg is shown when no task
// has G.
func (t *Table) Columns() []Column {
	var cols []Column
	nan := func(*Row) float64 { return math.NaN() }
	anyIID := false
	shown := t.figureScores() // the scores some run has
	for _, task := range t.Tasks {
		if !t.hasIID(task) {
			continue
		}
		anyIID = true
		cols = append(cols, Column{
			Header: "IID " + task,
			Value:  func(r *Row) float64 { return r.IID[task] },
			P:      func(r *Row) float64 { return r.PIID[task] },
			Reps:   func(r *Row) map[string]float64 { return r.IIDRep[task] },
			PSeeds: func(r *Row) float64 { return r.PSeedIID[task] },
			CI:     func(r *Row) metrics.Interval { return ci(r.IIDCI[task]) },
			Flags:  func(r *Row) []RunFlag { return r.Flags[task][experiments.ScoreIID] },
		})
	}
	for _, task := range t.Tasks {
		for _, score := range t.Scores {
			if !t.hasIID(task) {
				if !slices.Contains(shown, score) {
					continue // no run has it: HateCheck, all MFT, has no type fold
				}
				cols = append(cols, Column{
					Header: "T_" + scoreName(score) + " " + task,
					Value:  func(r *Row) float64 { return r.Suite[task][score] },
					P:      nan,
					Reps:   func(*Row) map[string]float64 { return nil },
					PSeeds: nan,
					CI:     func(r *Row) metrics.Interval { return ci(r.SuiteCI[task][score]) },
					Flags:  func(r *Row) []RunFlag { return r.Flags[task][score] },
				})
				cols = append(cols, t.groupColumns(task, score)...)
				continue
			}
			cols = append(cols, Column{
				Header: "G_" + scoreName(score) + " " + task,
				Value:  func(r *Row) float64 { return r.G[task][score] },
				P:      func(r *Row) float64 { return r.PG[task][score] },
				Reps:   func(r *Row) map[string]float64 { return r.GRep[task][score] },
				PSeeds: func(r *Row) float64 { return r.PSeedG[task][score] },
				CI:     func(r *Row) metrics.Interval { return ci(r.GCI[task][score]) },
				Flags:  func(r *Row) []RunFlag { return r.Flags[task][score] },
			})
			cols = append(cols, t.groupColumns(task, score)...)
		}
	}
	if !anyIID {
		return cols
	}
	cols = append(cols, Column{Header: "Avg",
		Value:  func(r *Row) float64 { return r.Avg },
		P:      func(r *Row) float64 { return r.PAvg },
		Reps:   func(r *Row) map[string]float64 { return r.AvgRep },
		PSeeds: func(r *Row) float64 { return r.PSeedAvg },
		CI:     func(r *Row) metrics.Interval { return r.AvgCI },
		Flags:  func(r *Row) []RunFlag { return r.AvgFlags }})
	return cols
}

// hasIID says whether any row has an i.i.d. score for task.
func (t *Table) hasIID(task string) bool {
	for _, r := range t.Rows {
		if !math.IsNaN(r.IID[task]) {
			return true
		}
	}
	return false
}

// ci returns iv, or NaNs for an interval never computed.
func ci(iv metrics.Interval) metrics.Interval {
	if iv == (metrics.Interval{}) {
		return noInterval
	}
	return iv
}

// seeds reports whether the table shows mean ± SE over several replicates.
func (t *Table) seeds() bool { return len(t.Replicates) > 1 }

// best returns, per column, the value to set in bold: the largest as
// shown (two decimals), among cells without sanity flags; NaN (nothing
// bold) when no cell has a value or several rows share the largest.
func (t *Table) best(cols []Column) []float64 {
	best := make([]float64, len(cols))
	for j, c := range cols {
		best[j] = math.NaN()
		tied := false
		for _, r := range t.Rows {
			v := c.Value(r)
			if math.IsNaN(v) || len(c.Flags(r)) > 0 || r.Reference {
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

// isBest says whether v is column j's bold value.
func isBest(best []float64, j int, v float64) bool {
	return !math.IsNaN(best[j]) && num(v) == num(best[j])
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
			v := c.Value(r)
			s := num(v)
			if s == "" {
				s = "–"
			} else if isBest(best, j, v) && len(c.Flags(r)) == 0 && !r.Reference {
				s = "**" + s + "**"
			}
			if s != "–" {
				s += marks(c.Flags(r))
			}
			if s != "–" && t.seeds() {
				s += " ± " + dash(num(c.SE(r)))
			}
			if s != "–" && t.CI > 0 {
				iv := c.CI(r)
				s += " [" + dash(num(iv.Lo)) + ", " + dash(num(iv.Hi)) + "]"
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
	// Footnotes, each a paragraph after the table.
	for _, n := range t.Footnotes() {
		b.WriteString("\n" + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
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
			v := c.Value(r)
			s := num(v)
			if s == "" {
				b.WriteString(" & --")
				continue
			}
			if isBest(best, j, v) && len(c.Flags(r)) == 0 && !r.Reference {
				s = "\\textbf{" + s + "}"
			}
			if m := marks(c.Flags(r)); m != "" {
				s += "$^{" + latexMarks.Replace(m) + "}$"
			}
			if t.seeds() {
				if se := num(c.SE(r)); se != "" {
					s += "\\,{\\scriptsize$\\pm$" + se + "}"
				}
			}
			if t.CI > 0 {
				if iv := c.CI(r); !math.IsNaN(iv.Lo) {
					s += "\\,{\\scriptsize[" + num(iv.Lo) + ", " + num(iv.Hi) + "]}"
				}
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
		if t, ok := scoreTitles[g]; ok {
			return t
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
var latexMarks = strings.NewReplacer(MarkConstant, `\dagger`, MarkNotLearnt, `\ddagger`)

// WriteCSV writes Table 3's values, full precision, one row per table row.
// A table of several replicates adds, after each column, its standard error
// ("… se") and its value in each replicate ("… seed=1", …); a table with
// intervals adds their ends ("… ci95 lo", "… ci95 hi").
func (t *Table) WriteCSV(w io.Writer) error {
	extra := func(c Column) []csvColumn {
		var out []csvColumn
		if t.seeds() {
			out = append(out, csvColumn{c.Header + " se", c.SE})
			for _, rep := range t.Replicates {
				out = append(out, csvColumn{c.Header + " " + rep, func(r *Row) float64 {
					if v, ok := c.Reps(r)[rep]; ok {
						return v
					}
					return math.NaN()
				}})
			}
		}
		if t.CI > 0 {
			level := strconv.FormatFloat(t.CI, 'g', -1, 64)
			out = append(out,
				csvColumn{c.Header + " ci" + level + " lo", func(r *Row) float64 { return c.CI(r).Lo }},
				csvColumn{c.Header + " ci" + level + " hi", func(r *Row) float64 { return c.CI(r).Hi }})
		}
		return out
	}
	if err := t.writeCSV(w, func(c Column) csvColumn { return csvColumn{c.Header, c.Value} }, extra, t.anyFlags()); err != nil {
		return err
	}
	return nil
}

// WritePValuesCSV writes the p-values against the baseline in Table 3's
// layout: over test cases and examples (McNemar, randomisation) and, for a
// table of several replicates, over them ("… seeds", paired t-test).
func (t *Table) WritePValuesCSV(w io.Writer) error {
	extra := func(c Column) []csvColumn {
		if !t.seeds() {
			return nil
		}
		return []csvColumn{{c.Header + " seeds", c.PSeeds}}
	}
	return t.writeCSV(w, func(c Column) csvColumn { return csvColumn{c.Header, c.P} }, extra, false)
}

type csvColumn struct {
	header string
	value  func(*Row) float64
}

// writeCSV writes a CSV of the table's columns; withFlags adds a last
// column "flags" listing each row's flagged cells (flagsCSV).
func (t *Table) writeCSV(w io.Writer, main func(Column) csvColumn, extra func(Column) []csvColumn, withFlags bool) error {
	var cols []csvColumn
	for _, c := range t.Columns() {
		cols = append(cols, main(c))
		cols = append(cols, extra(c)...)
	}
	cw := csv.NewWriter(w)
	head := []string{"config", "method"}
	for _, c := range cols {
		head = append(head, c.header)
	}
	if withFlags {
		head = append(head, "flags")
	}
	cw.Write(head)
	for _, r := range t.Rows {
		rec := []string{r.Configuration, r.methodColumn()}
		for _, c := range cols {
			rec = append(rec, csvNum(c.value(r)))
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
				rec := []string{task, r.Configuration, r.methodColumn(), name}
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

// WriteComparisonsCSV writes every functionality's comparison with the
// baseline, one line per task, row, score and functionality: its pass rate
// and the baseline's, the p-value of McNemar's exact test over the cases
// both scored, and the Benjamini–Hochberg q-value within the task and score
// (the 38–53 functionalities tested at once). A table with intervals adds
// the pass rate's bootstrap interval. A line "(suite score)" per task, row
// and score gives the suite score, the baseline's and the interval.
func (t *Table) WriteComparisonsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"task", "config", "method", "score", "number", "functionality", "class", "type", "pass_rate", "baseline", "p", "q"}
	if t.CI > 0 {
		level := strconv.FormatFloat(t.CI, 'g', -1, 64)
		head = append(head, "ci"+level+"_lo", "ci"+level+"_hi")
	}
	cw.Write(head)
	if len(t.Rows) == 0 {
		cw.Flush()
		return cw.Error()
	}
	base := t.Rows[0]
	for _, task := range t.Tasks {
		for _, r := range t.Rows[1:] {
			for _, score := range t.Scores {
				rec := []string{task, r.Configuration, r.methodColumn(), score, "", "(suite score)", "", "",
					csvNum(r.Suite[task][score]), csvNum(base.Suite[task][score]), "", ""}
				if t.CI > 0 {
					iv := ci(r.SuiteCI[task][score])
					rec = append(rec, csvNum(iv.Lo), csvNum(iv.Hi))
				}
				cw.Write(rec)
				for k, f := range t.Functionalities[task] {
					rec := []string{task, r.Configuration, r.methodColumn(), score, strconv.Itoa(k + 1), f.Name, f.Class, f.Type,
						csvNum(at(r.PassRates[task][score], k)), csvNum(at(base.PassRates[task][score], k)),
						csvNum(at(r.PFunc[task][score], k)), csvNum(at(r.QFunc[task][score], k))}
					if t.CI > 0 {
						iv := noInterval
						if cis := r.PassRateCI[task][score]; k < len(cis) {
							iv = cis[k]
						}
						rec = append(rec, csvNum(iv.Lo), csvNum(iv.Hi))
					}
					cw.Write(rec)
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
	cw := csv.NewWriter(w)
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
					sp := r.PassRateSpread[task][score]
					if k >= len(sp) || sp[k].N == 0 || (swing > 0 && !(sp[k].Range() > swing)) {
						continue
					}
					s := sp[k]
					cw.Write([]string{task, r.Configuration, r.methodColumn(), name, strconv.Itoa(k + 1), f.Name, f.Class, f.Type,
						strconv.Itoa(s.N), csvNum(at(r.PassRates[task][score], k)), csvNum(s.Min), csvNum(s.Max), csvNum(s.Range()),
						csvNum(s.Q1), csvNum(s.Median), csvNum(s.Q3), csvNum(s.IQR())})
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func at(xs []float64, k int) float64 {
	if k < len(xs) {
		return xs[k]
	}
	return math.NaN()
}
