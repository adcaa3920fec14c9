// Package suites holds behavioural test suites: the data model (a suite has
// functionality classes, functionalities and test cases), the native JSON-lines
// file format, validation, importers for the CheckList release pickles, for
// HateCheck and Multilingual HateCheck, and for any table of test cases whose
// columns are named (ImportTable: classes from a column, a map or rules, the
// other columns kept as case metadata, links between cases made INV or DIR
// pairs grouped into one split), statistics, and the CheckList expectation of
// every test type.
//
// A suite is organised as CheckList organises it:
//
//	Suite
//	└── Functionality (a CheckList test; has a Class = CheckList "capability",
//	    │              a Type: MFT, INV or DIR, and an Expectation)
//	    └── Case (a CheckList test case: one or more Inputs; for INV and DIR the
//	              first input is the original and the rest are perturbations)
//
// Test types are a registry (testtype.go): each carries its name, the shape
// of its cases, its default expectation, how a failure is described and
// its colour; the packages above ask it (and train attaches each type's
// batches and loss by the same name) rather than naming a type.
//
// Each functionality carries two views that BeLUGA needs side by side:
//
//   - Expect, CheckList's evaluation semantics (what counts as a pass), used by
//     package metrics;
//   - Train, BeLUGA's training view (soft labels such as not_0, DIR directions,
//     the QQP relabels and the synonyms test trained as MFT), used by package train.
package suites

import (
	"encoding/json"
	"iter"
)

// Split names a part of BeLUGA's per-functionality split of test cases.
type Split string

// The splits of a suite's test cases (REFERENCE 1.3). The empty Split means
// "not assigned".
const (
	SplitTrain      Split = "train"
	SplitValidation Split = "validation"
	SplitTest       Split = "test"
)

// Suite is a behavioural test suite.
type Suite struct {
	// Name identifies the suite, e.g. "sentiment".
	Name string
	// Task is the task the suite tests: "sentiment", "qqp", "squad", "hatecheck",
	// or any name a user chooses for a classification task.
	Task string
	// Labels names the classes of the suite's labels in index order, e.g.
	// negative, neutral, positive. Empty for span tasks (SQuAD).
	Labels []string
	// ModelLabels names the classes of the model scored on the suite when they
	// differ from Labels; for sentiment a 2-way classifier (negative, positive)
	// whose probabilities CheckList squashes to the three Labels.
	ModelLabels []string
	// Functionalities in suite order (the order of CheckList's suite.tests).
	Functionalities []*Functionality
}

// Functionality is one CheckList test: a named behaviour with its test cases.
type Functionality struct {
	Name        string
	Class       string // CheckList "capability", BeLUGA "functionality class"
	Type        TestType
	Description string
	Expect      Expectation
	Train       Training
	Cases       []*Case
}

// Case is one test case.
type Case struct {
	// ID is the index of the case in its CheckList test (BeLUGA's test_id). It is
	// unique within a functionality.
	ID int
	// Inputs of the case. For INV and DIR the first is the original, the rest
	// are perturbations of it.
	Inputs []Input
	// Labels holds none (no label), one (applies to every input) or one per input.
	Labels []Label
	// Meta holds the case's optional metadata as raw JSON, as CheckList's
	// test.meta[i] holds it: SQuAD's substitution tests keep one entry per
	// input ({} for the original, then [old, new] for each perturbation).
	Meta json.RawMessage
	// Split is the fixed split of the case, if the suite carries one.
	Split Split
	// Group names the cases that must share a split: a case and the cases
	// that perturb or contrast it, across functionalities (an imported
	// table's links). Empty: the case is on its own.
	Group string
}

// Input is one model input: a single text, or a pair (question pair for QQP,
// context and question for SQuAD).
type Input struct {
	Text   string
	Pair   string
	IsPair bool
}

// Label is a gold label: a class index, or an answer text for span tasks.
type Label struct {
	Class    int
	Answer   string
	IsAnswer bool
}

// ClassLabel returns the label of class c.
func ClassLabel(c int) Label { return Label{Class: c} }

// AnswerLabel returns the answer-text label s.
func AnswerLabel(s string) Label { return Label{Answer: s, IsAnswer: true} }

// LabelFor returns the label that applies to input i of the case, and false
// when the case has none.
func (c *Case) LabelFor(i int) (Label, bool) {
	switch len(c.Labels) {
	case 0:
		return Label{}, false
	case 1:
		return c.Labels[0], true
	}
	if i < 0 || i >= len(c.Labels) {
		return Label{}, false
	}
	return c.Labels[i], true
}

// Kinds of expectation: each is one rule of CheckList's Expect module as the
// release suites use it (REFERENCE 2.3, 2.4).
const (
	ExpectEq                   = "eq"                      // pred == label (or == Value when set)
	ExpectPredNot              = "pred_not"                // pred != Value
	ExpectAllowForNeutral      = "allow_for_neutral"       // label 1: pred != 0; else pred == label
	ExpectInv                  = "inv"                     // invariance with Tolerance
	ExpectMonotonic            = "monotonic"               // confidence of the original class does not fall (Increasing) / rise
	ExpectPositiveChange       = "positive_change"         // sentiment moves towards positive (Direction not_more_negative) or negative
	ExpectImplicationTriplet   = "qqp_implication_triplet" // QQP: predictions on (x,a),(x,b),(a,b)
	ExpectSquadCleanEq         = "squad_clean_eq"          // clean(pred) == clean(label)
	ExpectSquadInvSubstitution = "squad_inv_substitution"  // pred equals original answer with the substitution applied
	ExpectAzimuth              = "azimuth"                 // Azimuth's rule: same class, top-class confidence within Tolerance
)

// Expectation is CheckList's evaluation rule for a functionality.
type Expectation struct {
	// Kind is one of the Expect* constants.
	Kind string
	// Value is the expected class for eq and pred_not when it is fixed by the
	// test rather than taken from the labels.
	Value *int
	// Tolerance for inv, monotonic and positive_change.
	Tolerance float64
	// Increasing is monotonic's direction.
	Increasing bool
	// Direction names a DIR rule in CheckList's words: not_less_confident,
	// not_more_confident, not_more_negative, not_more_positive, pred_is_0, pred_is_1.
	Direction string
	// Slice restricts scoring to test cases whose original prediction satisfies
	// it: "orig_pred != 1" (sentiment: original not neutral) or "orig_pred == 1"
	// (QQP: original predicted duplicate). Empty means no slice.
	Slice string
	// SliceAgg is the aggregation the slice uses over a case's inputs:
	// "all" or "all_except_first".
	SliceAgg string
	// Agg is how a case's per-input results combine: "all" (MFT) or
	// "all_except_first" (INV, DIR).
	Agg string
	// AllowSingleInput accepts INV/DIR cases with only the original input.
	// CheckList counts such a case as passing (nothing is compared); the
	// release QQP synonyms test is made of them. Hand-written suites leave it
	// false so that a forgotten perturbation is an error.
	AllowSingleInput bool
}

// Training is BeLUGA's training view of a functionality: the edits its
// checkList_to_csv notebook makes by hand (REFERENCE 1.2). Empty fields mean
// "as the suite says".
type Training struct {
	// Type overrides the test type used for training (QQP's synonyms test, an
	// INV in CheckList, is trained as MFT).
	Type TestType
	// Label overrides the case labels for training: a class index as text
	// ("0", "1", "2") or "not_0" (soft label [1/3, 2/3]).
	Label string
	// Direction is the DIR training rule: not_less_0, not_less_2,
	// not_less_conf, not_more_conf, or "label" (QQP: DIR cases trained as
	// labelled cases).
	Direction string
	// Slice is BeLUGA's slice column (not_1 or 1); it is recorded but, as in
	// BeLUGA, not used in training.
	Slice string
	// Scored says that Label applies to scoring too: BeLUGA patched the
	// suite it evaluates with (suite_evaluation.ipynb cells 41–42 set QQP's
	// "Order does matter for asymmetric relations" to label 0 and re-save
	// the suite), so its pass rates are computed against Label, not the
	// CheckList label. metrics.Options.CheckListLabels undoes it.
	Scored bool
}

// TrainType is the test type the functionality is trained as.
func (f *Functionality) TrainType() TestType {
	if f.Train.Type != "" {
		return f.Train.Type
	}
	return f.Type
}

// NumInputs counts the inputs of all cases of the functionality.
func (f *Functionality) NumInputs() int {
	n := 0
	for _, c := range f.Cases {
		n += len(c.Inputs)
	}
	return n
}

// Functionality returns the functionality called name, or nil.
func (s *Suite) Functionality(name string) *Functionality {
	for _, f := range s.Functionalities {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Classes returns the functionality classes in order of first appearance.
func (s *Suite) Classes() []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range s.Functionalities {
		if !seen[f.Class] {
			seen[f.Class] = true
			out = append(out, f.Class)
		}
	}
	return out
}

// CasesIn yields, in suite order, the cases of split with their
// functionality — every case when split is empty: the one rule by which
// scoring (which cases a split's predictions answer), training and the
// checks read a split of a suite.
func (s *Suite) CasesIn(split Split) iter.Seq2[*Functionality, *Case] {
	return func(yield func(*Functionality, *Case) bool) {
		for _, f := range s.Functionalities {
			for c := range f.CasesIn(split) {
				if !yield(f, c) {
					return
				}
			}
		}
	}
}

// CasesIn yields the functionality's cases of split in order (every case
// when split is empty).
func (f *Functionality) CasesIn(split Split) iter.Seq[*Case] {
	return func(yield func(*Case) bool) {
		for _, c := range f.Cases {
			if (split == "" || c.Split == split) && !yield(c) {
				return
			}
		}
	}
}

// NumCases counts the test cases of the suite.
func (s *Suite) NumCases() int {
	n := 0
	for _, f := range s.Functionalities {
		n += len(f.Cases)
	}
	return n
}
