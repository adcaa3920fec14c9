package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/optim"
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
		for _, k := range suiteKinds() {
			if kinds[k].rows != nil {
				for _, r := range *kinds[k].rows(s) {
					e := get(r.Env, k)
					e.Rows = append(e.Rows, r)
				}
				continue
			}
			for _, p := range *kinds[k].pairs(s) {
				e := get(p.Env, k)
				e.Pert = append(e.Pert, p)
			}
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
	return kinds[e.Kind].cases(bs)
}

// sample draws a random batch of e from d's data.
func sample(rng *rand.Rand, d *Data, e *Env, bs int) Batch {
	n := min(envBatchSize(e, bs), e.size())
	idx := rng.Perm(e.size())[:n]
	return d.batch(rng, e.Kind, e.Rows, e.Pert, idx)
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

// environments returns data's environments, or an error when there are none.
func environments(d Data) ([]*Env, error) {
	envs := Environments(d)
	if len(envs) == 0 {
		return nil, fmt.Errorf("no training data")
	}
	return envs, nil
}

// GroupDRO is online Group-DRO (Sagawa et al.) as BeLUGA runs it: each step
// takes one batch of one environment drawn uniformly, raises its weight
// q_g ← q_g·exp(η·loss_g), renormalises, and minimises q_g·loss_g. With
// AllGroups (DomainBed's form) each step takes a batch of every group and
// minimises Σ q_g·loss_g.
type GroupDRO struct {
	Eta       float64
	AllGroups bool
	// Q holds the group weights, by environment name, as training goes.
	Q map[string]float64

	envs []*Env
	data Data
	q    []float64
	rng  *rand.Rand
}

// Plan implements Updater: BeLUGA's steps per epoch are
// ceil(N_rows / mean batch size over the environments).
func (g *GroupDRO) Plan(data Data, hp Hyper, seed uint64) (int, int, error) {
	envs, err := environments(data)
	if err != nil {
		return 0, 0, err
	}
	g.envs, g.data, g.rng = envs, data, rand.New(rand.NewPCG(seed, 0xd120))
	g.q = make([]float64, len(envs))
	for i := range g.q {
		g.q[i] = 1 / float64(len(envs))
	}
	g.publish()
	n := int(math.Ceil(hp.Epochs * math.Ceil(float64(totalSize(envs))/meanBatchSize(envs, hp.BatchSize))))
	return n, n, nil
}

func (g *GroupDRO) publish() {
	g.Q = map[string]float64{}
	for i, e := range g.envs {
		g.Q[e.Name] = g.q[i]
	}
}

// Update implements Updater.
func (g *GroupDRO) Update(st *UpdateState) (Step, error) {
	groups := []int{g.rng.IntN(len(g.envs))}
	if g.AllGroups {
		groups = g.rng.Perm(len(g.envs))
	}
	type done struct {
		pass models.Pass
		dz   []float32
		loss float64
		g    int
	}
	var passes []done
	release := func() {
		for _, p := range passes {
			p.pass.Release()
		}
	}
	for _, gi := range groups {
		pass, l, dz, err := forwardLoss(st.Model, st.Losses, sample(g.rng, &g.data, g.envs[gi], st.Hyper.BatchSize), st.Hyper.Loss)
		if err != nil {
			release()
			return Step{Loss: l, Kind: g.envs[gi].Name}, err
		}
		g.q[gi] *= math.Exp(g.Eta * l)
		passes = append(passes, done{pass, dz, l, gi})
	}
	defer release()
	sum := 0.0
	for _, x := range g.q {
		sum += x
	}
	for i := range g.q {
		g.q[i] /= sum
	}
	g.publish()
	weighted := 0.0
	for _, p := range passes {
		for i := range p.dz {
			p.dz[i] *= float32(g.q[p.g])
		}
		weighted += g.q[p.g] * p.loss
		if err := p.pass.Backward(p.dz); err != nil {
			return Step{}, err
		}
	}
	return Step{Loss: weighted, Kind: g.envs[groups[0]].Name}, nil
}

// Fish (Shi et al.) as BeLUGA runs it: each outer step takes MetaSteps
// distinct environments, one batch each, with ordinary AdamW updates
// (clipped, on the schedule), then moves the weights a fraction MetaLR of
// the way from where the step began: θ ← θ_outer + MetaLR·(θ_inner −
// θ_outer), with MetaLR = 5e-7 / lr / MetaSteps; the schedule runs
// MetaSteps times as long. The optimiser's and schedule's states are saved
// after the meta update and restored at the next outer step, so the
// Trainer's own optimiser step in between changes the weights only
// (OuterStep; see Defaults.FishOuterStep).
type Fish struct {
	MetaSteps int
	OuterStep bool

	envs     []*Env
	data     Data
	rng      *rand.Rand
	outer    [][]float32
	saved    *optim.AdamWState
	savedPos int
}

// MetaUpdate sets every parameter to outer + metaLR·(current − outer), on
// be, the model's backend.
func MetaUpdate(be backend.Backend, params []*models.Param, outer [][]float32, metaLR float64) {
	for i, p := range params {
		be.Lerp(p.Value, outer[i], float32(metaLR))
	}
}

// Plan implements Updater: BeLUGA's outer steps per epoch are
// ceil(N_rows / (mean batch size · MetaSteps)).
func (f *Fish) Plan(data Data, hp Hyper, seed uint64) (int, int, error) {
	envs, err := environments(data)
	if err != nil {
		return 0, 0, err
	}
	f.envs, f.data, f.rng, f.saved, f.outer = envs, data, rand.New(rand.NewPCG(seed, 0xf154)), nil, nil
	n := int(math.Ceil(hp.Epochs * math.Ceil(float64(totalSize(envs))/(meanBatchSize(envs, hp.BatchSize)*float64(f.MetaSteps)))))
	return n, n * f.MetaSteps, nil
}

// Update implements Updater.
func (f *Fish) Update(st *UpdateState) (Step, error) {
	params := st.Model.Params()
	if f.saved != nil {
		st.Opt.SetState(*f.saved)
		st.Schedule.Pos = f.savedPos
	}
	be := st.Model.Backend()
	if f.outer == nil {
		f.outer = make([][]float32, len(params))
		for i, p := range params {
			f.outer[i] = be.Alloc(len(p.Value))
		}
	}
	for i, p := range params {
		be.Copy(f.outer[i], p.Value)
	}
	k := min(f.MetaSteps, len(f.envs))
	sum := 0.0
	for _, ei := range f.rng.Perm(len(f.envs))[:k] {
		b := sample(f.rng, &f.data, f.envs[ei], st.Hyper.BatchSize)
		l, err := Accumulate(st.Model, b.Input, batchLoss(st.Losses, b, st.Hyper.Loss), 1)
		if err != nil {
			return Step{Loss: l, Kind: f.envs[ei].Name}, err
		}
		OptimizerStep(params, st.Opt, st.Schedule.Next(), 1, st.Frozen)
		sum += l
	}
	MetaUpdate(be, params, f.outer, 5e-7/st.Hyper.LR/float64(f.MetaSteps))
	s := st.Opt.State()
	f.saved, f.savedPos = &s, st.Schedule.Pos
	return Step{Loss: sum / float64(k), Kind: "fish", NoOptimizerStep: !f.OuterStep}, nil
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

	envs     []*Env
	data     Data
	rng      *rand.Rand
	perEpoch float64
}

// Plan implements Updater: BeLUGA's steps per epoch are
// ceil(Σ_env ceil(N_e/bs_e)·bs_e / Σ_env bs_e).
func (r *IRM) Plan(data Data, hp Hyper, seed uint64) (int, int, error) {
	envs, err := environments(data)
	if err != nil {
		return 0, 0, err
	}
	r.envs, r.data, r.rng = envs, data, rand.New(rand.NewPCG(seed, 0x1e3))
	var rows, sizes float64
	for _, e := range envs {
		bs := envBatchSize(e, hp.BatchSize)
		rows += math.Ceil(float64(e.size())/float64(bs)) * float64(bs)
		sizes += float64(bs)
	}
	r.perEpoch = math.Ceil(rows / sizes)
	n := int(math.Ceil(hp.Epochs * r.perEpoch))
	return n, n, nil
}

// Update implements Updater.
func (r *IRM) Update(st *UpdateState) (Step, error) {
	reg := 1.0
	switch {
	case r.DomainBed && st.Index >= r.AnnealSteps:
		reg = r.Lambda
		if st.Index == r.AnnealSteps {
			st.Opt.Reset()
		}
	case !r.DomainBed && float64(st.Index)/r.perEpoch >= st.Hyper.Epochs/5:
		// HuggingFace's state.epoch is the fractional epoch of the step.
		reg = r.Lambda
	}
	scale := 1.0
	if reg > 1 && !r.DomainBed {
		scale = 1 / reg
	}
	sum := 0.0
	for _, ei := range r.rng.Perm(len(r.envs)) {
		b := sample(r.rng, &r.data, r.envs[ei], st.Hyper.BatchSize)
		pass, l, dz, err := forwardLoss(st.Model, st.Losses, b, st.Hyper.Loss)
		if err != nil {
			return Step{Loss: l, Kind: r.envs[ei].Name}, err
		}
		pen, dpen, err := r.penalty(st.Losses, pass.Logits(), b)
		if err != nil {
			pass.Release()
			return Step{Kind: r.envs[ei].Name}, err
		}
		for i := range dz {
			dz[i] = float32(scale * (float64(dz[i]) + reg*float64(dpen[i])))
		}
		sum += scale * (l + reg*pen)
		err = pass.Backward(dz)
		pass.Release()
		if err != nil {
			return Step{}, err
		}
	}
	return Step{Loss: sum / float64(len(r.envs)), Kind: "irm"}, nil
}

// penalty is the IRM penalty of batch b's logits z and its gradient.
func (r *IRM) penalty(ev *losses.Evaluator, z []float32, b Batch) (float64, []float32, error) {
	return kinds[b.Kind].penalty(ev, r, b, z)
}
