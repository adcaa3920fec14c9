package metrics

import (
	"fmt"
	"math"
	"strconv"

	"github.com/beluga-nlp/beluga/suites"
)

// UnscorableSentiment lists the two sentiment DIR tests BeLUGA leaves out of
// its scores: with a confident model, CheckList filters all their cases
// (monotonic decreasing returns None when the original confidence is ≥ 0.9),
// so they have no pass rate. They are still used for training.
var UnscorableSentiment = []string{"reducers", `"used to" should reduce`}

// FunctionalityResult is the score of one functionality.
type FunctionalityResult struct {
	Name     string          `json:"functionality"`
	Class    string          `json:"class"`
	Type     suites.TestType `json:"type"`
	Cases    int             `json:"cases"`
	Filtered int             `json:"filtered"`
	Failed   int             `json:"failed"`
	// PassRate is 100·(1 − failed/(cases − filtered)), or nil when every
	// case was filtered.
	PassRate *float64 `json:"pass_rate"`
	// Tolerance is the tolerance the expectation used (INV, DIR).
	Tolerance float64 `json:"tolerance,omitempty"`
	// Excluded is true for functionalities left out of the suite score.
	Excluded bool `json:"excluded,omitempty"`
}

// CaseVerdict is the verdict of one test case, with what error analysis
// needs beside it — the functionality's class and type, the expected
// behaviour, every input's text, expected label, prediction and
// probabilities — so that a case file is read on its own, without a join
// with the suite and the prediction file. The later fields are absent
// from case files written before they existed.
type CaseVerdict struct {
	Functionality string  `json:"functionality"`
	Case          int     `json:"case"`
	Verdict       Verdict `json:"verdict"`
	// Class and Type are the functionality's.
	Class string          `json:"class,omitempty"`
	Type  suites.TestType `json:"type,omitempty"`
	// Expect says in words what the functionality expects (Describe).
	Expect string `json:"expect,omitempty"`
	// Inputs are the case's inputs in order: for INV and DIR the original,
	// then its perturbations.
	Inputs []CaseInput `json:"inputs,omitempty"`
	// Violation is the largest violation among the case's failing inputs
	// (InputVerdict): failing cases are listed worst first by it.
	Violation float64 `json:"violation,omitempty"`
}

// CaseInput is one input of a case with its expectation and prediction.
type CaseInput struct {
	Text string `json:"text"`
	Pair string `json:"pair,omitempty"`
	// Label is the expected label's name (or answer), empty when the case
	// has none (INV and DIR compare predictions with each other).
	Label string `json:"label,omitempty"`
	// Pred is the predicted label's name (or answer); PredClass its index
	// in the suite's labels, Probs the probabilities in that order (as
	// scored: a 2-class sentiment model's squashed to CheckList's three).
	Pred      string    `json:"pred"`
	PredClass *int      `json:"pred_class,omitempty"`
	Probs     []float64 `json:"probs,omitempty"`
	// Verdict is the expectation's outcome on this input (InputVerdict):
	// "fail" marks the inputs that break the expectation. Absent from
	// case files written before per-input verdicts.
	Verdict *Verdict `json:"verdict,omitempty"`
	// Violation is the size of a failing input's violation
	// (InputVerdict), absent when it passes or CheckList gives none.
	Violation float64 `json:"violation,omitempty"`
}

// Breaks reports whether the input breaks its case's expectation.
func (in CaseInput) Breaks() bool { return in.Verdict != nil && *in.Verdict == Fail }

// Describe says in words what an expectation asks of a model, naming
// classes by the suite's labels.
func Describe(e suites.Expectation, labels []string) string {
	name := func(c int) string {
		if c >= 0 && c < len(labels) {
			return labels[c]
		}
		return strconv.Itoa(c)
	}
	switch e.Kind {
	case suites.ExpectEq:
		if e.Value != nil {
			return "prediction is " + name(*e.Value)
		}
		return "prediction is the label"
	case suites.ExpectPredNot:
		if e.Value != nil {
			return "prediction is not " + name(*e.Value)
		}
		return "prediction is not the label"
	case suites.ExpectAllowForNeutral:
		return "prediction is the label (" + name(1) + " allows anything but " + name(0) + ")"
	case suites.ExpectInv:
		return fmt.Sprintf("perturbations keep the original's prediction (tolerance %g)", e.Tolerance)
	case suites.ExpectMonotonic:
		dir := "fall"
		if !e.Increasing {
			dir = "rise"
		}
		return fmt.Sprintf("confidence in the original's class does not %s (tolerance %g)", dir, e.Tolerance)
	case suites.ExpectPositiveChange:
		return fmt.Sprintf("prediction moves as %s (tolerance %g)", e.Direction, e.Tolerance)
	case suites.ExpectImplicationTriplet:
		return "predictions on (x,a), (x,b), (a,b) are consistent"
	case suites.ExpectSquadCleanEq:
		return "answer is the label (normalised)"
	case suites.ExpectSquadInvSubstitution:
		return "answer is the original's with the substitution applied"
	case suites.ExpectAzimuth:
		return fmt.Sprintf("same class as the original, top-class confidence within %g", e.Tolerance)
	}
	return e.Kind
}

// caseInputs pairs a case's inputs with its labels, predictions and
// per-input verdicts.
func caseInputs(labels []string, c *suites.Case, preds []Prediction, verdicts []InputVerdict) []CaseInput {
	name := func(l suites.Label) string {
		if l.IsAnswer {
			return l.Answer
		}
		if l.Class >= 0 && l.Class < len(labels) {
			return labels[l.Class]
		}
		return strconv.Itoa(l.Class)
	}
	out := make([]CaseInput, len(c.Inputs))
	for i, in := range c.Inputs {
		ci := CaseInput{Text: in.Text}
		if in.IsPair {
			ci.Pair = in.Pair
		}
		if l, ok := c.LabelFor(i); ok {
			ci.Label = name(l)
		}
		if i < len(preds) {
			p := preds[i]
			switch {
			case p.IsAnswer:
				ci.Pred = p.Answer
			default:
				k := p.Class
				ci.Pred, ci.PredClass, ci.Probs = name(suites.ClassLabel(k)), &k, p.Probs
			}
		}
		if i < len(verdicts) {
			v := verdicts[i].Verdict
			ci.Verdict, ci.Violation = &v, verdicts[i].Violation
		}
		out[i] = ci
	}
	return out
}

// Result is a suite scored from one set of predictions.
type Result struct {
	Suite           string                `json:"suite"`
	Task            string                `json:"task"`
	Split           suites.Split          `json:"split,omitempty"`
	Options         Options               `json:"options"`
	Functionalities []FunctionalityResult `json:"functionalities"`
	// Score is the mean pass rate over the functionalities that are not
	// excluded and have a pass rate (BeLUGA's suite score, in %); nil when
	// no functionality has one.
	Score *float64 `json:"score"`
	// Cases holds every verdict in suite order.
	Cases []CaseVerdict `json:"-"`
}

// ScoreOptions configures Score.
type ScoreOptions struct {
	Options
	// Split, when set, scores only the cases of that split.
	Split suites.Split
	// Exclude names functionalities left out of the suite score. Nil means
	// BeLUGA's choice: UnscorableSentiment for sentiment suites, none otherwise.
	Exclude []string
}

// ScoredInputs counts the inputs Score expects predictions for.
func ScoredInputs(s *suites.Suite, split suites.Split) int {
	n := 0
	for _, c := range s.CasesIn(split) {
		n += len(c.Inputs)
	}
	return n
}

// Score evaluates preds — one per input of the scored cases, in suite order —
// against s. Predictions of a 2-way model on a suite with three labels (CheckList's
// sentiment) are squashed first.
func Score(s *suites.Suite, preds []Prediction, opt ScoreOptions) (*Result, error) {
	if want := ScoredInputs(s, opt.Split); len(preds) != want {
		return nil, fmt.Errorf("%d predictions for %d scored inputs", len(preds), want)
	}
	exclude := opt.Exclude
	if exclude == nil && s.Task == "sentiment" {
		exclude = UnscorableSentiment
	}
	excluded := map[string]bool{}
	for _, n := range exclude {
		if opt.Exclude != nil && s.Functionality(n) == nil {
			return nil, fmt.Errorf("exclude: suite %s has no functionality %q", s.Name, n)
		}
		excluded[n] = true
	}
	squash := len(s.Labels) == 3 && len(s.ModelLabels) == 2
	res := &Result{Suite: s.Name, Task: s.Task, Split: opt.Split, Options: opt.Options}
	next := 0
	sum, n := 0.0, 0
	for _, f := range s.Functionalities {
		fr := FunctionalityResult{Name: f.Name, Class: f.Class, Type: f.Type, Excluded: excluded[f.Name]}
		if f.Type.Spec().Paired {
			fr.Tolerance = opt.tolerance(f.Expect)
		}
		expect := Describe(f.Expect, s.Labels)
		for c := range f.CasesIn(opt.Split) {
			cp := preds[next : next+len(c.Inputs)]
			next += len(c.Inputs)
			if squash {
				cp = squashAll(cp, opt.Options)
			}
			v, ins, err := EvaluateInputs(f, c, cp, opt.Options)
			if err != nil {
				return nil, err
			}
			fr.Cases++
			switch v {
			case Fail:
				fr.Failed++
			case Filtered:
				fr.Filtered++
			}
			cv := CaseVerdict{Functionality: f.Name, Case: c.ID, Verdict: v,
				Class: f.Class, Type: f.Type, Expect: expect, Inputs: caseInputs(s.Labels, c, cp, ins)}
			if v == Fail {
				for _, in := range ins {
					cv.Violation = max(cv.Violation, in.Violation)
				}
			}
			res.Cases = append(res.Cases, cv)
		}
		if fr.Cases == 0 {
			continue
		}
		if scored := fr.Cases - fr.Filtered; scored > 0 {
			r := 100 * (1 - float64(fr.Failed)/float64(scored))
			fr.PassRate = &r
			if !fr.Excluded {
				sum += r
				n++
			}
		}
		res.Functionalities = append(res.Functionalities, fr)
	}
	if n > 0 {
		mean := sum / float64(n)
		res.Score = &mean
	}
	return res, nil
}

func squashAll(ps []Prediction, opt Options) []Prediction {
	out := make([]Prediction, len(ps))
	for i, p := range ps {
		switch {
		case len(p.Probs) == 2 && opt.Float32:
			out[i] = Squash32(float32(p.Probs[1]), opt.Squash)
		case len(p.Probs) == 2:
			out[i] = Squash(p.Probs[1], opt.Squash)
		default:
			out[i] = p
		}
	}
	return out
}

// Hits returns, per functionality, the per-case outcomes BeLUGA's
// significance tests swap: 1 pass, 0 fail, NaN filtered.
func (r *Result) Hits() map[string][]float64 {
	h := map[string][]float64{}
	for _, c := range r.Cases {
		v := math.NaN()
		switch c.Verdict {
		case Pass:
			v = 1
		case Fail:
			v = 0
		}
		h[c.Functionality] = append(h[c.Functionality], v)
	}
	return h
}

// Restrict keeps the verdicts of the cases keep names and makes every other
// case Filtered, then recounts each functionality's cases, failures and
// pass rate and the suite score as Score does. A run of a held-out fold
// by a metadata column scores every test case of its functionalities but
// answers only for the held-out ones; the other cases are another fold's.
func (r *Result) Restrict(keep func(functionality string, caseID int) bool) {
	type count struct{ filtered, failed int }
	counts := map[string]*count{}
	for i := range r.Cases {
		c := &r.Cases[i]
		if !keep(c.Functionality, c.Case) {
			c.Verdict, c.Violation = Filtered, 0
		}
		n := counts[c.Functionality]
		if n == nil {
			n = &count{}
			counts[c.Functionality] = n
		}
		switch c.Verdict {
		case Filtered:
			n.filtered++
		case Fail:
			n.failed++
		}
	}
	sum, n := 0.0, 0
	for i := range r.Functionalities {
		fr := &r.Functionalities[i]
		if c := counts[fr.Name]; c != nil {
			fr.Filtered, fr.Failed = c.filtered, c.failed
		}
		fr.PassRate = nil
		if scored := fr.Cases - fr.Filtered; scored > 0 {
			v := 100 * (1 - float64(fr.Failed)/float64(scored))
			fr.PassRate = &v
			if !fr.Excluded {
				sum += v
				n++
			}
		}
	}
	r.Score = nil
	if n > 0 {
		mean := sum / float64(n)
		r.Score = &mean
	}
}
