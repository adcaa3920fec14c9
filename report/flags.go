package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
)

// RunFlag is a sanity flag of one run behind a table cell.
type RunFlag struct {
	Run   string // run ID
	Label string // the run's description
	metrics.Flag
}

// Markers of flagged cells, per flag kind: a constant predictor, a suite
// never learnt. Tables explain them in footnotes (Footnotes).
const (
	MarkConstant  = "†"
	MarkNotLearnt = "‡"
	// MarkTrivial marks a value not above what the best constant
	// predictor (the majority class, or one label everywhere) gets on the
	// same cases: Cell.Trivial.
	MarkTrivial = "§"
)

func flagMark(kind string) string {
	switch kind {
	case metrics.FlagSuiteNotLearnt:
		return MarkNotLearnt
	case flagIncomplete:
		return MarkIncomplete
	}
	return MarkConstant
}

// cellFlags holds, per task, row and score (experiments.ScoreIID for the
// baseline), the flags of the runs behind its cells.
type cellFlags map[string]map[rowKey]map[string][]RunFlag

func (c cellFlags) add(task string, k rowKey, score string, r experiments.Run, flags []metrics.Flag) {
	if len(flags) == 0 {
		return
	}
	if c[task] == nil {
		c[task] = map[rowKey]map[string][]RunFlag{}
	}
	if c[task][k] == nil {
		c[task][k] = map[string][]RunFlag{}
	}
	for _, f := range flags {
		c[task][k][score] = append(c[task][k][score], RunFlag{Run: r.ID(), Label: r.Label(), Flag: f})
	}
}

// fillFlags sets the flags of each row's cells: a cell carries the flags of
// the runs its value comes from — the i.i.d. score the constant-predictor
// flags of the runs scored on i.i.d. data, a G or suite score (and its
// held-out groups) every flag of the score's runs and the i.i.d. runs'
// constant-predictor flags, Avg those of its G cells.
func (t *Table) fillFlags(c cellFlags) {
	for _, row := range t.Rows {
		k := row.key()
		var avg []RunFlag
		for _, task := range t.Tasks {
			byScore := c[task][k]
			iidSource := experiments.ScoreSeen
			if k.config == experiments.ConfigIID {
				iidSource = experiments.ScoreIID
			}
			var iid []RunFlag
			for _, f := range byScore[iidSource] {
				if f.Kind == metrics.FlagConstantIID {
					iid = append(iid, f)
				}
			}
			row.cell(IIDKey(task)).Flags = iid
			for _, m := range t.Metrics[task] {
				row.cell(MetricKey(task, m)).Flags = iid
			}
			for _, score := range t.Scores {
				src := score
				if k.config == experiments.ConfigIID {
					src = experiments.ScoreIID
				}
				fs := slices.Clone(byScore[src])
				if t.hasIID(task) {
					fs = appendNew(fs, iid...)
				}
				row.cell(SuiteKey(task, score, "")).Flags = fs
				row.cell(GKey(task, score)).Flags = fs
				seen := slices.Clone(byScore[experiments.ScoreSeen])
				if k.config == experiments.ConfigIID {
					seen = slices.Clone(byScore[experiments.ScoreIID])
				}
				for _, g := range append([]string{""}, t.Groups[task][score]...) {
					if gc := row.cells[SuiteKey(task, score, g)]; gc != nil && g != "" {
						gc.Flags = fs
					}
					if c := row.cells[SeenKey(task, score, g)]; c != nil {
						c.Flags = seen
					}
					if c := row.cells[GapKey(task, score, g)]; c != nil {
						c.Flags = appendNew(slices.Clone(seen), byScore[src]...)
					}
				}
				if t.hasIID(task) && !math.IsNaN(row.Cell(GKey(task, score)).Value) {
					avg = appendNew(avg, fs...)
				}
			}
		}
		row.cell(AvgKey).Flags = avg
	}
}

func appendNew(to []RunFlag, fs ...RunFlag) []RunFlag {
	for _, f := range fs {
		if !slices.ContainsFunc(to, func(g RunFlag) bool { return g.Run == f.Run && g.Kind == f.Kind }) {
			to = append(to, f)
		}
	}
	return to
}

// marks returns the markers of a cell's flags, one per kind.
func marks(fs []RunFlag) string {
	var m []string
	for _, f := range fs {
		if s := flagMark(f.Kind); !slices.Contains(m, s) {
			m = append(m, s)
		}
	}
	slices.Sort(m)
	return strings.Join(m, "")
}

// Footnotes explains the table's markers — per marker, every flagged run
// behind a shown cell with what was seen, and the constant predictors'
// values the cells marked MarkTrivial do not beat — then the cases of the
// columns not computed on the whole suite (Notes). None when there is
// nothing to explain.
func (t *Table) Footnotes() []string {
	var all []RunFlag
	cols := t.Columns()
	for _, row := range t.Rows {
		for _, c := range cols {
			if cell := c.Cell(row); shown(cell) {
				all = appendNew(all, cell.Flags...)
			}
		}
	}
	all = appendNew(all, t.missingRows...)
	var out []string
	for _, mark := range []string{MarkConstant, MarkNotLearnt, MarkIncomplete} {
		// Per run, in the order met, what each of its flags saw.
		var order []string
		seen := map[string][]string{}
		label := map[string]string{}
		for _, f := range all {
			if flagMark(f.Kind) != mark {
				continue
			}
			if _, ok := seen[f.Run]; !ok {
				order = append(order, f.Run)
			}
			_, why, ok := strings.Cut(f.Reason, ": ")
			if !ok {
				why = f.Reason
			}
			seen[f.Run], label[f.Run] = append(seen[f.Run], why), f.Label
		}
		var runs []string
		for _, id := range order {
			runs = append(runs, fmt.Sprintf("run %s (%s): %s", id, label[id], strings.Join(seen[id], ", ")))
		}
		if len(runs) == 0 {
			continue
		}
		what := "a constant predictor (the value is what predicting one class scores, not a result)"
		switch mark {
		case MarkNotLearnt:
			what = "a suite never learnt (its loss never fell below its start)"
		case MarkIncomplete:
			what = "incomplete: runs of the sweep that are not done (beluga report --partial)"
		}
		out = append(out, mark+" "+what+": "+strings.Join(runs, "; ")+".")
	}
	if n := t.trivialNote(cols); n != "" {
		out = append(out, n)
	}
	out = append(out, groupBalanceNotes(t.groupColumnLines(), false)...)
	return append(out, t.Notes()...)
}

// trivialNote explains MarkTrivial: per column with a marked cell, the best
// constant predictor's value there.
func (t *Table) trivialNote(cols []Column) string {
	var parts []string
	for _, c := range cols {
		var best Cell
		marked := false
		for _, row := range t.Rows {
			if cell := c.Cell(row); trivial(row, cell) {
				marked, best = true, cell
			}
		}
		if marked {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", c.Header, num(best.Trivial), best.TrivialBy))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return MarkTrivial + " not above what a constant predictor gets on the same cases (the best of the majority class and one label everywhere; --baselines shows their rows): " + strings.Join(parts, "; ") + "."
}

// Notes says which cases the columns not computed on the whole suite are
// computed on: every row of such a column (baseline, constant
// predictors, held-out folds) is scored on them.
func (t *Table) Notes() []string {
	var out []string
	for _, c := range t.Columns() {
		if c.Key.Measure != MeasureG && c.Key.Measure != MeasureSuite {
			continue
		}
		name, _ := t.CaseSet(c.Key.Task, c.Key.Score, c.Key.Group)
		if name == "" || c.Key.Group != "" {
			continue
		}
		note := c.Header + ": computed on " + name
		if col, ok := metaColumn(c.Key.Score); ok {
			note += ", each T_" + col + "=VALUE column on that value's cases"
		}
		out = append(out, note+"; every row is scored on the same cases.")
	}
	return out
}

// flagsCSV lists a row's flagged cells for the CSV's flags column:
// "COLUMN: kind (run ID)", separated by "; ".
func (t *Table) flagsCSV(r *Row) string {
	var parts []string
	for _, c := range t.Columns() {
		cell := c.Cell(r)
		if !shown(cell) {
			continue
		}
		for _, f := range cell.Flags {
			parts = append(parts, fmt.Sprintf("%s: %s (%s)", c.Header, f.Kind, f.Run))
		}
	}
	return strings.Join(parts, "; ")
}

// anyFlags says whether some shown cell is flagged.
func (t *Table) anyFlags() bool {
	for _, r := range t.Rows {
		if t.flagsCSV(r) != "" {
			return true
		}
	}
	return false
}
