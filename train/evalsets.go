package train

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/beluga-nlp/beluga/datasets"
)

// An EvalSet is an extra i.i.d. evaluation set of a classification task:
// a file of the task's labels scored whole, beside the task's own i.i.d.
// test set, after training — the cross-dataset evaluation of Checking
// HateCheck (train on one hate-speech data set, score on Davidson's and
// Founta's). It never trains.
type EvalSet struct {
	// Name names the set in results, files and tables: letters, digits,
	// '-' and '_'.
	Name              string `json:"name" yaml:"name"`
	datasets.FileSpec `yaml:",inline"`
}

var evalSetName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidateEvalSets refuses unnamed, badly named or repeated sets, and what
// a set cannot do: be halved or split (it is scored whole) or have labels
// of its own (they are the task's). field is the sets' spec field
// (iid_eval, or an experiment spec's tasks[i].eval).
func ValidateEvalSets(sets []EvalSet, field string) error {
	seen := map[string]bool{}
	for i, e := range sets {
		field := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case !evalSetName.MatchString(e.Name):
			return fmt.Errorf("%s.name: %q: want letters, digits, '-' and '_'", field, e.Name)
		case seen[e.Name]:
			return fmt.Errorf("%s.name: %q named twice", field, e.Name)
		case e.Path == "":
			return fmt.Errorf("%s.path: required", field)
		case e.Halve || e.Split != nil:
			return fmt.Errorf("%s: an evaluation set is scored whole: it cannot be halved or split", field)
		case len(e.Labels.Names) > 0:
			return fmt.Errorf("%s.labels: an evaluation set's labels are the task's (map the set's own onto them: labels: {SET_LABEL: TASK_LABEL})", field)
		}
		seen[e.Name] = true
	}
	return nil
}

// evalSetData is an evaluation set read for a run.
type evalSetData struct {
	name     string
	examples []datasets.Example
}

// readEvalSets reads the run's evaluation sets with the task's labels,
// adding each to the input checks' parts (a text it shares with the
// training data is leakage the checks report).
func (s *RunSpec) readEvalSets(task *Task, d *iidData) ([]evalSetData, error) {
	var out []evalSetData
	for i, e := range s.IIDEval {
		f, err := withTaskLabels(e.FileSpec, task)
		if err != nil {
			return nil, fmt.Errorf("iid_eval[%d] (%s): %w", i, e.Name, err)
		}
		rows, err := f.ReadRows()
		if err != nil {
			return nil, fmt.Errorf("iid_eval[%d] (%s): %w", i, e.Name, err)
		}
		xs := rows.Examples
		if err := task.checkInputForm(xs, f.Path); err != nil {
			return nil, fmt.Errorf("iid_eval[%d] (%s): %w", i, e.Name, err)
		}
		d.addLabels(f, rows)
		d.addPart("i.i.d. evaluation set "+e.Name, &f, xs, rows.Lines, 0)
		out = append(out, evalSetData{name: e.Name, examples: xs})
	}
	return out, nil
}

// evalSets scores the model on each evaluation set as on the i.i.d. test
// set (evalIID), writing its predictions to eval_NAME_predictions.* in
// outDir: the task's metrics and, per example, whether it was right.
func evalSets(ctx context.Context, m predictFunc, task *Task, sets []evalSetData, outDir string) (map[string]map[string]float64, map[string][]bool, error) {
	if len(sets) == 0 {
		return nil, nil, nil
	}
	scores, correct := map[string]map[string]float64{}, map[string][]bool{}
	for _, e := range sets {
		sc, preds, err := evalIIDTo(ctx, m, task, e.examples, filepath.Join(outDir, "eval_"+e.name+"_predictions"))
		if err != nil {
			return nil, nil, fmt.Errorf("evaluation set %s: %w", e.name, err)
		}
		scores[e.name] = sc
		c := make([]bool, len(preds))
		for i, x := range e.examples {
			c[i] = preds[i] == x.Label
		}
		correct[e.name] = c
	}
	return scores, correct, nil
}
