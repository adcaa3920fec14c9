package report

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
)

// Functionality describes one column of a per-functionality view.
type Functionality struct {
	Name, Class, Type string
}

// Row is one row of Table 3: the IID baseline or a configuration × method.
type Row struct {
	Configuration, Method string
	// IID[task] is the i.i.d. score in percent (NaN when missing).
	IID map[string]float64
	// Suite[task][score] and G[task][score] for score in experiments.Scores.
	Suite map[string]map[string]float64
	G     map[string]map[string]float64
	// PassRates[task][score][k] is the pass rate of functionality k of the
	// task (NaN when filtered or not run).
	PassRates map[string]map[string][]float64
	// Avg is the mean of the row's G values.
	Avg float64
	// PIID[task], PG[task][score] and PAvg are the p-values of the row
	// against the baseline (NaN for the baseline itself).
	PIID map[string]float64
	PG   map[string]map[string]float64
	PAvg float64
}

// Label is the row's display name, e.g. "IID+T: LP".
func (r *Row) Label() string {
	m := experiments.MethodNames[r.Method]
	if m == "" {
		m = r.Method
	}
	return r.Configuration + ": " + m
}

// Table is Table 3 with everything needed for Figure 1.
type Table struct {
	Tasks  []string
	Scores []string
	// Functionalities[task] in suite order.
	Functionalities map[string][]Functionality
	Rows            []*Row
}

// Options controls significance testing.
type Options struct {
	// Trials of approximate randomisation; 0 means 10,000 (BeLUGA's).
	Trials int
	// Seed of the swap draws; BeLUGA uses 42.
	Seed uint64
}

// cell holds one (task, configuration, method, score) cell's runs by replicate.
type cell map[string]*experiments.Result // replicate key → result (merged over folds)

// replicate identifies a seed × grid point; runs of one replicate are paired
// with the baseline's run of the same replicate.
func replicate(r experiments.RunSpec) string {
	keys := make([]string, 0, len(r.Hyper))
	for k := range r.Hyper {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := fmt.Sprint(r.Seed)
	for _, k := range keys {
		s += fmt.Sprintf(" %s=%v", k, r.Hyper[k])
	}
	return s
}

type rowKey struct{ config, method string }

// FromStore builds the table from the done runs among runs; runs not done
// are left out (their cells stay empty).
func FromStore(store *experiments.Store, runs []experiments.RunSpec, opt Options) (*Table, error) {
	var done []experiments.RunSpec
	for _, r := range runs {
		if store.State(r.ID()) == experiments.Done {
			done = append(done, r)
		}
	}
	if len(done) == 0 {
		return nil, fmt.Errorf("run store %s: no finished runs", store.Dir)
	}
	return build(store, done, opt)
}

// FromDir builds the table from every done run in a store directory.
func FromDir(dir string, opt Options) (*Table, error) {
	store := &experiments.Store{Dir: dir}
	runs, err := store.DoneRuns()
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("run store %s: no finished runs", dir)
	}
	sortRuns(runs)
	return build(store, runs, opt)
}

// sortRuns orders runs read from a directory as Expand would have listed them.
func sortRuns(runs []experiments.RunSpec) {
	rank := func(list []string, v string) int {
		if i := slices.Index(list, v); i >= 0 {
			return i
		}
		return len(list)
	}
	configs := append([]string{experiments.ConfigIID}, experiments.Configurations...)
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		if x, y := rank(configs, a.Configuration), rank(configs, b.Configuration); x != y {
			return x < y
		}
		if x, y := rank(experiments.Methods, a.Method), rank(experiments.Methods, b.Method); x != y {
			return x < y
		}
		return false
	})
}

func build(store *experiments.Store, runs []experiments.RunSpec, opt Options) (*Table, error) {
	t := &Table{Scores: experiments.Scores, Functionalities: map[string][]Functionality{}}
	cells := map[string]map[rowKey]map[string]cell{} // task → row → score → cell
	var rowOrder []rowKey
	for _, r := range runs {
		res, err := experiments.ReadResult(store.RunDir(r.ID()))
		if err != nil {
			return nil, fmt.Errorf("run %s (%s): %w", r.ID(), r.Label(), err)
		}
		if !slices.Contains(t.Tasks, r.Task) {
			t.Tasks = append(t.Tasks, r.Task)
			cells[r.Task] = map[rowKey]map[string]cell{}
		}
		k := rowKey{r.Configuration, r.Method}
		if !slices.Contains(rowOrder, k) {
			rowOrder = append(rowOrder, k)
		}
		if cells[r.Task][k] == nil {
			cells[r.Task][k] = map[string]cell{}
		}
		score := r.Score
		if score == experiments.ScoreFunc || score == experiments.ScoreClass || score == experiments.ScoreType || score == experiments.ScoreSeen || score == experiments.ScoreIID {
			if cells[r.Task][k][score] == nil {
				cells[r.Task][k][score] = cell{}
			}
			c := cells[r.Task][k][score]
			rep := replicate(r)
			if prev := c[rep]; prev != nil {
				// Held-out folds of one cell: merge their functionalities; the
				// i.i.d. score of a held-out cell is not used.
				prev.Functionalities = append(prev.Functionalities, res.Functionalities...)
			} else {
				c[rep] = res
			}
		}
		// The functionality list comes from a run scored on all of them.
		if score == experiments.ScoreIID || (score == experiments.ScoreSeen && t.Functionalities[r.Task] == nil) {
			var fs []Functionality
			for _, f := range res.Functionalities {
				fs = append(fs, Functionality{f.Name, f.Class, f.Type})
			}
			t.Functionalities[r.Task] = fs
		}
	}
	for _, k := range rowOrder {
		row := &Row{Configuration: k.config, Method: k.method,
			IID: map[string]float64{}, Suite: map[string]map[string]float64{}, G: map[string]map[string]float64{},
			PassRates: map[string]map[string][]float64{}, Avg: math.NaN(),
			PIID: map[string]float64{}, PG: map[string]map[string]float64{}, PAvg: math.NaN()}
		t.Rows = append(t.Rows, row)
	}
	// The baseline row first.
	sort.SliceStable(t.Rows, func(i, j int) bool {
		return t.Rows[i].Configuration == experiments.ConfigIID && t.Rows[j].Configuration != experiments.ConfigIID
	})
	data := map[*Row]*rowData{}
	for _, row := range t.Rows {
		data[row] = newRowData(t, cells, rowKey{row.Configuration, row.Method})
		data[row].fill(t, row)
	}
	if base := t.Rows[0]; base.Configuration == experiments.ConfigIID {
		for _, row := range t.Rows[1:] {
			significance(t, data[base], data[row], row, opt)
		}
	}
	return t, nil
}

// rowData holds, per replicate, the i.i.d. correctness per task and the
// verdicts per task, score and functionality: what scores are computed from
// and what randomisation swaps.
type rowData struct {
	reps []string
	iid  map[string]map[string][]bool              // task → rep → correct
	hits map[string]map[string]map[string][][]byte // task → score → rep → func → verdicts
}

func newRowData(t *Table, cells map[string]map[rowKey]map[string]cell, k rowKey) *rowData {
	d := &rowData{iid: map[string]map[string][]bool{}, hits: map[string]map[string]map[string][][]byte{}}
	for _, task := range t.Tasks {
		byScore := cells[task][k]
		d.iid[task] = map[string][]bool{}
		d.hits[task] = map[string]map[string][][]byte{}
		iidCell := byScore[experiments.ScoreSeen]
		if k.config == experiments.ConfigIID {
			iidCell = byScore[experiments.ScoreIID]
		}
		for rep, res := range iidCell {
			d.iid[task][rep] = res.IIDCorrect
			if !slices.Contains(d.reps, rep) {
				d.reps = append(d.reps, rep)
			}
		}
		for _, score := range t.Scores {
			c := byScore[score]
			if k.config == experiments.ConfigIID {
				c = byScore[experiments.ScoreIID]
			}
			d.hits[task][score] = map[string][][]byte{}
			for rep, res := range c {
				byName := map[string]string{}
				for _, f := range res.Functionalities {
					byName[f.Name] = f.Verdicts
				}
				v := make([][]byte, len(t.Functionalities[task]))
				for i, f := range t.Functionalities[task] {
					if s, ok := byName[f.Name]; ok {
						v[i] = []byte(s)
					}
				}
				d.hits[task][score][rep] = v
			}
		}
	}
	sort.Strings(d.reps)
	return d
}

func passRate(v []byte) float64 {
	return experiments.FuncResult{Verdicts: string(v)}.PassRate()
}

func accuracy(c []bool) float64 {
	return (&experiments.Result{IIDCorrect: c}).IIDScore()
}

func (d *rowData) fill(t *Table, row *Row) {
	var gs []float64
	for _, task := range t.Tasks {
		var iids []float64
		for _, c := range d.iid[task] {
			iids = append(iids, accuracy(c))
		}
		row.IID[task] = metrics.Mean(iids)
		row.Suite[task] = map[string]float64{}
		row.G[task] = map[string]float64{}
		row.PassRates[task] = map[string][]float64{}
		row.PG[task] = map[string]float64{}
		row.PIID[task] = math.NaN()
		for _, score := range t.Scores {
			reps := d.hits[task][score]
			n := len(t.Functionalities[task])
			rates := make([]float64, n)
			var suite, g []float64
			for i := range rates {
				var per []float64
				for _, v := range reps {
					if v[i] != nil {
						per = append(per, passRate(v[i]))
					}
				}
				rates[i] = metrics.NanMean(per)
			}
			for rep, v := range reps {
				s := suiteScore(v)
				suite = append(suite, s)
				if c, ok := d.iid[task][rep]; ok {
					g = append(g, g100(accuracy(c), s))
				}
			}
			row.PassRates[task][score] = rates
			row.Suite[task][score] = metrics.Mean(suite)
			row.G[task][score] = metrics.Mean(g)
			row.PG[task][score] = math.NaN()
			gs = append(gs, row.G[task][score])
		}
	}
	row.Avg = metrics.Mean(gs)
}

// suiteScore is the mean pass rate over functionalities; NaN when a
// functionality has no run yet, so that an incomplete cell never looks
// complete.
func suiteScore(v [][]byte) float64 {
	rates := make([]float64, 0, len(v))
	for _, f := range v {
		if f == nil {
			return math.NaN()
		}
		rates = append(rates, passRate(f))
	}
	return metrics.NanMean(rates)
}

// g100 is G on percentages.
func g100(iid, suite float64) float64 { return metrics.HarmonicMean(iid, suite) }

// significance fills row's p-values against the baseline with package
// metrics' tests; replicates (seeds, grid points) are concatenated, each
// paired with the baseline's run of the same replicate.
func significance(t *Table, base, d *rowData, row *Row, opt Options) {
	trials := opt.Trials
	if trials <= 0 {
		trials = 10000
	}
	a := metrics.Scores{IID: map[string][]float64{}, Suite: map[string]map[string]map[string][]float64{}}
	b := metrics.Scores{IID: map[string][]float64{}, Suite: map[string]map[string]map[string][]float64{}}
	ro := metrics.RandomisationOptions{Tasks: t.Tasks, ScoreNames: t.Scores, Functionalities: map[string][]string{},
		Trials: trials, Seed: uint32(opt.Seed)}
	for _, task := range t.Tasks {
		for _, rep := range d.reps {
			x, ok1 := base.iid[task][rep]
			y, ok2 := d.iid[task][rep]
			if ok1 && ok2 {
				a.IID[task] = append(a.IID[task], boolHits(x)...)
				b.IID[task] = append(b.IID[task], boolHits(y)...)
			}
		}
		if len(a.IID[task]) > 0 {
			if p, err := metrics.McNemarExact(a.IID[task], b.IID[task]); err == nil {
				row.PIID[task] = p
			}
		}
		fs := t.Functionalities[task]
		names := make([]string, len(fs))
		for k, f := range fs {
			names[k] = f.Name
		}
		ro.Functionalities[task] = names
		a.Suite[task], b.Suite[task] = map[string]map[string][]float64{}, map[string]map[string][]float64{}
		for _, score := range t.Scores {
			a.Suite[task][score], b.Suite[task][score] = map[string][]float64{}, map[string][]float64{}
			for _, rep := range d.reps {
				x, y := base.hits[task][score][rep], d.hits[task][score][rep]
				for k, name := range names {
					if x != nil {
						a.Suite[task][score][name] = append(a.Suite[task][score][name], verdictHits(x[k])...)
					}
					if y != nil {
						b.Suite[task][score][name] = append(b.Suite[task][score][name], verdictHits(y[k])...)
					}
				}
			}
		}
	}
	if math.IsNaN(row.Avg) {
		return // an incomplete row has nothing to test
	}
	res, err := metrics.Randomisation(a, b, ro)
	if err != nil {
		return // shapes differ: the row and the baseline saw different cases
	}
	for _, task := range t.Tasks {
		for _, score := range t.Scores {
			row.PG[task][score] = res.G[task][score]
		}
	}
	row.PAvg = res.Avg
}

func boolHits(c []bool) []float64 {
	h := make([]float64, len(c))
	for i, v := range c {
		if v {
			h[i] = 1
		}
	}
	return h
}

func verdictHits(v []byte) []float64 {
	h := make([]float64, len(v))
	for i, b := range v {
		switch b {
		case experiments.Pass:
			h[i] = 1
		case experiments.Filtered:
			h[i] = math.NaN()
		}
	}
	return h
}

func experimentsMethodName(m string) string { return experiments.MethodNames[m] }
