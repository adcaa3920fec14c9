package report

import (
	"math"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
)

// A Measure is what a cell of the table holds.
type Measure int

// The measures of a row's cells.
const (
	// MeasureIID is a task's i.i.d. score: accuracy in percent on its
	// i.i.d. test set.
	MeasureIID Measure = iota
	// MeasureSuite is a task's suite score of one score (the mean pass rate
	// over functionalities) or, with a Group, of one held-out group of a
	// metadata score.
	MeasureSuite
	// MeasureG is G of a task and score: the harmonic mean of the i.i.d.
	// score and the suite score.
	MeasureG
	// MeasureAvg is the mean of a row's G cells; its key has no task.
	MeasureAvg
	// MeasurePassRate is one functionality's pass rate of a task and score,
	// or of one held-out group of a metadata score.
	MeasurePassRate
	// MeasureEvalSet is a task's accuracy in percent on one of its extra
	// i.i.d. evaluation sets (the Group).
	MeasureEvalSet
)

// CellKey locates a cell within its row. A row is a configuration × method
// at the values of its axes; the replicates (seeds × grid points) and the
// folds a cell merges are inside it.
type CellKey struct {
	Measure Measure
	// Task is the task's name; "" for MeasureAvg.
	Task string
	// Score is one of Table.Scores; "" for MeasureIID and MeasureAvg.
	Score string
	// Group is a held-out value of a metadata score (Table.Groups); "" for
	// the whole score.
	Group string
	// Func is the functionality's index in Table.Functionalities[Task],
	// for MeasurePassRate.
	Func int
}

func iidKey(task string) CellKey { return CellKey{Measure: MeasureIID, Task: task} }

func evalSetKey(task, set string) CellKey {
	return CellKey{Measure: MeasureEvalSet, Task: task, Group: set}
}

func suiteKey(task, score, group string) CellKey {
	return CellKey{Measure: MeasureSuite, Task: task, Score: score, Group: group}
}

func gKey(task, score string) CellKey { return CellKey{Measure: MeasureG, Task: task, Score: score} }

var avgKey = CellKey{Measure: MeasureAvg}

func passKey(task, score, group string, k int) CellKey {
	return CellKey{Measure: MeasurePassRate, Task: task, Score: score, Group: group, Func: k}
}

// Cell is one value of the table and everything reported about it. Every
// view (the Markdown, LaTeX and CSV tables, the heatmap, the HTML report)
// reads cells, so a statistic added here is one place to compute and shows
// wherever a view asks for it.
type Cell struct {
	// Value is the mean over the replicates that have one (NaN: none).
	Value float64
	// Reps is each replicate's value, keyed as Table.Replicates; nil for
	// the cells that keep none (suite scores and held-out groups, which
	// Table 3 shows without a spread over seeds).
	Reps map[string]float64
	// P is the p-value against the baseline over test cases and examples
	// (McNemar, approximate randomisation); NaN for the baseline itself and
	// where nothing was tested.
	P float64
	// Q is a pass rate's Benjamini–Hochberg q-value among the
	// functionalities of its task and score; NaN otherwise.
	Q float64
	// PSeeds is the p-value of the paired t-test of Reps against the
	// baseline's, replicate by replicate (NaN with fewer than two pairs).
	PSeeds float64
	// CI is the bootstrap interval (Options.CI); NaNs when not asked.
	CI metrics.Interval
	// Flags are the sanity flags of the runs behind the value; a flagged
	// cell is marked and never bold.
	Flags []RunFlag
}

// newCell is a cell with no value and nothing tested.
func newCell() *Cell {
	nan := math.NaN()
	return &Cell{Value: nan, P: nan, Q: nan, PSeeds: nan, CI: noInterval}
}

var noInterval = metrics.Interval{Lo: math.NaN(), Hi: math.NaN()}

// SE is the standard error of the value over replicates (NaN for one).
func (c Cell) SE() float64 {
	var xs []float64
	for _, v := range c.Reps {
		xs = append(xs, v)
	}
	_, se := metrics.MeanSE(xs)
	return se
}

// Spread is how the value spreads over the replicates (N = 0 when it has
// none).
func (c Cell) Spread() metrics.Spread {
	xs := make([]float64, 0, len(c.Reps))
	for _, v := range c.Reps {
		xs = append(xs, v)
	}
	return metrics.SpreadOf(xs)
}

// Cell returns the row's cell at k: one with a NaN value when the row has
// none there. Its Reps are the row's own: read, never write them.
func (r *Row) Cell(k CellKey) Cell {
	if r.cells == nil {
		return r.fieldCell(k)
	}
	if c := r.cells[k]; c != nil {
		return *c
	}
	return *newCell()
}

// cell returns the row's cell at k to fill, adding it when missing.
func (r *Row) cell(k CellKey) *Cell {
	if r.cells == nil {
		r.cells = map[CellKey]*Cell{}
	}
	c := r.cells[k]
	if c == nil {
		c = newCell()
		r.cells[k] = c
	}
	return c
}

// passRates returns a row's pass rates of a task and score (or held-out
// group) in suite order.
func (t *Table) passRates(r *Row, task, score, group string) []float64 {
	rates := make([]float64, len(t.Functionalities[task]))
	for k := range rates {
		rates[k] = r.Cell(passKey(task, score, group, k)).Value
	}
	return rates
}

// publish writes the row's cells into its exported maps, which show the
// cells by task and score to callers that index them so.
func (r *Row) publish(t *Table) {
	r.IID, r.PIID, r.IIDCI = map[string]float64{}, map[string]float64{}, map[string]metrics.Interval{}
	r.Suite, r.SuiteCI = map[string]map[string]float64{}, map[string]map[string]metrics.Interval{}
	r.G, r.PG = map[string]map[string]float64{}, map[string]map[string]float64{}
	r.Groups = map[string]map[string]map[string]float64{}
	r.PassRates, r.PassRateCI = map[string]map[string][]float64{}, map[string]map[string][]metrics.Interval{}
	r.PFunc, r.QFunc = map[string]map[string][]float64{}, map[string]map[string][]float64{}
	r.Flags = map[string]map[string][]RunFlag{}
	for _, task := range t.Tasks {
		iid := r.Cell(iidKey(task))
		r.IID[task], r.PIID[task], r.IIDCI[task] = iid.Value, iid.P, iid.CI
		r.Flags[task] = map[string][]RunFlag{experiments.ScoreIID: iid.Flags}
		r.Suite[task], r.SuiteCI[task] = map[string]float64{}, map[string]metrics.Interval{}
		r.G[task], r.PG[task] = map[string]float64{}, map[string]float64{}
		r.Groups[task] = map[string]map[string]float64{}
		r.PassRates[task], r.PassRateCI[task] = map[string][]float64{}, map[string][]metrics.Interval{}
		r.PFunc[task], r.QFunc[task] = map[string][]float64{}, map[string][]float64{}
		n := len(t.Functionalities[task])
		for _, score := range t.Scores {
			s, g := r.Cell(suiteKey(task, score, "")), r.Cell(gKey(task, score))
			r.Suite[task][score], r.SuiteCI[task][score] = s.Value, s.CI
			r.G[task][score], r.PG[task][score] = g.Value, g.P
			r.Flags[task][score] = g.Flags
			rates, cis, ps, qs := make([]float64, n), make([]metrics.Interval, n), make([]float64, n), make([]float64, n)
			for k := range n {
				c := r.Cell(passKey(task, score, "", k))
				rates[k], cis[k], ps[k], qs[k] = c.Value, c.CI, c.P, c.Q
			}
			r.PassRates[task][score], r.PassRateCI[task][score] = rates, cis
			r.PFunc[task][score], r.QFunc[task][score] = ps, qs
			for _, group := range t.Groups[task][score] {
				if c := r.cells[suiteKey(task, score, group)]; c != nil {
					if r.Groups[task][score] == nil {
						r.Groups[task][score] = map[string]float64{}
					}
					r.Groups[task][score][group] = c.Value
				}
			}
		}
	}
	avg := r.Cell(avgKey)
	r.Avg, r.PAvg = avg.Value, avg.P
}

// fieldCell is the cell at k of a row assembled by hand from its exported
// maps rather than built from runs: what those maps hold of it, NaN where
// they hold nothing.
func (r *Row) fieldCell(k CellKey) Cell {
	c := *newCell()
	switch k.Measure {
	case MeasureIID:
		c.Value, c.P, c.CI = lookup(r.IID, k.Task), lookup(r.PIID, k.Task), ci(r.IIDCI[k.Task])
		c.Flags = r.Flags[k.Task][experiments.ScoreIID]
	case MeasureSuite:
		c.Flags = r.Flags[k.Task][k.Score]
		if k.Group == "" {
			c.Value, c.CI = lookup(r.Suite[k.Task], k.Score), ci(r.SuiteCI[k.Task][k.Score])
		} else if v, ok := r.Groups[k.Task][k.Score][k.Group]; ok {
			c.Value = v
		} else if r.Configuration == experiments.ConfigIID {
			c.Value = lookup(r.Suite[k.Task], k.Score) // the baseline stands in
		}
	case MeasureG:
		c.Value, c.P = lookup(r.G[k.Task], k.Score), lookup(r.PG[k.Task], k.Score)
		c.Flags = r.Flags[k.Task][k.Score]
	case MeasureAvg:
		c.Value, c.P = r.Avg, r.PAvg
	case MeasurePassRate:
		if k.Group == "" {
			c.Value, c.P, c.Q = at(r.PassRates[k.Task][k.Score], k.Func), at(r.PFunc[k.Task][k.Score], k.Func), at(r.QFunc[k.Task][k.Score], k.Func)
			if cis := r.PassRateCI[k.Task][k.Score]; k.Func < len(cis) {
				c.CI = ci(cis[k.Func])
			}
		}
	}
	return c
}

// lookup is m[k], NaN when m has none.
func lookup(m map[string]float64, k string) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return math.NaN()
}

// ci returns iv, or NaNs for an interval never computed.
func ci(iv metrics.Interval) metrics.Interval {
	if iv == (metrics.Interval{}) {
		return noInterval
	}
	return iv
}
