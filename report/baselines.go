package report

import (
	"math"
	"slices"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
)

// ConfigBaseline is the configuration of the computed baseline rows
// (Options.Baselines): a constant predictor per label and the majority
// class, scored on the same i.i.d. test set and suite cases as the runs,
// and never trained.
const ConfigBaseline = "Baseline"

// Methods of the computed baseline rows: MethodMajority predicts, per task,
// the label most frequent among the i.i.d. test set's gold labels;
// MethodConstant + label predicts that label everywhere.
const (
	MethodMajority = "majority class"
	MethodConstant = "constant: "
)

// addBaselines computes the constant predictors' rows (t.refs) from the
// constant predictors' results the runs scored on every functionality
// carry (the IID baseline's, else a seen run's, of the first replicate),
// scored on every column's and group's cases as the other rows are, and
// returns their data. Stores written before runs carried them add none.
func (t *Table) addBaselines(runs []experiments.Run, results []*experiments.Result) map[*Row]*rowData {
	type source struct {
		rep string
		res *experiments.Result
		iid bool // from the IID baseline's run
	}
	src := map[string]source{}
	for i, r := range runs {
		res := results[i]
		if len(res.Constant) == 0 || (r.Score != experiments.ScoreIID && r.Score != experiments.ScoreSeen) {
			continue
		}
		if s, ok := src[r.Task]; !ok || (r.Score == experiments.ScoreIID && !s.iid) {
			src[r.Task] = source{replicate(r), res, r.Score == experiments.ScoreIID}
		}
	}
	if len(src) == 0 {
		return nil
	}
	// Rows: the majority class, then one constant per label in task order.
	methods := []string{MethodMajority}
	for _, task := range t.Tasks {
		s, ok := src[task]
		if !ok {
			continue
		}
		for _, c := range s.res.Constant {
			if m := MethodConstant + c.Label; !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
		}
	}
	data := map[*Row]*rowData{}
	for _, m := range methods {
		row := &Row{Configuration: ConfigBaseline, Method: m, Reference: true}
		d := &rowData{iid: map[string]map[string][]bool{}, hits: map[string]map[string]map[string][][]byte{},
			seen: map[string]map[string][][]byte{}, metricVals: map[string]map[string]map[string]float64{}}
		for _, task := range t.Tasks {
			d.iid[task] = map[string][]bool{}
			d.hits[task] = map[string]map[string][][]byte{}
			d.seen[task] = map[string][][]byte{}
			d.metricVals[task] = map[string]map[string]float64{}
			s, ok := src[task]
			if !ok {
				continue
			}
			c := constantFor(s.res, m)
			if c == nil {
				continue
			}
			if !slices.Contains(d.reps, s.rep) {
				d.reps = append(d.reps, s.rep)
			}
			if correct := s.res.ConstantIIDCorrect(*c); len(correct) > 0 {
				d.iid[task][s.rep] = correct
				d.metricVals[task][s.rep] = constantMetrics(s.res.IIDGold, c.Class, len(s.res.Constant))
			}
			v := verdictsOf(t, task, &experiments.Result{Functionalities: c.Functionalities}, false)
			d.seen[task][s.rep] = v
			for _, score := range t.Scores {
				d.hits[task][score] = map[string][][]byte{s.rep: t.set(task, score, "").restrict(v)}
			}
		}
		d.fill(t, row)
		t.refs = append(t.refs, row)
		data[row] = d
	}
	return data
}

// constantMetrics are the i.i.d. metrics, in [0, 1], of predicting class
// for every example of gold, among labels classes: accuracy, macro-F1 and
// (two classes, the second positive) F1, as package train computes them.
func constantMetrics(gold []int, class, labels int) map[string]float64 {
	pred := make([]int, len(gold))
	for i := range pred {
		pred[i] = class
	}
	out := map[string]float64{"accuracy": metrics.Accuracy(pred, gold), "macro_f1": metrics.MacroF1(pred, gold, labels)}
	if labels == 2 {
		out["f1"] = metrics.F1(pred, gold, 1)
	}
	return out
}

// fillTrivial sets every cell's Trivial: the best of the constant
// predictors' values in the same cell (on the same cases).
func (t *Table) fillTrivial() {
	if len(t.refs) == 0 {
		return
	}
	for _, row := range append(slices.Clone(t.Rows), t.refs...) {
		for k, c := range row.cells {
			for _, ref := range t.refs {
				rc := ref.cells[k]
				if rc == nil || math.IsNaN(rc.Value) || (!math.IsNaN(c.Trivial) && rc.Value <= c.Trivial) {
					continue
				}
				c.Trivial, c.TrivialBy = rc.Value, ref.Method
			}
		}
	}
}

// constantFor returns the constant predictor a baseline row's method
// names: a label's, or for the majority class the one right on the most
// i.i.d. test examples (without i.i.d. data, none).
func constantFor(res *experiments.Result, method string) *experiments.ConstantResult {
	if method != MethodMajority {
		for i, c := range res.Constant {
			if MethodConstant+c.Label == method {
				return &res.Constant[i]
			}
		}
		return nil
	}
	var best *experiments.ConstantResult
	most := 0
	for i, c := range res.Constant {
		n := 0
		for _, ok := range res.ConstantIIDCorrect(c) {
			if ok {
				n++
			}
		}
		if n > most {
			best, most = &res.Constant[i], n
		}
	}
	return best
}
