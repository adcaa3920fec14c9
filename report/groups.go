package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/csvcell"
)

// GroupLine is one line of a per-group table: a trained row's result on
// one group of a held-out score (a functionality, class or test type held
// out, or a value of a metadata column), or on the whole column (Group
// ""), every value on the group's cases. It is a view of the table's
// cells: Baseline is the baseline row's SuiteKey cell of the group, Trivial
// the best constant predictor's there, Seen the row's SeenKey, HeldOut its
// SuiteKey, Gap its GapKey (seen − held out, with the p-value of the
// randomisation test of the two on those cases and, with intervals, a
// paired bootstrap interval).
type GroupLine struct {
	Task, Score, Group string
	// CaseSet names the cases ("" for the whole suite), Cases counts them.
	CaseSet string
	Cases   int
	Row     *Row
	// Baseline is the baseline row's value on the cases (NaN without one).
	Baseline Cell
	// Trivial is the best constant predictor's value on the cases (NaN
	// when the runs recorded none), TrivialBy which predictor it is.
	Trivial   float64
	TrivialBy string
	Seen      Cell
	HeldOut   Cell
	Gap       Cell
}

// GroupLines lists, per task and held-out score, for every trained row
// with results there, its whole column and then each group in fold order.
func (t *Table) GroupLines() []GroupLine {
	var out []GroupLine
	base := t.Baseline()
	for _, task := range t.Tasks {
		for _, score := range t.Scores {
			if _, heldOut := experiments.FoldKindOf(score); !heldOut {
				continue
			}
			for _, r := range t.Rows {
				if r.Reference || r.Configuration == experiments.ConfigIID {
					continue
				}
				if math.IsNaN(r.Cell(SuiteKey(task, score, "")).Value) && !anyGroupValue(t, r, task, score) {
					continue
				}
				for _, g := range append([]string{""}, t.Groups[task][score]...) {
					name, cases := t.CaseSet(task, score, g)
					l := GroupLine{Task: task, Score: score, Group: g, CaseSet: name, Cases: cases, Row: r,
						Baseline: *newCell(), Seen: r.Cell(SeenKey(task, score, g)), HeldOut: r.Cell(SuiteKey(task, score, g)),
						Gap: r.Cell(GapKey(task, score, g))}
					if base != nil {
						l.Baseline = base.Cell(SuiteKey(task, score, g))
					}
					l.Trivial, l.TrivialBy = l.HeldOut.Trivial, l.HeldOut.TrivialBy
					out = append(out, l)
				}
			}
		}
	}
	return out
}

func anyGroupValue(t *Table, r *Row, task, score string) bool {
	for _, g := range t.Groups[task][score] {
		if !math.IsNaN(r.Cell(SuiteKey(task, score, g)).Value) {
			return true
		}
	}
	return false
}

// groupName is a line's group as the tables write it.
func (l GroupLine) groupName() string {
	if l.Group == "" {
		return "(all " + scoreName(l.Score) + " folds)"
	}
	return l.Group
}

// WriteGroupsMarkdown writes the per-group tables, one per task and
// held-out score: per trained row and group, the number of cases, the
// baseline's and the best constant predictor's value on them, the seen
// run's, the held-out fold's, and the gap seen − held out with its
// p-value (and interval, when the table has intervals). Values are T_test
// suite scores in percent (the mean pass rate over the functionalities
// with cases in the group); a value not above the constant predictor is
// marked MarkTrivial, flagged runs as in Table 3.
func (t *Table) WriteGroupsMarkdown(w io.Writer) error {
	var b strings.Builder
	lines := t.GroupLines()
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && lines[j].Task == lines[i].Task && lines[j].Score == lines[i].Score {
			j++
		}
		if i > 0 {
			b.WriteString("\n")
		}
		l0 := lines[i]
		fmt.Fprintf(&b, "%s, held out by %s: suite scores (T_test pass rates, %%) on each group's cases\n\n", l0.Task, scoreName(l0.Score))
		b.WriteString("| Row | Group | Cases | Baseline | Constant | Seen | Held out | Gap | p |")
		if t.CI > 0 {
			fmt.Fprintf(&b, " %s%% CI (gap) |", strconv.FormatFloat(t.CI, 'g', -1, 64))
		}
		b.WriteString("\n|---|---|---:|---:|---:|---:|---:|---:|---:|")
		if t.CI > 0 {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, l := range lines[i:j] {
			val := func(c Cell, r *Row) string {
				if r == nil {
					return t.valueText(c, "")
				}
				return t.valueText(c, cellMarks(r, c))
			}
			trivial := "–"
			if !math.IsNaN(l.Trivial) {
				trivial = num(l.Trivial) + " (" + l.TrivialBy + ")"
			}
			base := val(l.Baseline, t.Baseline())
			fmt.Fprintf(&b, "| %s | %s | %d%s | %s | %s | %s | %s | %s | %s |", l.Row.Label(), mdEscape(l.groupName()), l.Cases, groupMarks(l),
				base, trivial, val(l.Seen, l.Row), val(l.HeldOut, l.Row), gapText(l.Gap), pText(l.Gap.P))
			if t.CI > 0 {
				fmt.Fprintf(&b, " [%s, %s] |", dash(num(l.Gap.CI.Lo)), dash(num(l.Gap.CI.Hi)))
			}
			b.WriteString("\n")
		}
		if n := groupNote(t, l0.Task, l0.Score); n != "" {
			b.WriteString("\n" + n + "\n")
		}
		i = j
	}
	if len(lines) == 0 {
		b.WriteString("No held-out scores: the sweep has no folds.\n")
	} else if fs := t.groupFootnotes(lines); len(fs) > 0 {
		for _, f := range fs {
			b.WriteString("\n" + f + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// valueText writes a value of a table beside Table 3 (the per-group and
// per-template tables) as Table 3 writes a cell: the value, its footnote
// marks, and ± its standard error over several replicates; – for none.
func (t *Table) valueText(c Cell, marks string) string {
	s := num(c.Value)
	if s == "" {
		return "–"
	}
	s += marks
	if t.seeds() {
		s += " ± " + dash(num(c.SE()))
	}
	return s
}

// groupNote says what a per-group table's whole-column line is computed
// on.
func groupNote(t *Table, task, score string) string {
	name, cases := t.CaseSet(task, score, "")
	if name == "" {
		name = fmt.Sprintf("the whole suite (%d cases)", cases)
	}
	return fmt.Sprintf("Every value of a line is on that line's cases; the first line of a row is the whole column, on %s. Gap = seen − held out; p: approximate randomisation of the seen run against the held-out folds on those cases.", name)
}

func gapText(c Cell) string {
	s := num(c.Value)
	if s == "" {
		return "–"
	}
	if c.Value > 0 {
		s = "+" + s
	}
	return s
}

func pText(p float64) string {
	if math.IsNaN(p) {
		return "–"
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}

var mdReplacer = strings.NewReplacer("|", `\|`)

func mdEscape(s string) string { return mdReplacer.Replace(s) }

// groupFootnotes explains the marks of the per-group tables' cells.
func (t *Table) groupFootnotes(lines []GroupLine) []string {
	var flagged []RunFlag
	anyTrivial := false
	for _, l := range lines {
		for _, c := range []Cell{l.Seen, l.HeldOut} {
			if !math.IsNaN(c.Value) {
				flagged = appendNew(flagged, c.Flags...)
			}
			anyTrivial = anyTrivial || trivial(l.Row, c)
		}
	}
	var out []string
	for _, m := range []string{MarkConstant, MarkNotLearnt} {
		var ids []string
		for _, f := range flagged {
			if flagMark(f.Kind) == m && !slices.Contains(ids, f.Run) {
				ids = append(ids, f.Run)
			}
		}
		if len(ids) > 0 {
			what := map[string]string{MarkConstant: "from a run that predicts (nearly) one class", MarkNotLearnt: "from a run whose suite loss never fell"}[m]
			out = append(out, m+" "+what+": "+strings.Join(ids, ", ")+" (Table 3's footnotes say what was seen).")
		}
	}
	if anyTrivial {
		out = append(out, MarkTrivial+" not above the Constant column: what predicting one class everywhere gets on the same cases.")
	}
	out = append(out, groupBalanceNotes(lines, true)...)
	return out
}

// WriteGroupsCSV writes the per-group tables' lines, full precision: task,
// score, config, method, group ("" for the whole column), case_set (what
// the cases are, "" for the whole suite), cases, baseline, constant and
// constant_by, seen, held_out, gap, gap_p, and with intervals each
// value's ends; over several replicates each value's standard error.
// marks lists the MarkTrivial and flag marks of seen and held_out.
func (t *Table) WriteGroupsCSV(w io.Writer) error {
	cw := csvcell.NewWriter(w)
	head := []string{"task", "score", "config", "method", "group", "case_set", "cases", "baseline", "constant", "constant_by", "seen", "held_out", "gap", "gap_p"}
	level := ""
	if t.seeds() {
		head = append(head, "seen_se", "held_out_se", "gap_se")
	}
	if t.CI > 0 {
		level = "ci" + strconv.FormatFloat(t.CI, 'g', -1, 64)
		for _, v := range []string{"baseline", "seen", "held_out", "gap"} {
			head = append(head, v+"_"+level+"_lo", v+"_"+level+"_hi")
		}
	}
	head = append(head, "seen_marks", "held_out_marks")
	cw.Write(head)
	for _, l := range t.GroupLines() {
		rec := []string{l.Task, l.Score, l.Row.Configuration, l.Row.methodColumn(), l.Group, l.CaseSet, strconv.Itoa(l.Cases),
			csvNum(l.Baseline.Value), csvNum(l.Trivial), l.TrivialBy, csvNum(l.Seen.Value), csvNum(l.HeldOut.Value), csvNum(l.Gap.Value), csvNum(l.Gap.P)}
		if t.seeds() {
			rec = append(rec, csvNum(l.Seen.SE()), csvNum(l.HeldOut.SE()), csvNum(l.Gap.SE()))
		}
		if t.CI > 0 {
			for _, c := range []Cell{l.Baseline, l.Seen, l.HeldOut, l.Gap} {
				rec = append(rec, csvNum(c.CI.Lo), csvNum(c.CI.Hi))
			}
		}
		rec = append(rec, cellMarks(l.Row, l.Seen), cellMarks(l.Row, l.HeldOut))
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}
