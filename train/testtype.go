package train

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/suites"
)

// This file is the trainer's half of the test-type registry: package suites
// registers a type's name, case shape, expectation and colour
// (suites.RegisterTestType); here a type is given the batch kind its cases
// train as, and each batch kind carries everything the training loops do
// with it — its name in curves, its span form, how many cases fill a batch,
// how a batch is built, its loss and its IRM penalty. The loops, the
// environments and the data builders look kinds up here and never name a
// test type.

// TypeTraining is how the functionalities of one test type train.
type TypeTraining struct {
	// Kind is the batch kind the type's cases train as: KindMFT (every
	// input a labelled row), KindINV (an original and a perturbation,
	// invariance loss) or KindDIR (a pair and a direction; label-DIR for a
	// task that trains DIR cases as labelled pairs).
	Kind BatchKind
	// Direction is the direction rule (losses.ParseDirection) of a
	// directional type's functionality that names none in its Training:
	// a type whose direction is its definition.
	Direction string
}

var (
	typeTrainMu   sync.RWMutex
	typeTrainings = map[suites.TestType]TypeTraining{
		suites.MFT: {Kind: KindMFT},
		suites.INV: {Kind: KindINV},
		suites.DIR: {Kind: KindDIR},
	}
)

// RegisterTestType says how test type t trains. t must be registered with
// package suites first; the kind must be one a suite's cases take.
func RegisterTestType(t suites.TestType, tr TypeTraining) error {
	if !t.Registered() {
		return fmt.Errorf("test type %s: register it with suites.RegisterTestType first", t)
	}
	if tr.Kind < 0 || int(tr.Kind) >= len(kinds) || !kinds[tr.Kind].suite {
		return fmt.Errorf("test type %s: batch kind %d is not one a suite's cases train as", t, tr.Kind)
	}
	if tr.Direction != "" {
		if !kinds[tr.Kind].directed {
			return fmt.Errorf("test type %s: a direction for %s batches, which take none", t, kinds[tr.Kind].name)
		}
		if _, err := losses.ParseDirection(tr.Direction); err != nil {
			return fmt.Errorf("test type %s: %w", t, err)
		}
	}
	typeTrainMu.Lock()
	defer typeTrainMu.Unlock()
	if _, ok := typeTrainings[t]; ok {
		return fmt.Errorf("test type %s: training registered twice", t)
	}
	typeTrainings[t] = tr
	return nil
}

// trainingOf returns how functionality f trains (by its training type).
func trainingOf(f *suites.Functionality) (TypeTraining, error) {
	typeTrainMu.RLock()
	tr, ok := typeTrainings[f.TrainType()]
	typeTrainMu.RUnlock()
	if !ok {
		return tr, fmt.Errorf("functionality %q: test type %s has no training (train.RegisterTestType)", f.Name, f.TrainType())
	}
	return tr, nil
}

// BatchKind is the form a batch holds — the batch kind of a test type
// (batches are homogeneous, as in BeLUGA's MultiTestTypeDataloader), or
// i.i.d. data — and indexes the kinds table.
type BatchKind int

// Batch kinds.
const (
	KindMFT BatchKind = iota
	KindINV
	KindDIR
	KindIID
	// KindLabelDIR batches hold QQP's DIR cases as labelled pairs.
	KindLabelDIR
	// The span kinds hold reading-comprehension features (Data.SpanLength):
	// MFT and i.i.d. rows train on their answer positions (losses.SpanMFT),
	// INV pairs on their aligned tokens (losses.SpanINV).
	KindSpanMFT
	KindSpanINV
	KindSpanIID
)

// kindSpec is what the training loops do with one batch kind.
type kindSpec struct {
	name string
	// span is the kind's span form (Data.SpanLength); the kind itself
	// when it has none.
	span BatchKind
	// suite: a test type's cases may train as the kind; rows and pairs
	// return its part of a SuiteData (one of them nil).
	suite bool
	rows  func(*SuiteData) *[]Row
	pairs func(*SuiteData) *[]Perturbed
	// directed pairs carry a direction each; labelled pairs train as
	// labelled rows (label-DIR).
	directed, labelled bool
	// cases is how many rows or cases fill a batch of size bs.
	cases func(bs int) int
	// loss is the batch's training loss of logits z (rows × cols).
	loss func(ev *losses.Evaluator, b Batch, z []float32, rows, cols int, opt LossOptions) (float64, []float32, error)
	// penalty is the batch's IRM penalty.
	penalty func(ev *losses.Evaluator, r *IRM, b Batch, z []float32) (float64, []float32, error)
}

func fullBatch(bs int) int { return bs }

// pairCases: INV and DIR batches hold the originals and one perturbation
// of each, so half a batch of cases.
func pairCases(bs int) int { return max(1, bs/2) }

func rowLoss(ev *losses.Evaluator, b Batch, z []float32, rows, cols int, opt LossOptions) (float64, []float32, error) {
	if opt.classWeights != nil && opt.MFT == losses.SoftmaxCE {
		return weightedCE(ev, z, rows, cols, b.Targets, *opt.classWeights)
	}
	return ev.MFT(z, rows, cols, b.Targets, opt.MFT)
}

func spanRowLoss(ev *losses.Evaluator, b Batch, z []float32, rows, _ int, _ LossOptions) (float64, []float32, error) {
	return ev.SpanMFT(z, rows, b.Input.SeqLen, b.Starts, b.Ends)
}

// dummyPenalty is IRMv1's penalty with the dummy loss d; nil d: the IRM's
// own (BeLUGA: softmax CE).
func dummyPenalty(d *losses.DummyKind) func(*losses.Evaluator, *IRM, Batch, []float32) (float64, []float32, error) {
	return func(ev *losses.Evaluator, r *IRM, b Batch, z []float32) (float64, []float32, error) {
		kind := r.Dummy
		if d != nil {
			kind = *d
		}
		return ev.IRMPenalty(z, b.Input.Size, len(z)/b.Input.Size, kind, b.Targets, b.Dirs, r.DomainBed)
	}
}

func dummy(d losses.DummyKind) *losses.DummyKind { return &d }

func spanRowPenalty(ev *losses.Evaluator, r *IRM, b Batch, z []float32) (float64, []float32, error) {
	return ev.SpanIRMPenaltyMFT(z, b.Input.Size, b.Input.SeqLen, b.Starts, b.Ends, r.DomainBed)
}

// kinds is every batch kind's behaviour, indexed by BatchKind; the suite
// kinds in the order an epoch draws them (MFT, INV, DIR, label-DIR: the
// order fixes the random stream, so the run ids' results depend on it).
var kinds = [...]kindSpec{
	KindMFT: {name: "MFT", span: KindSpanMFT, suite: true, cases: fullBatch,
		rows: func(s *SuiteData) *[]Row { return &s.MFT }, loss: rowLoss, penalty: dummyPenalty(nil)},
	KindINV: {name: "INV", span: KindSpanINV, suite: true, cases: pairCases,
		pairs: func(s *SuiteData) *[]Perturbed { return &s.INV },
		loss: func(ev *losses.Evaluator, _ Batch, z []float32, rows, cols int, opt LossOptions) (float64, []float32, error) {
			return ev.INV(z, rows, cols, opt.DetachINV)
		},
		penalty: dummyPenalty(dummy(losses.DummyINV))},
	KindDIR: {name: "DIR", span: KindDIR, suite: true, directed: true, cases: pairCases,
		pairs: func(s *SuiteData) *[]Perturbed { return &s.DIR },
		loss: func(ev *losses.Evaluator, b Batch, z []float32, rows, _ int, _ LossOptions) (float64, []float32, error) {
			return ev.DIR(z, rows, b.Dirs)
		},
		penalty: dummyPenalty(dummy(losses.DummyDIR))},
	KindIID: {name: "iid", span: KindSpanIID, cases: fullBatch, loss: rowLoss, penalty: dummyPenalty(nil)},
	KindLabelDIR: {name: "label-DIR", span: KindLabelDIR, suite: true, labelled: true, cases: labelDIRCases,
		pairs: func(s *SuiteData) *[]Perturbed { return &s.LabelDIR },
		loss: func(ev *losses.Evaluator, b Batch, z []float32, rows, cols int, _ LossOptions) (float64, []float32, error) {
			return ev.MFT(z, rows, cols, b.Targets, losses.SoftmaxCE)
		},
		penalty: dummyPenalty(dummy(losses.DummyCE))},
	KindSpanMFT: {name: "span-MFT", span: KindSpanMFT, cases: fullBatch, loss: spanRowLoss, penalty: spanRowPenalty},
	KindSpanINV: {name: "span-INV", span: KindSpanINV, cases: fullBatch,
		loss: func(ev *losses.Evaluator, b Batch, z []float32, rows, _ int, opt LossOptions) (float64, []float32, error) {
			return ev.SpanINV(z, rows, b.Input.SeqLen, b.Aligns, opt.DetachINV)
		},
		penalty: func(ev *losses.Evaluator, r *IRM, b Batch, z []float32) (float64, []float32, error) {
			return ev.SpanIRMPenaltyINV(z, b.Input.Size, b.Input.SeqLen, b.Aligns, r.DomainBed)
		}},
	KindSpanIID: {name: "span-iid", span: KindSpanIID, cases: fullBatch, loss: spanRowLoss, penalty: spanRowPenalty},
}

// labelDIRCases is how many QQP DIR cases fill a batch: each yields up to
// three pairs, so batch/3 (REFERENCE 1.5).
func labelDIRCases(bs int) int { return max(1, bs/3) }

// labelDIRRows picks the pairs a visit of a label-DIR case trains on: the
// original and two perturbations drawn without replacement, or, when the
// original is left out, up to three perturbations.
func labelDIRRows(rng *rand.Rand, p Perturbed) ([]models.Encoding, []int) {
	perm := rng.Perm(len(p.Perts))
	var encs []models.Encoding
	var labels []int
	k := min(3, len(p.Perts))
	if p.WithOriginal {
		encs, labels = append(encs, p.Orig), append(labels, p.Labels[0])
		k = min(2, len(p.Perts))
	}
	for _, j := range perm[:k] {
		encs, labels = append(encs, p.Perts[j]), append(labels, p.Labels[j+1])
	}
	return encs, labels
}

// labelDIRBatch builds the batch of the given label-DIR cases.
func labelDIRBatch(rng *rand.Rand, cases []Perturbed) Batch {
	b := Batch{Kind: KindLabelDIR}
	var encs []models.Encoding
	for _, p := range cases {
		e, ls := labelDIRRows(rng, p)
		encs = append(encs, e...)
		for _, l := range ls {
			t := make([]float64, p.Classes)
			t[l] = 1
			b.Targets = append(b.Targets, t...)
		}
	}
	b.Input = models.NewBatch(encs)
	return b
}

func (k BatchKind) String() string { return kinds[k].name }

// suiteKinds are the kinds a suite's cases train as, in table order.
func suiteKinds() []BatchKind {
	var out []BatchKind
	for k := range kinds {
		if kinds[k].suite {
			out = append(out, BatchKind(k))
		}
	}
	return out
}

// size is how many rows or cases of kind k s holds.
func (s *SuiteData) size(k BatchKind) int {
	if kinds[k].rows != nil {
		return len(*kinds[k].rows(s))
	}
	return len(*kinds[k].pairs(s))
}
