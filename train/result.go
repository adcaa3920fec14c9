package train

import (
	"encoding/json"
	"io"
	"math"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/splits"
)

// Result summarises a finished run.
type Result struct {
	// IIDScore is the accuracy on the i.i.d. test set (in [0, 1]),
	// IIDMetrics it and the task's other metrics; nil and empty without
	// i.i.d. test data.
	IIDScore   *float64           `json:"iid_accuracy"`
	IIDMetrics map[string]float64 `json:"iid_metrics,omitempty"`
	// IIDEval holds each evaluation set's metrics (RunSpec.IIDEval),
	// IIDEvalCorrect whether each of its examples was predicted right.
	IIDEval        map[string]map[string]float64 `json:"iid_eval,omitempty"`
	IIDEvalCorrect map[string][]bool             `json:"-"`
	SuiteScore     *float64                      `json:"suite_score"` // mean T_test pass rate, in [0, 1]
	// G is the harmonic mean of the i.i.d. and suite scores, when both exist.
	G       *float64 `json:"g"`
	Steps   int      `json:"steps"`
	Seconds float64  `json:"seconds"`
	// IIDCorrect says, per i.i.d. test example, whether the prediction was
	// right; Suite holds the T_test verdicts. Both are also in the run's files.
	IIDCorrect []bool          `json:"-"`
	Suite      *metrics.Result `json:"-"`
	// IIDPredicted and IIDGold are the predicted and gold classes of the
	// i.i.d. test examples (classification tasks), Curve the training
	// curve: what the run store's sanity checks read.
	// Labels names the task's classes, which IIDPredicted and IIDGold index.
	Labels       []string     `json:"-"`
	IIDPredicted []int        `json:"-"`
	IIDGold      []int        `json:"-"`
	Curve        []CurvePoint `json:"-"`
	// Constant holds, per task label, what predicting it for every suite
	// input scores (classification tasks): reports' computed baselines.
	Constant []ConstantScore `json:"-"`
	// GroupBalance counts, for a run that holds out a value of a metadata
	// column, each value's cases in the suite and in each part of the
	// run's split (splits.Balance): what a report needs to mark a group
	// whose share of T_test is not its share of the suite.
	GroupBalance []splits.GroupBalance `json:"-"`
	// Unparsed counts, per template, a prompted run's generated answers
	// that named no label (each failed its input; none became a label).
	Unparsed map[string]int `json:"unparsed,omitempty"`
	// Templates are a prompted run's scores per template when it scores
	// several (its own scores are their mean probabilities'); each
	// template's predictions are under templates/NAME/.
	Templates map[string]TemplateScore `json:"templates,omitempty"`
}

// TemplateScore is one template's scores in a prompted run of several.
type TemplateScore struct {
	IIDScore   *float64 `json:"iid_accuracy,omitempty"`
	SuiteScore *float64 `json:"suite_score,omitempty"`
	G          *float64 `json:"g,omitempty"`
	Unparsed   int      `json:"unparsed,omitempty"`
}

// summarise sets the suite score (in [0, 1]) and G from the scored suite
// and the i.i.d. score.
func (out *Result) summarise() {
	if out.Suite == nil || out.Suite.Score == nil {
		return
	}
	s := *out.Suite.Score / 100
	out.SuiteScore = &s
	if out.IIDScore != nil {
		g := metrics.HarmonicMean(*out.IIDScore, s)
		out.G = &g
	}
}

func writeJSON(path string, v any) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

func writeCurve(path string, curve []CurvePoint) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, c := range curve {
			if math.IsNaN(c.Loss) || math.IsInf(c.Loss, 0) {
				c.Loss = -1 // JSON has no NaN; the failure record says what happened
			}
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		return nil
	})
}
