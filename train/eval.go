package train

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/suitescore"
)

// evaluate scores the i.i.d. test set (when the run has one) by the task's
// metrics, accuracy its score, and the suite with the task's predictions;
// a fold keyed by case metadata keeps the verdicts of the cases it holds
// out.
func (p *classRun) evaluate(ctx context.Context, evalLimit int, outDir string) (*Result, error) {
	eval, err := p.predictor()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &Result{Labels: p.task.Labels}
	if p.fold != nil {
		if col, ok := p.fold.Kind.MetaColumn(); ok {
			out.GroupBalance = splits.Balance(p.suite, col)
		}
	}
	if p.iidTest != nil {
		scores, preds, err := evalIID(ctx, eval, p.task, p.iidTest, outDir)
		if err != nil {
			return nil, err
		}
		acc := scores["accuracy"]
		out.IIDScore, out.IIDMetrics, out.IIDPredicted = &acc, scores, preds
		out.IIDGold = make([]int, len(p.iidTest))
		out.IIDCorrect = make([]bool, len(p.iidTest))
		for i, e := range p.iidTest {
			out.IIDGold[i], out.IIDCorrect[i] = e.Label, preds[i] == e.Label
		}
	}
	scored := scoredSuite(p.suite, p.fold, evalLimit)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var keep func(string, int) bool
	if p.fold != nil && p.fold.ByMeta() {
		// The fold's functionalities keep their other values' cases, which
		// other folds answer for.
		holds := map[string]map[int]bool{}
		for _, f := range scored.Functionalities {
			holds[f.Name] = map[int]bool{}
			for _, c := range f.Cases {
				holds[f.Name][c.ID] = p.fold.HoldsOut(f, c)
			}
		}
		keep = func(f string, id int) bool { return holds[f][id] }
	}
	sr, constant, err := evalSuite(ctx, eval, p.task, scored, keep, outDir)
	if err != nil {
		return nil, err
	}
	out.Suite, out.Constant = sr, constant
	out.IIDEval, out.IIDEvalCorrect, err = evalSets(ctx, eval, p.task, p.evalSets, outDir)
	if p.prompted != nil && err == nil {
		out.Unparsed = p.prompted.unparsedCount()
		out.Templates, err = p.templateScores(ctx, evalLimit, outDir)
	}
	return out, err
}

// evalIID predicts the i.i.d. test set, writes the predictions — as
// BeLUGA writes them (iid_predictions.txt: class and probabilities) and with
// each example's text and gold label (iid_predictions.jsonl) — and returns
// the task's metrics and the predicted classes.
func evalIID(ctx context.Context, m predictFunc, task *Task, test []datasets.Example, outDir string) (map[string]float64, []int, error) {
	return evalIIDTo(ctx, m, task, test, filepath.Join(outDir, "iid_predictions"))
}

// evalIIDTo is evalIID writing the predictions to base+".txt" and
// base+".jsonl".
func evalIIDTo(ctx context.Context, m predictFunc, task *Task, test []datasets.Example, base string) (map[string]float64, []int, error) {
	inputs := make([]predict.Input, len(test))
	gold := make([]int, len(test))
	for i, e := range test {
		inputs[i] = predict.NewInput(e.Text, e.Pair, e.IsPair)
		gold[i] = e.Label
	}
	outs, err := m(ctx, inputs)
	if err != nil {
		return nil, nil, err
	}
	name := func(c int) string {
		if c >= 0 && c < len(task.Labels) {
			return task.Labels[c]
		}
		return strconv.Itoa(c)
	}
	preds := make([]int, len(outs))
	var buf, lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	for i, o := range outs {
		preds[i] = metrics.Argmax(o.Probs)
		if o.Probs == nil {
			preds[i] = -1 // a prompted model's unparsed answer: wrong, never a label
		}
		buf.WriteString(strconv.Itoa(preds[i]))
		probs := make([]float64, len(o.Probs))
		for c, p := range o.Probs {
			fmt.Fprintf(&buf, " %g", p)
			probs[c] = float64(p)
		}
		buf.WriteByte('\n')
		k := preds[i]
		line := metrics.CaseInput{Text: test[i].Text, Label: name(gold[i]), Pred: name(k), PredClass: &k, Probs: probs}
		if k < 0 {
			line.Pred, line.Probs = unparsedPred, nil
		}
		if test[i].IsPair {
			line.Pair = test[i].Pair
		}
		if err := enc.Encode(line); err != nil {
			return nil, nil, err
		}
	}
	if err := atomicfile.WriteFile(base+".txt", buf.Bytes()); err != nil {
		return nil, nil, err
	}
	if err := atomicfile.WriteFile(base+".jsonl", lines.Bytes()); err != nil {
		return nil, nil, err
	}
	scores, err := task.iidScores(preds, gold)
	return scores, preds, err
}

// evalSuite predicts every input of the T_test cases of s in suite order
// and scores them (suitescore.Run, as beluga test does), reading the
// model's probabilities as BeLUGA does (suiteReading); it writes the
// predictions as BeLUGA writes them, the results and the case verdicts,
// and scores the constant predictors beside them. keep, when set, is the
// cases the run answers for (metrics.Result.Restrict): the others are
// filtered before the results are written.
func evalSuite(ctx context.Context, m predictFunc, task *Task, s *suites.Suite, keep func(functionality string, caseID int) bool, outDir string) (*metrics.Result, []ConstantScore, error) {
	read, err := suiteReading(task, s)
	if err != nil {
		return nil, nil, err
	}
	opt := metrics.ScoreOptions{Split: suites.SplitTest}
	sc, err := suitescore.Run(ctx, s, m, read.Read, opt)
	if err != nil {
		return nil, nil, err
	}
	// What predicting one task label for every input scores: the constant
	// baselines of reports, computed rather than trained.
	var constant []ConstantScore
	for c, label := range task.Labels {
		onehot := make([]float32, len(task.Labels))
		onehot[c] = 1
		r, err := metrics.Score(s, slices.Repeat([]metrics.Prediction{read.Read(onehot)}, len(sc.Predictions)), opt)
		if err != nil {
			return nil, nil, err
		}
		constant = append(constant, ConstantScore{Label: label, Suite: r})
	}
	var buf bytes.Buffer
	for _, p := range sc.Predictions {
		read.WriteLine(&buf, p)
	}
	if err := atomicfile.WriteFile(filepath.Join(outDir, "suite_predictions.txt"), buf.Bytes()); err != nil {
		return nil, nil, err
	}
	if keep != nil {
		sc.Result.Restrict(keep)
	}
	return sc.Result, constant, writeSuiteResult(sc.Result, outDir)
}

// suiteReading is how a run reads its model's probabilities on s
// (suitescore.BeLUGA): a 2-class sentiment model squashed to CheckList's
// three classes, two classes as P(second class), more as class and
// probabilities in the suite's label order.
func suiteReading(task *Task, s *suites.Suite) (suitescore.BeLUGA, error) {
	if modelLabel, ok := task.squash(s); ok {
		return suitescore.BeLUGA{Labels: len(s.Labels), Squash: true, ToSuite: modelLabel}, nil
	}
	toSuite, err := task.suiteClasses(s)
	return suitescore.BeLUGA{Labels: len(s.Labels), ToSuite: toSuite}, err
}

// ConstantScore is what predicting one label for every input scores on
// the suite.
type ConstantScore struct {
	Label string
	Suite *metrics.Result
}

// scoreSuite scores predictions of the T_test inputs of s in suite order
// and writes the per-functionality results and per-case verdicts.
func scoreSuite(s *suites.Suite, preds []metrics.Prediction, outDir string) (*metrics.Result, error) {
	r, err := metrics.Score(s, preds, metrics.ScoreOptions{Split: suites.SplitTest})
	if err != nil {
		return nil, err
	}
	return r, writeSuiteResult(r, outDir)
}

// writeSuiteResult writes a run's suite results and case verdicts.
func writeSuiteResult(r *metrics.Result, outDir string) error {
	if err := r.WriteJSON(filepath.Join(outDir, "results.json")); err != nil {
		return err
	}
	return r.WriteCases(filepath.Join(outDir, "cases.jsonl"))
}
