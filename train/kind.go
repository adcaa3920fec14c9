package train

import (
	"context"
	"fmt"

	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// A taskKind is what runs of one kind of task do differently: classification
// (a Task: one class per input, a sequence classifier; classTaskKind) or
// span prediction (READ: an answer span per question, a span model;
// spanTaskKind). Validate, Run and Search go through a spec's kind
// (RunSpec.kind), so both kinds share one run path and one search.
type taskKind interface {
	// check refuses, for Validate, what the kind cannot train.
	check(s *RunSpec) error
	// checkFold refuses a held-out fold the kind cannot score.
	checkFold(k splits.FoldKind) error
	// prepare loads the suite, its held-out fold, the starting model and the
	// configuration's training data.
	prepare(ctx context.Context, spec RunSpec) (kindRun, error)
}

// asKindRun returns a prepared run as a kindRun: nil, not an interface
// holding a nil pointer, when preparing it failed.
func asKindRun[R kindRun](r R, err error) (kindRun, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// A kindRun is a run of some kind ready to train.
type kindRun interface {
	// batches is what training draws from: the model, its rows and the
	// phases of the run's method.
	batches() (models.Classifier, Data, []Phase)
	// inputChecks is what the checks of the run's inputs found (nil: the
	// kind checks none), written before anything trains.
	inputChecks() *inputcheck.Report
	// trainedOn lists the rows and cases the run trains, validates and is
	// scored on (nil: the kind records none), written before training.
	trainedOn() *Trained
	// saveModel writes the model, with its tokenizer's files, into dir.
	saveModel(dir string) error
	// evaluate scores the trained model on the i.i.d. test set and on the
	// T_test cases of the functionalities it is scored on (the first
	// evalLimit of each, when positive), writing the predictions and
	// verdicts into outDir. It fills the Result's i.i.d. fields and Suite;
	// Run adds the rest.
	evaluate(ctx context.Context, evalLimit int, outDir string) (*Result, error)
	// objective scores the trained model on T_val with the kind's BeLUGA
	// search objective (REFERENCE 1.4).
	objective(ctx context.Context, seed uint64) (Trial, error)
}

// Kind names a task's kind in run specs (kind: classification | span).
type Kind string

// The task kinds.
const (
	// KindClassification: one class per input (sentiment, qqp, every
	// declared task with labels).
	KindClassification Kind = "classification"
	// KindSpan: an answer span per question (READ: SQuAD-format data).
	KindSpan Kind = "span"
)

// taskKinds is the registry of kinds: what each one's runs do.
var taskKinds = map[Kind]taskKind{
	KindClassification: classTaskKind{},
	KindSpan:           spanTaskKind{},
}

// ParseKind reads a kind's name; "" is the task's own (ResolvedKind).
func ParseKind(name string) (Kind, error) {
	k := Kind(name)
	if _, ok := taskKinds[k]; ok || name == "" {
		return k, nil
	}
	return "", fmt.Errorf("unknown task kind %q (want %s or %s)", name, KindClassification, KindSpan)
}

// ResolvedKind is the spec's task kind: the one it declares, else its
// built-in task's, else classification.
func (s *RunSpec) ResolvedKind() Kind {
	if s.Kind != "" {
		return s.Kind
	}
	if k, ok := builtinKind(s.Task); ok {
		return k
	}
	return KindClassification
}

// kind is the registry's implementation of the spec's task kind
// (classification for a kind Validate refuses).
func (s *RunSpec) kind() taskKind {
	if k, ok := taskKinds[s.ResolvedKind()]; ok {
		return k
	}
	return classTaskKind{}
}

// trainRun trains a prepared run as the spec says.
func trainRun(ctx context.Context, r kindRun, spec RunSpec) ([]CurvePoint, error) {
	m, data, phases := r.batches()
	return Train(ctx, m, data, phases, TrainOptions{Seed: spec.Seed, MaxSteps: spec.MaxSteps, Cache: spec.Cache})
}

// trainingSuite is the part of s a run trains on before its fold removes
// what it holds out: only the first SuiteLimit T_train cases of each
// functionality when SuiteLimit is positive, all of s otherwise. With
// SuiteLimitAfterHoldOut the cap counts only the cases fold keeps, so a
// fold holding out some of a functionality's cases (a metadata fold)
// trains on up to SuiteLimit of the others; a fold removing whole
// functionalities trains on the same cases either way.
func (spec *RunSpec) trainingSuite(s *suites.Suite, fold *splits.Fold) *suites.Suite {
	if spec.SuiteLimit <= 0 {
		return s
	}
	if spec.SuiteLimitAfterHoldOut {
		return limitCases(s, suites.SplitTrain, spec.SuiteLimit, fold)
	}
	return limitCases(s, suites.SplitTrain, spec.SuiteLimit, nil)
}

// scoredSuite is the part of s a run is scored on: the functionalities fold
// scores (all without a fold), and only the first evalLimit T_test cases of
// each when evalLimit is positive.
func scoredSuite(s *suites.Suite, fold *splits.Fold, evalLimit int) *suites.Suite {
	if fold != nil {
		s = subsetSuite(s, fold.Scored)
	}
	if evalLimit > 0 {
		s = dropOtherSplits(limitCases(s, suites.SplitTest, evalLimit, nil), suites.SplitTest)
	}
	return s
}
