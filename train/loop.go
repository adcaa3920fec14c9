package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/optim"
)

// Batch is one homogeneous training batch. INV and DIR batches hold the
// originals, then one perturbation of each.
type Batch struct {
	Kind    BatchKind
	Input   models.Batch
	Targets []float64          // MFT and i.i.d.: one per class per row
	Dirs    []losses.Direction // DIR: one per pair
	// Span batches: the answer's token positions per row (span MFT and
	// i.i.d.), or the token alignment of each pair (span INV).
	Starts, Ends []int
	Aligns       []losses.SpanAlignment
}

// Data is everything one training phase draws batches from.
type Data struct {
	Suite *SuiteData // nil: i.i.d. only
	IID   []Row      // nil: suite only
	// SpanLength, when positive, says the rows and cases are span-model
	// features (reading comprehension): batches take the span kinds and are
	// padded to SpanLength tokens, as BeLUGA pads SQuAD features to
	// max_length (its span losses see every position's logit, padding
	// included).
	SpanLength int
}

// rowBatch builds the batch of rows rs[idx...] of kind.
func (d *Data) rowBatch(kind BatchKind, rs []Row, idx []int) Batch {
	encs := make([]models.Encoding, len(idx))
	b := Batch{Kind: kind}
	if d.SpanLength > 0 {
		b.Kind = kinds[kind].span
		for i, j := range idx {
			encs[i] = rs[j].Enc
			b.Starts, b.Ends = append(b.Starts, rs[j].Span[0]), append(b.Ends, rs[j].Span[1])
		}
		b.Input = padBatch(encs, d.SpanLength)
		return b
	}
	for i, j := range idx {
		encs[i] = rs[j].Enc
		b.Targets = append(b.Targets, rs[j].Target...)
	}
	b.Input = models.NewBatch(encs)
	return b
}

// batch builds the batch of kind k of rows[idx...] or pairs[idx...] (the
// one that kind holds), drawing perturbations from rng.
func (d *Data) batch(rng *rand.Rand, k BatchKind, rows []Row, pairs []Perturbed, idx []int) Batch {
	switch {
	case kinds[k].labelled:
		cases := make([]Perturbed, len(idx))
		for i, j := range idx {
			cases[i] = pairs[j]
		}
		return labelDIRBatch(rng, cases)
	case kinds[k].pairs != nil:
		return d.pairBatch(rng, k, pairs, idx)
	}
	return d.rowBatch(k, rows, idx)
}

// pairBatch builds the batch of INV or DIR cases ps[idx...]: the originals,
// then one perturbation of each drawn from rng.
func (d *Data) pairBatch(rng *rand.Rand, kind BatchKind, ps []Perturbed, idx []int) Batch {
	b := Batch{Kind: kind}
	encs := make([]models.Encoding, 2*len(idx))
	for i, j := range idx {
		p := ps[j]
		k := rng.IntN(len(p.Perts))
		encs[i], encs[len(idx)+i] = p.Orig, p.Perts[k]
		if kinds[kind].directed {
			b.Dirs = append(b.Dirs, p.Direction)
		}
		if d.SpanLength > 0 {
			b.Aligns = append(b.Aligns, p.Aligns[k])
		}
	}
	if d.SpanLength > 0 {
		b.Kind = kinds[kind].span
		b.Input = padBatch(encs, d.SpanLength)
		return b
	}
	b.Input = models.NewBatch(encs)
	return b
}

// padBatch pads encs to length tokens, the padding masked.
func padBatch(encs []models.Encoding, length int) models.Batch {
	b := models.NewBatch(encs)
	if b.SeqLen >= length {
		return b
	}
	out := models.Batch{Size: b.Size, SeqLen: length, IDs: make([]int, b.Size*length),
		Types: make([]int, b.Size*length), Mask: make([]float32, b.Size*length)}
	for i := 0; i < b.Size; i++ {
		copy(out.IDs[i*length:], b.IDs[i*b.SeqLen:(i+1)*b.SeqLen])
		copy(out.Types[i*length:], b.Types[i*b.SeqLen:(i+1)*b.SeqLen])
		copy(out.Mask[i*length:], b.Mask[i*b.SeqLen:(i+1)*b.SeqLen])
	}
	return out
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
	n := ceil(len(mx.Data.IID), mx.BatchSize)
	if s := mx.Data.Suite; s != nil {
		for _, k := range suiteKinds() {
			n += ceil(s.size(k), kinds[k].cases(mx.BatchSize))
		}
	}
	return n
}

// Epoch returns one epoch of batches in training order.
func (mx *Mixer) Epoch() []Batch {
	var out []Batch
	d := &mx.Data
	for _, chunk := range mx.chunks(len(d.IID), mx.BatchSize) {
		out = append(out, d.rowBatch(KindIID, d.IID, chunk))
	}
	if s := d.Suite; s != nil {
		for _, k := range suiteKinds() {
			var rows []Row
			var pairs []Perturbed
			if kinds[k].rows != nil {
				rows = *kinds[k].rows(s)
			} else {
				pairs = *kinds[k].pairs(s)
			}
			for _, chunk := range mx.chunks(s.size(k), kinds[k].cases(mx.BatchSize)) {
				out = append(out, d.batch(mx.rng, k, rows, pairs, chunk))
			}
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
	// classWeights weight the softmax cross-entropy of MFT and i.i.d. rows
	// (the task's ClassWeights, resolved for the run's training rows); a
	// pointer keeps Hyper comparable.
	classWeights *[]float64
}

// batchLoss returns the loss function of b.
func batchLoss(ev *losses.Evaluator, b Batch, opt LossOptions) LossFunc {
	rows := b.Input.Size
	return func(z []float32) (float64, []float32, error) {
		if rows == 0 || len(z)%rows != 0 {
			return 0, nil, fmt.Errorf("%d logits for a batch of %d", len(z), rows)
		}
		// The model's width is the task's number of classes.
		cols := len(z) / rows
		if b.Kind < 0 || int(b.Kind) >= len(kinds) {
			return 0, nil, fmt.Errorf("unknown batch kind %d", b.Kind)
		}
		return kinds[b.Kind].loss(ev, b, z, rows, cols, opt)
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

// Schedule is HuggingFace's linear decay without warm-up over Total
// positions: Next returns the learning rate of the current position and
// advances, as optimizer.step() then lr_scheduler.step() do.
type Schedule struct {
	LR    float64
	Total int
	Pos   int
}

// Next returns the current learning rate and advances the schedule.
func (s *Schedule) Next() float64 {
	lr := optim.LinearDecay(s.LR, s.Pos, s.Total)
	s.Pos++
	return lr
}

// Phase is one stretch of training with one optimiser and one schedule:
// LP-FT has two, every other method one.
type Phase struct {
	Hyper Hyper
	// WeightDecay is AdamW's decoupled decay (L2: 0.1).
	WeightDecay float64
	// Dropout, when positive, sets the model's hidden and attention dropout.
	Dropout float64
	// Frozen trains the head only (LP).
	Frozen bool
	// Update is the method's update step.
	Update Updater
}

// Updater is a method's update step, DomainBed's algorithm.update: it draws
// the batches of one update and leaves the gradient of its objective in the
// model's parameters. The loop owns everything else: the update count, the
// optimiser step (clipping at 1.0, AdamW, the schedule), the curve, the
// divergence check and cancellation.
type Updater interface {
	// Plan prepares a phase on data and returns how many updates it takes
	// and how many positions its learning-rate schedule has (more than the
	// updates when the method steps the optimiser itself, as Fish does).
	Plan(data Data, hp Hyper, seed uint64) (updates, schedule int, err error)
	// Update computes update st.Index.
	Update(st *UpdateState) (Step, error)
}

// UpdateState is what an update step works with.
type UpdateState struct {
	Model   models.Classifier
	Hyper   Hyper
	Index   int // 0-based update of the phase
	Updates int // updates in the phase
	Losses  *losses.Evaluator
	// Opt and Schedule are the phase's; a method that steps the optimiser
	// itself (Fish) takes learning rates from Schedule.Next and passes
	// Frozen to OptimizerStep.
	Opt      *optim.AdamW
	Schedule *Schedule
	Frozen   bool
	// Cache is TrainOptions.Cache.
	Cache string
}

// Step is what an update reports.
type Step struct {
	Loss float64
	Kind string // the batch kind or environment, for the curve
	// NoOptimizerStep skips the loop's optimiser step (Fish under torch ≥ 2.0,
	// whose zero_grad leaves no gradients for the Trainer's own step).
	NoOptimizerStep bool
}

// TrainOptions bound and seed a training run.
type TrainOptions struct {
	Seed uint64
	// MaxSteps caps each phase's updates (0: none); the schedule is laid over
	// the capped count, as HuggingFace's max_steps does.
	MaxSteps int
	// MaxGradNorm is the clipping norm (default 1.0, the Trainer's).
	MaxGradNorm float64
	// Cache is a directory of caches shared by runs (RunSpec.Cache).
	Cache string
}

// Train runs the phases on m and returns the loss curve. It stops with
// ErrDiverged at a non-finite loss and with ctx's error, within one update,
// when ctx is cancelled.
func Train(ctx context.Context, m models.Classifier, data Data, phases []Phase, opt TrainOptions) ([]CurvePoint, error) {
	clip := opt.MaxGradNorm
	if clip == 0 {
		clip = 1
	}
	ev := losses.NewEvaluator()
	var curve []CurvePoint
	report := StepsOf(ctx)
	for pi, ph := range phases {
		updates, schedule, err := ph.Update.Plan(data, ph.Hyper, opt.Seed+uint64(pi))
		if err != nil {
			return curve, err
		}
		if opt.MaxSteps > 0 && updates > opt.MaxSteps {
			schedule = schedule / updates * opt.MaxSteps
			updates = opt.MaxSteps
		}
		planned := len(curve) + updates
		if ph.Dropout > 0 {
			ds, ok := m.(dropoutSetter)
			if !ok {
				return curve, fmt.Errorf("the model's dropout cannot be set")
			}
			ds.SetDropout(ph.Dropout, ph.Dropout)
		}
		m.SetFrozenEncoder(ph.Frozen)
		st := &UpdateState{Model: m, Hyper: ph.Hyper, Updates: updates, Losses: ev,
			Opt: optim.NewAdamW(m.Backend(), ph.WeightDecay), Schedule: &Schedule{LR: ph.Hyper.LR, Total: schedule}, Frozen: ph.Frozen, Cache: opt.Cache}
		params := m.Params()
		if ph.Frozen {
			// A frozen encoder gets no gradient: clipping, AdamW and zeroing
			// the head's alone give the same step without sweeping every
			// encoder weight at every update.
			params = slices.DeleteFunc(slices.Clone(params), encoderFrozen)
		}
		for i := 0; i < updates; i++ {
			if err := ctx.Err(); err != nil {
				m.SetFrozenEncoder(false)
				return curve, fmt.Errorf("training stopped after %d updates: %w", len(curve), err)
			}
			st.Index = i
			step, err := ph.Update.Update(st)
			if err == nil && (math.IsNaN(step.Loss) || math.IsInf(step.Loss, 0)) {
				err = losses.ErrNotFinite
			}
			if err != nil {
				optim.ZeroGrad(m.Backend(), params)
				m.SetFrozenEncoder(false)
				if errors.Is(err, losses.ErrNotFinite) {
					return curve, fmt.Errorf("%w at update %d (%s): loss %v", ErrDiverged, len(curve), step.Kind, step.Loss)
				}
				return curve, fmt.Errorf("update %d: %w", len(curve), err)
			}
			lr := st.Schedule.Next()
			if step.NoOptimizerStep {
				optim.ZeroGrad(m.Backend(), params)
			} else {
				OptimizerStep(params, st.Opt, lr, clip, ph.Frozen)
			}
			curve = append(curve, CurvePoint{Step: len(curve), Kind: step.Kind, Loss: step.Loss, LR: lr})
			report(len(curve), planned)
		}
		m.SetFrozenEncoder(false)
	}
	return curve, nil
}

// erm is plain fine-tuning's update: the next batch of BeLUGA's mixed
// epochs (Mixer), one batch per update.
type erm struct {
	mx      *Mixer
	pending []Batch
}

func (e *erm) Plan(data Data, hp Hyper, seed uint64) (int, int, error) {
	e.mx, e.pending = NewMixer(data, hp.BatchSize, seed), nil
	perEpoch := e.mx.StepsPerEpoch()
	if perEpoch == 0 {
		return 0, 0, fmt.Errorf("no training data")
	}
	// BeLUGA's max_steps = ceil(epochs · steps per epoch).
	n := int(math.Ceil(hp.Epochs * float64(perEpoch)))
	return n, n, nil
}

func (e *erm) Update(st *UpdateState) (Step, error) {
	if len(e.pending) == 0 {
		e.pending = e.mx.Epoch()
	}
	b := e.pending[0]
	e.pending = e.pending[1:]
	l, err := Accumulate(st.Model, b.Input, batchLoss(st.Losses, b, st.Hyper.Loss), 1)
	return Step{Loss: l, Kind: b.Kind.String()}, err
}

// Hyper are a training phase's hyper-parameters.
type Hyper struct {
	Epochs    float64     `json:"epochs" yaml:"epochs"`
	BatchSize int         `json:"batch_size" yaml:"batch_size"`
	LR        float64     `json:"lr" yaml:"lr"`
	Loss      LossOptions `json:"loss" yaml:"loss"`
}

// problems checks the phase's hyper-parameters (phase names it: hyper,
// iid_hyper, probe_hyper), each one.
func (h Hyper) problems(phase string) []error {
	var out []error
	bad := func(field, format string, v any) {
		out = append(out, &SettingError{Path: phase + "." + field, Msg: fmt.Sprintf("%s: %s "+format, phase, field, v)})
	}
	if !(h.Epochs > 0) || math.IsInf(h.Epochs, 0) || h.Epochs > 1e4 {
		bad("epochs", "%v: want a positive number of at most 10000", h.Epochs)
	}
	if h.BatchSize <= 0 {
		bad("batch_size", "%d: want a positive number", h.BatchSize)
	}
	if !(h.LR > 0) || math.IsInf(h.LR, 0) {
		bad("lr", "%v: want a positive number", h.LR)
	}
	return out
}
