package train

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// InputChecksFile is the run file that stores the input checks
// (inputcheck.Report as JSON): the tokenizer coverage of each data set and
// the overlaps found, for the reports and the results explorer.
const InputChecksFile = "input_checks.json"

// checkInputs runs the input checks of package inputcheck before the run
// trains: overlaps between the i.i.d. parts and between the suite's
// train, validation and test cases, and the tokenizer's coverage of the
// i.i.d. train and test rows and of the suite's inputs. Warnings are
// logged; an error (word vectors that cover too little of the data)
// refuses the run.
//
// The coverage of the i.i.d. training rows (and its truncation warning) is
// of trained, the rows the run trains on (a learning curve's point, or
// max_iid, draws them from the pool iid.train): a warning counts what was
// used.
func checkInputs(spec RunSpec, tk predict.Tokenizer, suite *suites.Suite, pair bool, iid iidData, trained []datasets.Example) (*inputcheck.Report, error) {
	r := &inputcheck.Report{}
	iid.report(r)
	r.AddOverlaps(suiteParts(suite))
	trainName := "i.i.d. train"
	if len(trained) != len(iid.train) {
		trainName = "i.i.d. train, trained on"
	}
	sets := []struct {
		name string
		rows []inputcheck.Row
	}{
		{trainName, exampleRows(trained)},
		{"i.i.d. test", exampleRows(iid.test)},
		{"suite " + suite.Name, suiteRows(suite, "")},
	}
	for _, e := range iid.eval {
		sets = append(sets, struct {
			name string
			rows []inputcheck.Row
		}{"i.i.d. evaluation set " + e.name, exampleRows(e.examples)})
	}
	for _, set := range sets {
		if len(set.rows) == 0 {
			continue
		}
		c, err := inputcheck.MeasureCoverage(set.name, set.rows, tk, spec.MaxLength, pair)
		if err != nil {
			return nil, err
		}
		r.AddCoverage(c, wordVectors(spec))
	}
	for _, p := range r.Parts {
		if once(p.String()) {
			slog.Info("input data", "part", p.Name, "figures", p.String())
		}
	}
	for _, l := range r.Labels {
		if once(l.String()) {
			slog.Info("input labels", "file", l.File, "figures", l.String())
		}
	}
	for _, c := range r.Coverage {
		if once(c.String()) {
			slog.Info("input coverage", "data", c.Data, "figures", c.String())
		}
	}
	for _, f := range r.Findings {
		if f.Level == inputcheck.Warning && once(f.Message) {
			slog.Warn("input check", "check", f.Check, "message", f.Message)
		}
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("input checks: %w", err)
	}
	return r, nil
}

// logged holds the input-check lines this process has logged: the runs of
// a sweep read the same data with the same tokenizer, and each finding is
// worth one line, not one per run (every run stores its own report).
var logged sync.Map

func once(line string) bool {
	_, seen := logged.LoadOrStore(line, true)
	return !seen
}

// writeInputChecks stores the report in the run's directory.
func writeInputChecks(outDir string, r *inputcheck.Report) error {
	if r == nil {
		return nil
	}
	return writeJSON(filepath.Join(outDir, InputChecksFile), r)
}

func exampleRows(xs []datasets.Example) []inputcheck.Row {
	rows := make([]inputcheck.Row, len(xs))
	for i, x := range xs {
		rows[i] = inputcheck.Row{Text: x.Text, Pair: x.Pair}
	}
	return rows
}

// suiteRows returns the inputs of the suite's cases of one split (all
// cases for the empty split), each placed at its functionality and case.
func suiteRows(s *suites.Suite, split suites.Split) []inputcheck.Row {
	var rows []inputcheck.Row
	for f, c := range s.CasesIn(split) {
		for i, in := range c.Inputs {
			where := fmt.Sprintf("suite %s functionality %q case %d", s.Name, f.Name, c.ID)
			if len(c.Inputs) > 1 {
				where += fmt.Sprintf(" input %d", i)
			}
			rows = append(rows, inputcheck.Row{Text: in.Text, Pair: in.Pair, Where: where})
		}
	}
	return rows
}

// SuiteGroupChecks compares the suite's train, validation and test cases by
// a case-metadata column (a template, a target identity, a premise): the
// values the parts share, with their rows (beluga suite stats --group),
// and how many values each part has. A suite without a split gets
// BeLUGA's first.
func SuiteGroupChecks(s *suites.Suite, column string) *inputcheck.Report {
	splits.Ensure(s, suites.SplitTest)
	parts := suiteParts(s)
	for k, split := range []suites.Split{suites.SplitTrain, suites.SplitValidation, suites.SplitTest} {
		parts[k].GroupColumn = column
		i := 0
		for _, f := range s.Functionalities {
			for _, c := range f.Cases {
				if c.Split != split {
					continue
				}
				v, _ := splits.CaseMeta(c, column)
				for range c.Inputs {
					parts[k].Rows[i].Group = v
					i++
				}
			}
		}
	}
	r := &inputcheck.Report{}
	r.AddSizes(nil, parts, nil)
	r.AddGroupOverlaps(parts)
	return r
}

// suiteParts returns the suite's train, validation and test cases as parts
// that must not share texts.
func suiteParts(s *suites.Suite) []inputcheck.Part {
	var parts []inputcheck.Part
	for _, split := range []suites.Split{suites.SplitTrain, suites.SplitValidation, suites.SplitTest} {
		parts = append(parts, inputcheck.Part{Name: "suite " + string(split), Rows: suiteRows(s, split)})
	}
	return parts
}

// CheckIIDFiles reads a run's i.i.d. files as the run will, refusing what
// the run would refuse (a file that is not UTF-8, a missing column, a
// label outside the task's, a split that leaves no training rows, one file
// named twice), each with its file and line, and reports the texts its
// parts share. beluga run calls it for every declared task before any run
// starts, and in --dry-run.
func CheckIIDFiles(spec RunSpec) (*inputcheck.Report, error) {
	if err := spec.validateIIDFiles(); err != nil {
		return nil, err
	}
	if err := ValidateEvalSets(spec.IIDEval, "iid_eval"); err != nil {
		return nil, err
	}
	if _, ok := spec.kind().(classTaskKind); !ok {
		return nil, fmt.Errorf("task %s: its i.i.d. files are SQuAD's, read as questions when it runs; only a classification task's are checked here", spec.Task)
	}
	iid, err := spec.readTaskIID()
	if err != nil {
		return nil, err
	}
	r := &inputcheck.Report{}
	iid.report(r)
	return r, nil
}

// wordVectors says whether the run's model looks whole words up in word
// vectors (its source's WordVectors; a model from the IID run is of the
// same kind).
func wordVectors(spec RunSpec) bool {
	src, err := pretrained.LookupSource(spec.Model.Kind)
	return err == nil && src.WordVectors
}
