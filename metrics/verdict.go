package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/beluga-nlp/beluga/suites"
)

// Verdict is the outcome of one test case.
type Verdict int

// A case passes, fails, or is filtered (its expectation did not apply).
const (
	Pass Verdict = iota
	Fail
	Filtered
)

func (v Verdict) String() string {
	return [...]string{"pass", "fail", "filtered"}[v]
}

// MarshalText writes pass, fail or filtered.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// result is an expectation's outcome for one input: CheckList's True /
// positive (pass), False / non-positive (fail), or None (not applicable).
type result int8

const (
	rNone result = iota
	rPass
	rFail
)

func passIf(ok bool) result {
	if ok {
		return rPass
	}
	return rFail
}

// TripletMode selects the rule of QQP's "Testing implications".
type TripletMode int

const (
	// TripletCheckList reproduces CheckList's notebook: (x,a),(x,b) both
	// duplicates requires (a,b) duplicate; (x,a) not and (x,b) duplicate
	// always fails; everything else is filtered.
	TripletCheckList TripletMode = iota
	// TripletCorrected requires (a,b) to be a non-duplicate whenever exactly
	// one of (x,a), (x,b) is a duplicate.
	TripletCorrected
)

// Options are the evaluation parameters recorded with every result.
type Options struct {
	Squash  SquashMode  `json:"squash"`
	Triplet TripletMode `json:"triplet"`
	// Tolerance, when set, replaces the tolerance of every INV, monotonic and
	// positive_change expectation (CheckList's release suites use 0.1).
	Tolerance *float64 `json:"tolerance,omitempty"`
	// CheckListLabels scores against the suite's CheckList labels even where
	// BeLUGA re-labelled the suite it scored with (suites.Training.Scored:
	// QQP's "Order does matter for asymmetric relations"). The default is
	// BeLUGA's.
	CheckListLabels bool `json:"checklist_labels,omitempty"`
	// Float32 squashes sentiment probabilities at float32 (Squash32), as
	// BeLUGA does with its float32 models' softmax; set it when the
	// predictions came from a float32 model.
	Float32 bool `json:"float32,omitempty"`
}

func (o Options) tolerance(e suites.Expectation) float64 {
	if o.Tolerance != nil {
		return *o.Tolerance
	}
	return e.Tolerance
}

// Evaluate returns the verdict of case c of functionality f given one
// prediction per input.
func Evaluate(f *suites.Functionality, c *suites.Case, preds []Prediction, opt Options) (Verdict, error) {
	v, _, err := EvaluateInputs(f, c, preds, opt)
	return v, err
}

// InputVerdict is the expectation's outcome on one input of a case, as
// CheckList's expectation functions return it per example: Pass, Fail, or
// Filtered where the expectation does not apply (CheckList's None). A case
// fails because of its failing inputs; for INV and DIR the original (the
// first input) is compared with itself and passes.
//
// Violation is how badly a failing input breaks the expectation, the
// magnitude CheckList's expect functions return (a result ≤ 0, "the
// distance from 0") and its summary orders examples by:
//   - INV: |p_o(x′) − p_o(x)|, the change of the probability of the
//     original's predicted class o between the original x and x′;
//   - DIR (monotonic, positive_change): the change in the wrong direction
//     (how far the confidence or sentiment moved against the expectation,
//     tolerance included — CheckList's value plus the tolerance, so the
//     order within a test is CheckList's);
//   - MFT with a label: 1 − p(expected class) (CheckList's conf_viol).
//
// It is 0 where CheckList returns a bare False (pred_not, the QQP
// triplet, answers without probabilities).
type InputVerdict struct {
	Verdict   Verdict
	Violation float64
}

// EvaluateInputs is Evaluate with each input's outcome (InputVerdict). A
// case a slice filters out has every input Filtered, as CheckList's
// wrap_slice sets each example's result to None.
func EvaluateInputs(f *suites.Functionality, c *suites.Case, preds []Prediction, opt Options) (Verdict, []InputVerdict, error) {
	if len(preds) != len(c.Inputs) {
		return Fail, nil, fmt.Errorf("functionality %q case %d: %d predictions for %d inputs", f.Name, c.ID, len(preds), len(c.Inputs))
	}
	e := f.Expect
	rs, sizes, err := inputResults(f, c, preds, opt)
	if err != nil {
		return Fail, nil, fmt.Errorf("functionality %q case %d: %w", f.Name, c.ID, err)
	}
	ins := make([]InputVerdict, len(rs))
	for j, r := range rs {
		switch r {
		case rPass:
			ins[j].Verdict = Pass
		case rFail:
			ins[j] = InputVerdict{Verdict: Fail, Violation: sizes[j]}
		default:
			ins[j].Verdict = Filtered
		}
	}
	if e.Slice != "" {
		keep, err := sliceKeeps(e, preds)
		if err != nil {
			return Fail, nil, fmt.Errorf("functionality %q: %w", f.Name, err)
		}
		if !keep {
			for j := range ins {
				ins[j] = InputVerdict{Verdict: Filtered}
			}
			return Filtered, ins, nil
		}
	}
	return aggregate(rs, e.Agg), ins, nil
}

// aggregate is CheckList's aggregate_testcase: drop the inputs the
// expectation does not apply to; nothing left means filtered; otherwise
// every remaining result (after the first, for all_except_first) must pass.
func aggregate(rs []result, agg string) Verdict {
	kept := rs[:0:0]
	for _, r := range rs {
		if r != rNone {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return Filtered
	}
	if agg == suites.AggAllExceptFirst {
		kept = kept[1:]
	}
	for _, r := range kept {
		if r != rPass {
			return Fail
		}
	}
	return Pass
}

// sliceKeeps evaluates the slice on the original prediction, aggregated over
// the case's inputs as CheckList's wrap_slice does.
func sliceKeeps(e suites.Expectation, preds []Prediction) (bool, error) {
	var keep bool
	switch e.Slice {
	case "orig_pred != 1":
		keep = preds[0].Class != 1
	case "orig_pred == 1":
		keep = preds[0].Class == 1
	default:
		return false, fmt.Errorf("unknown slice %q", e.Slice)
	}
	rs := make([]result, len(preds))
	for i := range rs {
		rs[i] = passIf(keep)
	}
	agg := e.SliceAgg
	if agg == "" {
		agg = suites.AggAll
	}
	return aggregate(rs, agg) == Pass, nil
}

// failUnparsed fails the inputs whose answer names no label (a prompted
// model's, unparsed): never a label. With all, it fails every input — an
// invariance or direction compared with such an answer fails, not passes
// by agreeing with another unparsed answer, nor errs for want of
// probabilities.
func failUnparsed(rs []result, preds []Prediction, all bool) []result {
	for j, p := range preds {
		if all || p.Unparsed() {
			rs[j] = rFail
		}
	}
	return rs
}

// scoredLabel is the label input j of c is scored against: the case's
// label, or BeLUGA's re-label of the functionality where BeLUGA scored with
// it (suites.Training.Scored) and opt does not ask for CheckList's.
func scoredLabel(f *suites.Functionality, c *suites.Case, j int, opt Options) (suites.Label, bool) {
	if f.Train.Scored && !opt.CheckListLabels {
		if k, err := strconv.Atoi(f.Train.Label); err == nil {
			return suites.ClassLabel(k), true
		}
	}
	return c.LabelFor(j)
}

// inputResults is the expectation's result on every input of a case and,
// for each failing one, the size of its violation (InputVerdict).
func inputResults(f *suites.Functionality, c *suites.Case, preds []Prediction, opt Options) ([]result, []float64, error) {
	e := f.Expect
	rs := make([]result, len(preds))
	sizes := make([]float64, len(preds))
	orig := preds[0]
	// A paired case compares its inputs: one unparsed answer fails it whole.
	if f.Type.Spec().Paired && slices.ContainsFunc(preds, Prediction.Unparsed) {
		return failUnparsed(rs, preds, true), sizes, nil
	}
	// unlikely is CheckList's conf_viol of an MFT input: 1 − p(expected).
	unlikely := func(j int, p Prediction, class int) {
		if rs[j] == rFail && class >= 0 && class < len(p.Probs) {
			sizes[j] = 1 - p.Probs[class]
		}
	}
	switch e.Kind {
	case suites.ExpectEq:
		for j, p := range preds {
			if e.Value != nil {
				rs[j] = passIf(!p.IsAnswer && p.Class == *e.Value)
				unlikely(j, p, *e.Value)
				continue
			}
			l, ok := scoredLabel(f, c, j, opt)
			rs[j] = passIf(ok && samePrediction(p, l))
			if ok && !l.IsAnswer {
				unlikely(j, p, l.Class)
			}
		}
	case suites.ExpectPredNot:
		if e.Value == nil {
			return nil, nil, fmt.Errorf("pred_not expectation without a value")
		}
		for j, p := range preds {
			rs[j] = passIf(p.Class != *e.Value)
		}
	case suites.ExpectAllowForNeutral:
		for j, p := range preds {
			l, ok := c.LabelFor(j)
			switch {
			case !ok:
				rs[j] = rFail
			case !l.IsAnswer && l.Class == 1:
				rs[j] = passIf(p.Class != 0)
				unlikely(j, p, 1)
			default:
				rs[j] = passIf(samePrediction(p, l))
				if !l.IsAnswer {
					unlikely(j, p, l.Class)
				}
			}
		}
	case suites.ExpectSquadCleanEq:
		for j, p := range preds {
			l, ok := c.LabelFor(j)
			rs[j] = passIf(ok && squadClean(p.Answer) == squadClean(l.Answer))
		}
	case suites.ExpectInv:
		tol := opt.tolerance(e)
		for j, p := range preds {
			rs[j], sizes[j] = invResult(orig, p, tol)
		}
	case suites.ExpectSquadInvSubstitution:
		if err := substitution(c, orig, preds, rs); err != nil {
			return nil, nil, err
		}
	case suites.ExpectMonotonic:
		tol := opt.tolerance(e)
		for j, p := range preds {
			r, size, err := monotonicResult(orig, p, e, tol)
			if err != nil {
				return nil, nil, err
			}
			rs[j], sizes[j] = r, size
		}
	case suites.ExpectPositiveChange:
		if err := positiveChange(orig, preds, e.Direction, opt.tolerance(e), rs, sizes); err != nil {
			return nil, nil, err
		}
	case suites.ExpectAzimuth:
		return azimuthResults(preds, opt.tolerance(e)), sizes, nil
	case suites.ExpectImplicationTriplet:
		if len(preds) != 3 {
			return nil, nil, fmt.Errorf("implication triplet needs 3 inputs, has %d", len(preds))
		}
		return tripletResults(preds[0].Class, preds[1].Class, preds[2].Class, opt.Triplet), sizes, nil
	default:
		return registeredResults(f, c, preds, opt)
	}
	return failUnparsed(rs, preds, false), sizes, nil
}

// registeredResults is inputResults for an expectation kind registered
// with RegisterRule.
func registeredResults(f *suites.Functionality, c *suites.Case, preds []Prediction, opt Options) ([]result, []float64, error) {
	kind := f.Expect.Kind
	rule, ok := registeredRule(kind)
	if !ok {
		return nil, nil, fmt.Errorf("unknown expectation kind %q", kind)
	}
	vs, sizes, err := rule(f, c, preds, opt)
	if err != nil {
		return nil, nil, err
	}
	if len(vs) != len(preds) || len(sizes) != len(preds) {
		return nil, nil, fmt.Errorf("expectation %s: %d verdicts and %d sizes for %d inputs", kind, len(vs), len(sizes), len(preds))
	}
	rs := make([]result, len(vs))
	for j, v := range vs {
		if v < Pass || v > Filtered {
			return nil, nil, fmt.Errorf("expectation %s: verdict %d of input %d", kind, v, j)
		}
		rs[j] = [...]result{Pass: rPass, Fail: rFail, Filtered: rNone}[v]
	}
	return rs, sizes, nil
}

// Rule is the verdict of a registered expectation kind on every input of a
// case: Pass, Fail, or Filtered where it does not apply (an original), and
// each failing input's violation size (InputVerdict.Violation).
type Rule func(f *suites.Functionality, c *suites.Case, preds []Prediction, opt Options) ([]Verdict, []float64, error)

var (
	rulesMu sync.RWMutex
	rules   = map[string]Rule{}
)

// RegisterRule gives the verdict rule of an expectation kind registered
// with suites.RegisterExpectKind: a test type whose rule none of
// CheckList's expectations expresses. The shipped kinds keep their rules.
func RegisterRule(kind string, r Rule) error {
	if !suites.AddedExpectKind(kind) {
		return fmt.Errorf("expectation kind %q: a shipped kind, or not registered with suites.RegisterExpectKind", kind)
	}
	rulesMu.Lock()
	defer rulesMu.Unlock()
	if rules[kind] != nil {
		return fmt.Errorf("expectation kind %q: rule registered twice", kind)
	}
	rules[kind] = r
	return nil
}

func registeredRule(kind string) (Rule, bool) {
	rulesMu.RLock()
	defer rulesMu.RUnlock()
	r, ok := rules[kind]
	return r, ok
}

// positiveChange is the sentiment notebook's positive_change expectation
// for every input against the original: the rise of p(positive) plus the
// fall of p(negative) must not go the wrong way by more than tol.
func positiveChange(orig Prediction, preds []Prediction, direction string, tol float64, rs []result, sizes []float64) error {
	for j, p := range preds {
		if len(orig.Probs) != 3 || len(p.Probs) != 3 {
			return fmt.Errorf("positive_change needs 3-class probabilities (negative, neutral, positive)")
		}
		change := (orig.Probs[0] - p.Probs[0]) + (p.Probs[2] - orig.Probs[2])
		switch direction {
		case "not_more_negative":
			rs[j] = passIf(change+tol >= 0)
		case "not_more_positive":
			rs[j] = passIf(change-tol <= 0)
		default:
			return fmt.Errorf("positive_change with direction %q (want not_more_negative or not_more_positive)", direction)
		}
		if rs[j] == rFail {
			sizes[j] = math.Abs(change)
		}
	}
	return nil
}

// substitution is SQuAD's INV with a substitution: every answer must be
// the original's with the case's per-input substitution (meta) applied.
func substitution(c *suites.Case, orig Prediction, preds []Prediction, rs []result) error {
	var meta []json.RawMessage
	if len(c.Meta) > 0 {
		if err := json.Unmarshal(c.Meta, &meta); err != nil || len(meta) != len(preds) {
			return fmt.Errorf("substitution test needs one meta entry per input")
		}
	}
	for j, p := range preds {
		want := orig.Answer
		if j < len(meta) {
			var sub []string
			if json.Unmarshal(meta[j], &sub) == nil && len(sub) == 2 {
				want = regexp.MustCompile(`\b`+regexp.QuoteMeta(sub[0])+`\b`).ReplaceAllLiteralString(orig.Answer, sub[1])
			}
		}
		rs[j] = passIf(p.Answer == want)
	}
	return nil
}

func samePrediction(p Prediction, l suites.Label) bool {
	if l.IsAnswer {
		return p.IsAnswer && p.Answer == l.Answer
	}
	return !p.IsAnswer && p.Class == l.Class
}

// invResult is CheckList's Expect.inv for one input against the original,
// with the size of a failure: |p_o(x′) − p_o(x)|, or without
// probabilities CheckList's conf + orig_conf.
func invResult(orig, p Prediction, tol float64) (result, float64) {
	if orig.IsAnswer || p.IsAnswer {
		if p.Answer == orig.Answer {
			return rPass, 0
		}
	} else if p.Class == orig.Class {
		return rPass, 0
	}
	if orig.Probs != nil && p.Probs != nil && !orig.IsAnswer {
		o := orig.Class
		d := math.Abs(p.Probs[o] - orig.Probs[o])
		if d <= tol {
			return rPass, 0
		}
		return rFail, d
	}
	if s := p.Conf + orig.Conf; s > tol {
		return rFail, s
	}
	return rPass, 0
}

// monotonicResult is CheckList's Expect.monotonic with label = the original
// prediction, with the size of a failure: the confidence change in the
// wrong direction.
func monotonicResult(orig, p Prediction, e suites.Expectation, tol float64) (result, float64, error) {
	label := orig.Class
	if e.Value != nil {
		label = *e.Value
	}
	var origConf, diff float64
	if orig.Probs != nil {
		if label >= len(orig.Probs) || label >= len(p.Probs) {
			return rNone, 0, fmt.Errorf("monotonic on class %d of %d probabilities", label, len(orig.Probs))
		}
		origConf = orig.Probs[label]
		diff = p.Probs[label] - origConf
	} else {
		if e.Value != nil {
			return rNone, 0, fmt.Errorf("monotonic with a fixed label needs probabilities")
		}
		origConf = orig.Conf
		if p.Class == orig.Class {
			diff = p.Conf - orig.Conf
		} else {
			diff = -(orig.Conf + p.Conf)
		}
	}
	if e.Increasing && origConf <= tol {
		return rNone, 0, nil
	}
	if !e.Increasing && origConf >= 1-tol {
		return rNone, 0, nil
	}
	if e.Increasing {
		if diff+tol >= 0 {
			return rPass, 0, nil
		}
		return rFail, -diff, nil
	}
	if diff-tol <= 0 {
		return rPass, 0, nil
	}
	return rFail, diff, nil
}

func tripletResults(p0, p1, p2 int, mode TripletMode) []result {
	switch {
	case p0+p1 == 2:
		return []result{rPass, rPass, passIf(p2 == 1)}
	case mode == TripletCheckList && p0+p1 == 1 && p1 != 0:
		return []result{rFail, rFail, rFail}
	case mode == TripletCorrected && p0+p1 == 1:
		return []result{rPass, rPass, passIf(p2 == 0)}
	}
	return []result{rNone, rNone, rNone}
}

// squadClean is the normalisation of CheckList's SQuAD tests:
// s.lstrip('[a,the,an,in,at] ').rstrip('.') — a character-set lstrip, so it
// removes any leading run of the characters "[a,thenis] ".
func squadClean(s string) string {
	s = strings.TrimLeft(s, "[a,the,an,in,at] ")
	return strings.TrimRight(s, ".")
}

// modeNames name a TripletMode's and a SquashMode's values in results, in
// their order: CheckList's behaviour, then the corrected one.
var modeNames = [...]string{"checklist", "corrected"}

// MarshalText names the mode in results: checklist or corrected.
func (m TripletMode) MarshalText() ([]byte, error) { return []byte(modeNames[m]), nil }

// MarshalText names the mode in results: checklist or corrected.
func (m SquashMode) MarshalText() ([]byte, error) { return []byte(modeNames[m]), nil }

// UnmarshalText reads checklist or corrected.
func (m *TripletMode) UnmarshalText(b []byte) error { return unmarshalMode(m, "triplet", b) }

// UnmarshalText reads checklist or corrected.
func (m *SquashMode) UnmarshalText(b []byte) error { return unmarshalMode(m, "squash", b) }

// unmarshalMode sets *m to the mode modeNames names b; what names the
// kind of mode in the error.
func unmarshalMode[M TripletMode | SquashMode](m *M, what string, b []byte) error {
	i := slices.Index(modeNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("%s mode %q: want checklist or corrected", what, b)
	}
	*m = M(i)
	return nil
}
