package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/splits"
)

// groupBalances collects, per row, task and metadata score, the split's
// counts per value (splits.GroupBalance) that the row's held-out runs
// recorded: every fold of a row's column is trained on the same split, so
// the first that recorded them stands for all.
type groupBalances map[rowKey]map[[2]string][]splits.GroupBalance

func (b groupBalances) add(task string, row rowKey, score string, bal []splits.GroupBalance) {
	if len(bal) == 0 {
		return // an older store's run, or one scored on no metadata column
	}
	if b[row] == nil {
		b[row] = map[[2]string][]splits.GroupBalance{}
	}
	k := [2]string{task, score}
	if b[row][k] == nil {
		b[row][k] = splits.Shares(bal)
	}
}

// balanceOf is a metadata group's counts in the split of the row's runs;
// ok false when they recorded none.
func (r *Row) balanceOf(task, score, group string) (splits.GroupBalance, bool) {
	for _, g := range r.balance[[2]string{task, score}] {
		if g.Value == group {
			return g, true
		}
	}
	return splits.GroupBalance{}, false
}

// skewMark is splits.SkewMark for a held-out metadata group (IdentOut's
// target identities) whose share of T_test in the split the row's runs
// trained on differs from its share of the suite by more than
// splits.SkewTolerance; "" otherwise, and for older stores, whose runs
// recorded no counts.
func skewMark(r *Row, task, score, group string) string {
	if g, ok := r.balanceOf(task, score, group); ok && g.Skewed {
		return splits.SkewMark
	}
	return ""
}

// groupMarks are a per-group line's marks: skewMark, and splits.SmallMark
// when a metadata group rests on fewer than splits.MinTestCases T_test
// cases (its pass rate moves by more than two points with one case).
func groupMarks(l GroupLine) string {
	if l.Group == "" || !experiments.IsMetaScore(l.Score) {
		return ""
	}
	m := skewMark(l.Row, l.Task, l.Score, l.Group)
	if l.Cases < splits.MinTestCases {
		m += splits.SmallMark
	}
	return m
}

// groupBalanceNotes explain the marks of the lines' groups: each skewed
// group with its counts, then the small groups' mark. The lines are the
// per-group view's, or one per row and group column of Table 3 (which
// shows skewMark only).
func groupBalanceNotes(lines []GroupLine, withSmall bool) []string {
	var skewed []string
	small := false
	for _, l := range lines {
		if l.Group == "" || !experiments.IsMetaScore(l.Score) {
			continue
		}
		small = small || strings.Contains(groupMarks(l), splits.SmallMark)
		b, ok := l.Row.balanceOf(l.Task, l.Score, l.Group)
		if !ok || !b.Skewed {
			continue
		}
		what := fmt.Sprintf("%s %s=%s: %d of %d T_test cases (%.1f%%), %d of %d suite cases (%.1f%%)",
			l.Row.Label(), scoreName(l.Score), l.Group, b.Test, total(l.Row.balance[[2]string{l.Task, l.Score}], true), 100*b.TestShare,
			b.Suite, total(l.Row.balance[[2]string{l.Task, l.Score}], false), 100*b.SuiteShare)
		if !slices.Contains(skewed, what) {
			skewed = append(skewed, what)
		}
	}
	var out []string
	if len(skewed) > 0 {
		out = append(out, fmt.Sprintf("%s the group's share of T_test differs from its share of the suite (cases with a value) by more than %.0f points in the split the runs trained on — %s. A split stratified by the column (split: {stratify: COLUMN}) gives each value its suite share.",
			splits.SkewMark, 100*splits.SkewTolerance, strings.Join(skewed, "; ")))
	}
	if small && withSmall {
		out = append(out, fmt.Sprintf("%s fewer than %d T_test cases: a value that rests on few cases (split the suite stratified by the column, split: {stratify: COLUMN}, for its suite share).", splits.SmallMark, splits.MinTestCases))
	}
	return out
}

// total sums the values' T_test cases (test) or suite cases.
func total(bal []splits.GroupBalance, test bool) int {
	n := 0
	for _, g := range bal {
		if test {
			n += g.Test
		} else {
			n += g.Suite
		}
	}
	return n
}

// groupColumnLines are Table 3's metadata group columns as per-group
// lines (row, task, score, group), for groupBalanceNotes.
func (t *Table) groupColumnLines() []GroupLine {
	var out []GroupLine
	for _, r := range t.Rows {
		for _, task := range t.Tasks {
			for _, score := range t.Scores {
				if !experiments.IsMetaScore(score) {
					continue
				}
				for _, g := range t.Groups[task][score] {
					if shown(r.Cell(SuiteKey(task, score, g))) {
						out = append(out, GroupLine{Task: task, Score: score, Group: g, Row: r, Cases: splits.MinTestCases})
					}
				}
			}
		}
	}
	return out
}
