package experiments

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/splits"
)

// ResultFile is the file in a run directory that reports read: the run's
// i.i.d. outcome and its per-case suite verdicts.
const ResultFile = "result.json"

// Result is what a run measured, in the form reports need: per i.i.d. test
// example whether the prediction was correct, and per evaluated
// functionality the CheckList verdict of every test case.
type Result struct {
	// IIDCorrect holds, per i.i.d. test example in dataset order, whether the
	// model's prediction was correct (for McNemar's test against the baseline).
	IIDCorrect []bool `json:"iid_correct"`
	// IIDMetrics holds the task's i.i.d. metrics in [0, 1] (accuracy and
	// those it declares, such as macro_f1); none without i.i.d. test data.
	IIDMetrics map[string]float64 `json:"iid_metrics,omitempty"`
	// IIDEval holds each extra evaluation set's metrics (Run.IIDEval),
	// IIDEvalCorrect whether each of its examples was predicted right.
	IIDEval        map[string]map[string]float64 `json:"iid_eval,omitempty"`
	IIDEvalCorrect map[string][]bool             `json:"iid_eval_correct,omitempty"`
	// Functionalities holds the verdicts of the functionalities the run was
	// evaluated on: all of them for iid and seen runs, the held-out ones for
	// a held-out run.
	Functionalities []FuncResult `json:"functionalities"`
	// Flags are the sanity checks the run failed (metrics.Sanity); none in stores
	// written before the checks existed.
	Flags []metrics.Flag `json:"flags,omitempty"`
	// Constant holds, per task label, what predicting that label for every
	// input scores on the same i.i.d. test set and suite cases: the
	// computed baselines of beluga report --baselines (classification
	// tasks; none in older stores).
	// Recorded by runs scored on every functionality (iid and seen).
	Constant []ConstantResult `json:"constant,omitempty"`
	// IIDGold holds the gold class of each i.i.d. test example, which the
	// constant predictors are scored against; recorded with Constant.
	IIDGold []int `json:"iid_gold,omitempty"`
	// GroupBalance counts, for a run holding out a value of a metadata
	// column, each value's cases in the suite and in each part of the
	// run's split: the report marks a group whose T_test share is off its
	// suite share (splits.SkewMark). None in older stores, and none for
	// other runs.
	GroupBalance []splits.GroupBalance `json:"group_balance,omitempty"`
}

// ConstantResult is what a constant predictor of one label scores.
type ConstantResult struct {
	Label string `json:"label"`
	// Class is the label's index among the task's labels.
	Class           int          `json:"class"`
	Functionalities []FuncResult `json:"functionalities"`
}

// ConstantIIDCorrect says, per i.i.d. test example, whether the constant
// predictor c is right (none without i.i.d. gold labels).
func (r *Result) ConstantIIDCorrect(c ConstantResult) []bool {
	if len(r.IIDGold) == 0 {
		return nil
	}
	out := make([]bool, len(r.IIDGold))
	for i, g := range r.IIDGold {
		out[i] = g == c.Class
	}
	return out
}

// FuncResult holds one functionality's verdicts.
type FuncResult struct {
	Name  string `json:"name"`
	Class string `json:"class"`
	Type  string `json:"type"`
	// Verdicts has one byte per test case of T_test in suite order: 'P'
	// pass, 'F' fail, '-' filtered out by CheckList (no applicable input).
	Verdicts string `json:"verdicts"`
}

// Verdict bytes of FuncResult.Verdicts.
const (
	Pass     = 'P'
	Fail     = 'F'
	Filtered = '-'
)

// IIDScore is the i.i.d. accuracy in percent.
func (r *Result) IIDScore() float64 {
	if len(r.IIDCorrect) == 0 {
		return math.NaN()
	}
	n := 0
	for _, c := range r.IIDCorrect {
		if c {
			n++
		}
	}
	return 100 * float64(n) / float64(len(r.IIDCorrect))
}

// PassRate is CheckList's 100 − fail rate over the cases not filtered out,
// NaN when every case was filtered (BeLUGA's "None").
func (f FuncResult) PassRate() float64 {
	pass, run := 0, 0
	for i := 0; i < len(f.Verdicts); i++ {
		switch f.Verdicts[i] {
		case Pass:
			pass++
			run++
		case Fail:
			run++
		}
	}
	if run == 0 {
		return math.NaN()
	}
	return 100 * float64(pass) / float64(run)
}

// Validate checks that every verdict byte is known.
func (r *Result) Validate() error {
	for _, f := range r.Functionalities {
		if f.Name == "" {
			return fmt.Errorf("functionality without a name")
		}
		for i := 0; i < len(f.Verdicts); i++ {
			switch f.Verdicts[i] {
			case Pass, Fail, Filtered:
			default:
				return fmt.Errorf("functionality %q case %d: unknown verdict %q (want P, F or -)", f.Name, i, f.Verdicts[i])
			}
		}
	}
	return nil
}

// WriteResult writes a run's result into its directory atomically.
func WriteResult(dir string, r *Result) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("result for %s: %w", dir, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, ResultFile), append(b, '\n'))
}

// ReadResult reads a run's result from its directory.
func ReadResult(dir string) (*Result, error) {
	path := filepath.Join(dir, ResultFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Flags reads the sanity flags of a done run (none when its result cannot
// be read, or was written before the checks existed). Only the flags are
// decoded: the result's one list under the key "flags" (WriteResult writes
// Result, whose other lists hold no object with such a key).
func (s *Store) Flags(id string) []metrics.Flag {
	b, err := os.ReadFile(filepath.Join(s.RunDir(id), ResultFile))
	if err != nil {
		return nil
	}
	i := bytes.Index(b, []byte(`"flags":[`))
	if i < 0 {
		return nil
	}
	var flags []metrics.Flag
	if json.NewDecoder(bytes.NewReader(b[i+len(`"flags":`):])).Decode(&flags) != nil {
		return nil
	}
	return flags
}
