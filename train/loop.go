package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
)

// BatchKind is the test type a batch holds (batches are homogeneous, as in
// BeLUGA's MultiTestTypeDataloader), or i.i.d. data.
type BatchKind int

// Batch kinds.
const (
	KindMFT BatchKind = iota
	KindINV
	KindDIR
	KindIID
	// KindLabelDIR batches hold QQP's DIR cases as labelled pairs.
	KindLabelDIR
)

func (k BatchKind) String() string { return [...]string{"MFT", "INV", "DIR", "iid", "label-DIR"}[k] }

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
			t := [2]float64{}
			t[l] = 1
			b.Targets = append(b.Targets, t[:]...)
		}
	}
	b.Input = models.NewBatch(encs)
	return b
}

// Batch is one homogeneous training batch. INV and DIR batches hold the
// originals, then one perturbation of each.
type Batch struct {
	Kind    BatchKind
	Input   models.Batch
	Targets []float64          // MFT and i.i.d.: 2 per row
	Dirs    []losses.Direction // DIR: one per pair
}

// Data is everything one training phase draws batches from.
type Data struct {
	Suite *SuiteData // nil: i.i.d. only
	IID   []Row      // nil: suite only
}

// Mixer draws BeLUGA's epochs: every type's examples shuffled and cut into
// batches — batchSize rows for MFT and i.i.d. data, batchSize/2 cases for
// INV and DIR, each with one perturbation drawn at random per visit — and
// the batches of all types interleaved in a random order.
type Mixer struct {
	Data      Data
	BatchSize int
	rng       *rand.Rand
}

// NewMixer returns a mixer drawing from seed.
func NewMixer(d Data, batchSize int, seed uint64) *Mixer {
	return &Mixer{Data: d, BatchSize: batchSize, rng: rand.New(rand.NewPCG(seed, 0xbe1a6a))}
}

// StepsPerEpoch is BeLUGA's len(dataloader): Σ over types of
// ceil(N_type / batch size of the type).
func (mx *Mixer) StepsPerEpoch() int {
	ceil := func(n, b int) int { return (n + b - 1) / b }
	half := max(1, mx.BatchSize/2)
	n := ceil(len(mx.Data.IID), mx.BatchSize)
	if s := mx.Data.Suite; s != nil {
		n += ceil(len(s.MFT), mx.BatchSize) + ceil(len(s.INV), half) + ceil(len(s.DIR), half) +
			ceil(len(s.LabelDIR), labelDIRCases(mx.BatchSize))
	}
	return n
}

// Epoch returns one epoch of batches in training order.
func (mx *Mixer) Epoch() []Batch {
	var out []Batch
	rows := func(kind BatchKind, rs []Row) {
		for _, chunk := range mx.chunks(len(rs), mx.BatchSize) {
			b := Batch{Kind: kind, Targets: make([]float64, 0, 2*len(chunk))}
			encs := make([]models.Encoding, len(chunk))
			for i, j := range chunk {
				encs[i] = rs[j].Enc
				b.Targets = append(b.Targets, rs[j].Target[:]...)
			}
			b.Input = models.NewBatch(encs)
			out = append(out, b)
		}
	}
	pairs := func(kind BatchKind, ps []Perturbed) {
		for _, chunk := range mx.chunks(len(ps), max(1, mx.BatchSize/2)) {
			b := Batch{Kind: kind}
			encs := make([]models.Encoding, 2*len(chunk))
			for i, j := range chunk {
				p := ps[j]
				encs[i] = p.Orig
				encs[len(chunk)+i] = p.Perts[mx.rng.IntN(len(p.Perts))]
				if kind == KindDIR {
					b.Dirs = append(b.Dirs, p.Direction)
				}
			}
			b.Input = models.NewBatch(encs)
			out = append(out, b)
		}
	}
	rows(KindIID, mx.Data.IID)
	if s := mx.Data.Suite; s != nil {
		rows(KindMFT, s.MFT)
		pairs(KindINV, s.INV)
		pairs(KindDIR, s.DIR)
		for _, chunk := range mx.chunks(len(s.LabelDIR), labelDIRCases(mx.BatchSize)) {
			cases := make([]Perturbed, len(chunk))
			for i, j := range chunk {
				cases[i] = s.LabelDIR[j]
			}
			out = append(out, labelDIRBatch(mx.rng, cases))
		}
	}
	mx.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// chunks shuffles 0..n-1 and cuts it into pieces of at most size.
func (mx *Mixer) chunks(n, size int) [][]int {
	idx := mx.rng.Perm(n)
	var out [][]int
	for start := 0; start < n; start += size {
		out = append(out, idx[start:min(start+size, n)])
	}
	return out
}

// LossOptions selects the loss forms.
type LossOptions struct {
	MFT       losses.MFTForm `json:"mft" yaml:"mft"`               // default: BeLUGA's sigmoid BCE
	DetachINV bool           `json:"detach_inv" yaml:"detach_inv"` // default: gradient through both INV branches
}

// batchLoss returns the loss function of b.
func batchLoss(ev *losses.Evaluator, b Batch, opt LossOptions) LossFunc {
	rows := b.Input.Size
	return func(z []float32) (float64, []float32, error) {
		switch b.Kind {
		case KindMFT, KindIID:
			return ev.MFT(z, rows, 2, b.Targets, opt.MFT)
		case KindLabelDIR:
			return ev.MFT(z, rows, 2, b.Targets, losses.SoftmaxCE)
		case KindINV:
			return ev.INV(z, rows, 2, opt.DetachINV)
		case KindDIR:
			return ev.DIR(z, rows, b.Dirs)
		}
		return 0, nil, fmt.Errorf("unknown batch kind %d", b.Kind)
	}
}

// CurvePoint is one logged update.
type CurvePoint struct {
	Step int     `json:"step"`
	Kind string  `json:"kind"`
	Loss float64 `json:"loss"`
	LR   float64 `json:"lr"`
}

// ErrDiverged wraps a non-finite loss; the run stops and records it.
var ErrDiverged = errors.New("training diverged")

// Phase trains m on data for epochs (fractions allowed: BeLUGA's
// max_steps = ceil(epochs · steps per epoch)) with AdamW, linear decay from
// lr and clipping at 1.0, and returns the loss curve.
func Phase(m models.Classifier, data Data, hp Hyper, opt *AdamW, frozen bool, seed uint64) ([]CurvePoint, error) {
	mx := NewMixer(data, hp.BatchSize, seed)
	perEpoch := mx.StepsPerEpoch()
	if perEpoch == 0 {
		return nil, fmt.Errorf("no training data")
	}
	total := int(math.Ceil(hp.Epochs * float64(perEpoch)))
	ev := losses.NewEvaluator()
	var curve []CurvePoint
	step := 0
	for step < total {
		for _, b := range mx.Epoch() {
			if step == total {
				break
			}
			lr := LinearDecay(hp.LR, step, total)
			l, err := Update(m, b.Input, batchLoss(ev, b, hp.Loss), opt, lr, 1.0, frozen)
			if errors.Is(err, losses.ErrNotFinite) {
				return curve, fmt.Errorf("%w at step %d (%s batch): loss %v", ErrDiverged, step, b.Kind, l)
			}
			if err != nil {
				return curve, fmt.Errorf("step %d: %w", step, err)
			}
			curve = append(curve, CurvePoint{Step: step, Kind: b.Kind.String(), Loss: l, LR: lr})
			step++
		}
	}
	return curve, nil
}

// Hyper are a training phase's hyper-parameters.
type Hyper struct {
	Epochs    float64     `json:"epochs" yaml:"epochs"`
	BatchSize int         `json:"batch_size" yaml:"batch_size"`
	LR        float64     `json:"lr" yaml:"lr"`
	Loss      LossOptions `json:"loss" yaml:"loss"`
}
