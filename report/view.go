package report

import (
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/experiments"
)

// This file exposes to other views (the HTML report of package
// report/explore) the layout decisions the static table and figure make, so
// that every view shows the same columns, panels and marks.

// FigureOrder returns the task's functionalities (indices into
// Functionalities[task]) in Figure 1's column order.
func (t *Table) FigureOrder(task string) []int { return t.figureOrder(task) }

// FigureScores lists the scores that get a row of heatmap panels: those some
// row other than the baseline has.
func (t *Table) FigureScores() []string { return t.figureScores() }

// Mark is +1 when a row's value in column c is significantly (p <
// Significance) at or above the baseline's, −1 when below, else 0: the
// Markdown table's ↑ / ↓ and the LaTeX table's colours.
func (t *Table) Mark(c Column, r *Row) int {
	if len(t.Rows) == 0 {
		return 0
	}
	return t.mark(c, c.Cell(r))
}

// Bold returns whether a row's value in column j of cols is set in bold,
// as the Markdown and LaTeX tables decide it: the column's largest as
// shown, not tied, the cell without sanity flags, the row not a computed
// reference.
func (t *Table) Bold(cols []Column) func(j int, r *Row) bool {
	best := t.best(cols)
	return func(j int, r *Row) bool { return bold(best, j, r, cols[j].Cell(r)) }
}

// FlagMarks returns the markers of a cell's sanity flags (the tables'
// footnote marks), one per kind.
func FlagMarks(fs []RunFlag) string { return marks(fs) }

// CellMarks returns a row's cell's footnote markers as the tables write
// them: its sanity flags' and MarkTrivial.
func CellMarks(r *Row, c Cell) string { return cellMarks(r, c) }

// FigureValues returns what a row's heatmap panel of a figure score
// (FigureScores: a score, or one group of a metadata score) shows: the
// suite score and the pass rates in suite order, on the panel's cases.
func (t *Table) FigureValues(r *Row, task, score string) (float64, []float64) {
	return t.figureValues(r, task, score)
}

// FigureGroup splits a figure score into its metadata score and group
// ("meta:target_ident=women" → meta:target_ident, women); ok is false for
// a score's own panel.
func (t *Table) FigureGroup(score string) (meta, group string, ok bool) {
	if slices.Contains(t.Scores, score) {
		return score, "", false
	}
	for _, task := range t.Tasks {
		for s, groups := range t.Groups[task] {
			for _, g := range groups {
				if groupFigureScore(s, g) == score {
					return s, g, true
				}
			}
		}
	}
	return score, "", false
}

// ScoreLabel is a score or figure score as tables and figures name it:
// seen, func, class, type, target_ident, target_ident=women.
func ScoreLabel(score string) string {
	m, g, _ := strings.Cut(score, "=")
	if g != "" {
		return scoreName(m) + "=" + g
	}
	return scoreName(score)
}

// SplitHeader splits a column header ("G_seen SENT", "IID SENT", "Avg")
// into its measure and task.
func SplitHeader(h string) (measure, task string) { return splitHeader(h) }

// Replicate names the seed × grid point a run belongs to, as the table
// pairs runs with the baseline's (before Table.Replicates shortens names).
func Replicate(r experiments.Run) string { return replicate(r) }

// Marks returns a row's cell's footnote markers in the column as Table 3
// writes them: CellMarks, and a metadata group column's skew mark
// (splits.SkewMark).
func (c Column) Marks(r *Row) string { return c.marks(r, c.Cell(r)) }

// GroupMarks returns the marks of a per-group line's case count as the
// per-group tables write them: splits.SkewMark for a group whose share of
// T_test is skewed, splits.SmallMark for one with few T_test cases.
func GroupMarks(l GroupLine) string { return groupMarks(l) }

// GroupFootnotes explains the marks of the per-group tables' lines (their
// flags, MarkTrivial, and the skewed and small groups with their counts)
// as the Markdown per-group view does.
func (t *Table) GroupFootnotes(lines []GroupLine) []string { return t.groupFootnotes(lines) }
