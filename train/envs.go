package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
)

// The group-robust methods see the data as environments: one per (test
// type, functionality) of the suite, plus the whole i.i.d. set as one
// (REFERENCE 1.6). Each step draws fresh random batches from environments,
// which amounts to sampling with replacement across steps.

// Env is one environment's examples.
type Env struct {
	Name string
	Kind BatchKind
	Rows []Row
	Pert []Perturbed
}

func (e *Env) size() int { return len(e.Rows) + len(e.Pert) }

// Environments groups data by environment, sorted by name.
func Environments(d Data) []*Env {
	byName := map[string]*Env{}
	get := func(name string, kind BatchKind) *Env {
		if byName[name] == nil {
			byName[name] = &Env{Name: name, Kind: kind}
		}
		return byName[name]
	}
	for _, r := range d.IID {
		e := get("iid", KindIID)
		e.Rows = append(e.Rows, r)
	}
	if s := d.Suite; s != nil {
		for _, r := range s.MFT {
			e := get(r.Env, KindMFT)
			e.Rows = append(e.Rows, r)
		}
		for _, p := range s.INV {
			e := get(p.Env, KindINV)
			e.Pert = append(e.Pert, p)
		}
		for _, p := range s.DIR {
			e := get(p.Env, KindDIR)
			e.Pert = append(e.Pert, p)
		}
		for _, p := range s.LabelDIR {
			e := get(p.Env, KindLabelDIR)
			e.Pert = append(e.Pert, p)
		}
	}
	envs := make([]*Env, 0, len(byName))
	for _, e := range byName {
		envs = append(envs, e)
	}
	sort.Slice(envs, func(i, j int) bool { return envs[i].Name < envs[j].Name })
	return envs
}

// envBatchSize is BeLUGA's batch size of an environment's loader.
func envBatchSize(e *Env, bs int) int {
	switch e.Kind {
	case KindINV, KindDIR:
		return max(1, bs/2)
	case KindLabelDIR:
		return labelDIRCases(bs)
	}
	return bs
}

// sample draws a random batch of e.
func sample(rng *rand.Rand, e *Env, bs int) Batch {
	n := min(envBatchSize(e, bs), e.size())
	idx := rng.Perm(e.size())[:n]
	if e.Kind == KindLabelDIR {
		cases := make([]Perturbed, n)
		for i, j := range idx {
			cases[i] = e.Pert[j]
		}
		return labelDIRBatch(rng, cases)
	}
	b := Batch{Kind: e.Kind}
	if e.Kind == KindINV || e.Kind == KindDIR {
		encs := make([]models.Encoding, 2*n)
		for i, j := range idx {
			p := e.Pert[j]
			encs[i], encs[n+i] = p.Orig, p.Perts[rng.IntN(len(p.Perts))]
			if e.Kind == KindDIR {
				b.Dirs = append(b.Dirs, p.Direction)
			}
		}
		b.Input = models.NewBatch(encs)
		return b
	}
	encs := make([]models.Encoding, n)
	for i, j := range idx {
		encs[i] = e.Rows[j].Enc
		b.Targets = append(b.Targets, e.Rows[j].Target[:]...)
	}
	b.Input = models.NewBatch(encs)
	return b
}

func totalSize(envs []*Env) int {
	n := 0
	for _, e := range envs {
		n += e.size()
	}
	return n
}

func meanBatchSize(envs []*Env, bs int) float64 {
	s := 0.0
	for _, e := range envs {
		s += float64(envBatchSize(e, bs))
	}
	return s / float64(len(envs))
}

// forwardLoss runs the forward pass and the batch's loss; the caller
// back-propagates (scaled) dz and releases the pass.
func forwardLoss(m models.Classifier, ev *losses.Evaluator, b Batch, opt LossOptions) (models.Pass, float64, []float32, error) {
	pass, err := m.Forward(b.Input, true)
	if err != nil {
		return nil, 0, nil, err
	}
	l, dz, err := batchLoss(ev, b, opt)(pass.Logits())
	if err != nil {
		pass.Release()
		return nil, l, nil, fmt.Errorf("%s batch: %w", b.Kind, err)
	}
	return pass, l, dz, nil
}

func diverged(err error, step int) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, losses.ErrNotFinite) {
		return fmt.Errorf("%w at step %d: %v", ErrDiverged, step, err)
	}
	return fmt.Errorf("step %d: %w", step, err)
}

// GroupDRO is online Group-DRO (Sagawa et al.) as BeLUGA runs it: each step
// takes one batch of one environment drawn uniformly, raises its weight
// q_g ← q_g·exp(η·loss_g), renormalises, and minimises q_g·loss_g. With
// AllGroups (DomainBed's form) each step takes a batch of every group and
// minimises Σ q_g·loss_g.
type GroupDRO struct {
	Eta       float64
	AllGroups bool
	// Q holds the final group weights after Train.
	Q map[string]float64
}

// Name implements Method.
func (*GroupDRO) Name() string { return "dro" }

// Train implements Method.
func (g *GroupDRO) Train(m models.Classifier, data Data, hp Hyper, seed uint64) ([]CurvePoint, error) {
	envs := Environments(data)
	if len(envs) == 0 {
		return nil, fmt.Errorf("no training data")
	}
	rng := rand.New(rand.NewPCG(seed, 0xd120))
	q := make([]float64, len(envs))
	for i := range q {
		q[i] = 1 / float64(len(envs))
	}
	total := int(math.Ceil(hp.Epochs * math.Ceil(float64(totalSize(envs))/meanBatchSize(envs, hp.BatchSize))))
	ev, opt := losses.NewEvaluator(), NewAdamW(0)
	var curve []CurvePoint
	for step := 0; step < total; step++ {
		groups := []int{rng.IntN(len(envs))}
		if g.AllGroups {
			groups = rng.Perm(len(envs))
		}
		lr := LinearDecay(hp.LR, step, total)
		type done struct {
			pass models.Pass
			dz   []float32
			loss float64
			g    int
		}
		var passes []done
		for _, gi := range groups {
			pass, l, dz, err := forwardLoss(m, ev, sample(rng, envs[gi], hp.BatchSize), hp.Loss)
			if err != nil {
				return curve, diverged(err, step)
			}
			q[gi] *= math.Exp(g.Eta * l)
			passes = append(passes, done{pass, dz, l, gi})
		}
		sum := 0.0
		for _, x := range q {
			sum += x
		}
		for i := range q {
			q[i] /= sum
		}
		weighted := 0.0
		for _, p := range passes {
			for i := range p.dz {
				p.dz[i] *= float32(q[p.g])
			}
			weighted += q[p.g] * p.loss
			if err := p.pass.Backward(p.dz); err != nil {
				return curve, err
			}
			p.pass.Release()
		}
		ClipGradNorm(m.Params(), 1)
		opt.Step(m.Params(), lr, nil)
		ZeroGrad(m.Params())
		curve = append(curve, CurvePoint{Step: step, Kind: envs[groups[0]].Name, Loss: weighted, LR: lr})
	}
	g.Q = map[string]float64{}
	for i, e := range envs {
		g.Q[e.Name] = q[i]
	}
	return curve, nil
}

// Fish (Shi et al.) as BeLUGA runs it: each outer step takes MetaSteps
// distinct environments, one batch each, with ordinary AdamW updates on a
// copy of the weights, then moves the weights a fraction MetaLR of the way
// to the result: θ ← θ + MetaLR·(θ_inner − θ). BeLUGA sets MetaLR =
// 5e-7 / lr / MetaSteps; the schedule runs MetaSteps times as long.
type Fish struct {
	MetaSteps int
}

// Name implements Method.
func (Fish) Name() string { return "fish" }

// MetaUpdate sets every parameter to outer + metaLR·(current − outer).
func MetaUpdate(params []*models.Param, outer [][]float32, metaLR float64) {
	a := float32(metaLR)
	for i, p := range params {
		for j, v := range p.Value {
			p.Value[j] = outer[i][j] + a*(v-outer[i][j])
		}
	}
}

// Train implements Method.
func (f Fish) Train(m models.Classifier, data Data, hp Hyper, seed uint64) ([]CurvePoint, error) {
	envs := Environments(data)
	if len(envs) == 0 {
		return nil, fmt.Errorf("no training data")
	}
	rng := rand.New(rand.NewPCG(seed, 0xf154))
	k := min(f.MetaSteps, len(envs))
	total := int(math.Ceil(hp.Epochs * math.Ceil(float64(totalSize(envs))/(meanBatchSize(envs, hp.BatchSize)*float64(f.MetaSteps)))))
	metaLR := 5e-7 / hp.LR / float64(f.MetaSteps)
	ev, opt := losses.NewEvaluator(), NewAdamW(0)
	params := m.Params()
	outer := make([][]float32, len(params))
	var curve []CurvePoint
	inner := 0
	for step := 0; step < total; step++ {
		for i, p := range params {
			outer[i] = append(outer[i][:0], p.Value...)
		}
		sum := 0.0
		for _, ei := range rng.Perm(len(envs))[:k] {
			lr := LinearDecay(hp.LR, inner, total*f.MetaSteps)
			b := sample(rng, envs[ei], hp.BatchSize)
			l, err := Update(m, b.Input, batchLoss(ev, b, hp.Loss), opt, lr, 1, false)
			if err != nil {
				return curve, diverged(err, step)
			}
			inner++
			sum += l
		}
		MetaUpdate(params, outer, metaLR)
		curve = append(curve, CurvePoint{Step: step, Kind: "fish", Loss: sum / float64(k), LR: LinearDecay(hp.LR, inner, total*f.MetaSteps)})
	}
	return curve, nil
}

// IRM is IRMv1 (Arjovsky et al.) as BeLUGA runs it: each step takes one
// batch of every environment (in random order) and minimises, per
// environment, ERM loss + λ·penalty (divided by λ when λ > 1), with λ = 1
// for the first fifth of the epochs and 1e4 after; the penalty's dummy loss
// is softmax CE for MFT and i.i.d. batches (BeLUGA's choice; Dummy sets
// another) and the batch's own loss for INV and DIR.
type IRM struct {
	Dummy  losses.DummyKind
	Lambda float64 // after the warm-up; BeLUGA 1e4
	// DomainBed switches to DomainBed's form: the split-batch product
	// penalty, λ = 1 until AnnealSteps updates then Lambda (DomainBed: 100
	// after 500), the loss not divided by λ, and Adam restarted when λ
	// changes, as DomainBed does.
	DomainBed   bool
	AnnealSteps int
}

// Name implements Method.
func (IRM) Name() string { return "irm" }

// Train implements Method.
func (r IRM) Train(m models.Classifier, data Data, hp Hyper, seed uint64) ([]CurvePoint, error) {
	envs := Environments(data)
	if len(envs) == 0 {
		return nil, fmt.Errorf("no training data")
	}
	rng := rand.New(rand.NewPCG(seed, 0x1e3))
	var rows, sizes float64
	for _, e := range envs {
		bs := envBatchSize(e, hp.BatchSize)
		rows += math.Ceil(float64(e.size())/float64(bs)) * float64(bs)
		sizes += float64(bs)
	}
	perEpoch := math.Ceil(rows / sizes)
	total := int(math.Ceil(hp.Epochs * perEpoch))
	ev, opt := losses.NewEvaluator(), NewAdamW(0)
	var curve []CurvePoint
	for step := 0; step < total; step++ {
		reg := 1.0
		switch {
		case r.DomainBed && step >= r.AnnealSteps:
			reg = r.Lambda
			if step == r.AnnealSteps {
				opt.Reset()
			}
		case !r.DomainBed && float64(step)/perEpoch >= hp.Epochs/5:
			reg = r.Lambda
		}
		lr := LinearDecay(hp.LR, step, total)
		sum := 0.0
		for _, ei := range rng.Perm(len(envs)) {
			b := sample(rng, envs[ei], hp.BatchSize)
			pass, l, dz, err := forwardLoss(m, ev, b, hp.Loss)
			if err != nil {
				return curve, diverged(err, step)
			}
			kind := r.Dummy
			switch b.Kind {
			case KindLabelDIR:
				kind = losses.DummyCE
			case KindINV:
				kind = losses.DummyINV
			case KindDIR:
				kind = losses.DummyDIR
			}
			pen, dpen, err := ev.IRMPenalty(pass.Logits(), b.Input.Size, 2, kind, b.Targets, b.Dirs, r.DomainBed)
			if err != nil {
				pass.Release()
				return curve, diverged(err, step)
			}
			scale := 1.0
			if reg > 1 && !r.DomainBed {
				scale = 1 / reg
			}
			for i := range dz {
				dz[i] = float32(scale * (float64(dz[i]) + reg*float64(dpen[i])))
			}
			sum += scale * (l + reg*pen)
			if err := pass.Backward(dz); err != nil {
				return curve, err
			}
			pass.Release()
		}
		ClipGradNorm(m.Params(), 1)
		opt.Step(m.Params(), lr, nil)
		ZeroGrad(m.Params())
		curve = append(curve, CurvePoint{Step: step, Kind: "irm", Loss: sum / float64(len(envs)), LR: lr})
	}
	return curve, nil
}
