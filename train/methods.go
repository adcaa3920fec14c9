package train

import (
	"fmt"
	"sort"

	"github.com/beluga-nlp/beluga/losses"
)

// Method is a training method, DomainBed-style: it says how a configuration's
// suite phase is trained as phases of update steps (Updater), and one loop
// (Train) runs them. Adding a method is one type and one line in Methods.
type Method interface {
	Name() string
	// Phases lays out training with the run's hyper-parameters hp and the
	// linear-probing ones probe (LP-FT's first phase).
	Phases(hp, probe Hyper) []Phase
}

// dropoutSetter is implemented by models whose dropout rates can change.
type dropoutSetter interface {
	SetDropout(hidden, attention float64)
}

// vanillaFamily covers the methods that differ from plain fine-tuning only
// in a setting: vanilla, L2 (decoupled weight decay), dropout, LP (frozen
// encoder).
type vanillaFamily struct {
	name        string
	weightDecay float64
	dropout     float64 // 0: the model's own rates
	frozen      bool
	// cached trains a frozen encoder's head on cached features
	// (CorrectLPFrozenEval).
	cached bool
}

func (v vanillaFamily) Name() string { return v.name }

func (v vanillaFamily) Phases(hp, _ Hyper) []Phase {
	return []Phase{{Hyper: hp, WeightDecay: v.weightDecay, Dropout: v.dropout, Frozen: v.frozen, Update: probeUpdater(v.frozen && v.cached)}}
}

// LPFTEpochs is the length of each LP-FT phase: BeLUGA forces
// num_train_epochs = 3/2 for both (REFERENCE 1.5–1.6).
const LPFTEpochs = 1.5

// lpft is LP-FT: linear probing with the probing hyper-parameters, then full
// fine-tuning with the run's own (BeLUGA: vanilla's), the second phase with
// a fresh optimiser and schedule. Both phases last LPFTEpochs and probing
// takes the run's loss options: the run's effective spec says so
// (RunSpec.Effective), which is what a run trains.
type lpft struct {
	cached bool // the probing phase on cached features (CorrectLPFrozenEval)
}

func (lpft) Name() string { return "lp-ft" }

func (l lpft) Phases(hp, probe Hyper) []Phase {
	return []Phase{{Hyper: probe, Frozen: true, Update: probeUpdater(l.cached)}, {Hyper: hp, Update: &erm{}}}
}

// probeUpdater is a linear-probing phase's update: erm's, or erm's batches
// on cached features.
func probeUpdater(cached bool) Updater {
	if cached {
		return &cachedProbe{}
	}
	return &erm{}
}

// onePhase is a method trained as one phase of its own update step.
type onePhase struct {
	name   string
	update func() Updater
}

func (o onePhase) Name() string { return o.name }

func (o onePhase) Phases(hp, _ Hyper) []Phase { return []Phase{{Hyper: hp, Update: o.update()}} }

// MethodInfo is a method's one entry in the registry: its name as specs
// and flags spell it, its name in tables and figures, the method settings
// it reads, and how to build it from the profile's constants.
type MethodInfo struct {
	Name, Display string
	// BeLUGA says it is one of BeLUGA's eight methods.
	BeLUGA bool
	// Settings are the MethodSettings fields it reads, by JSON name;
	// Corrections the corrections of BeLUGA's behaviour that change it
	// (Corrections). A run of the method reads no other (Effective).
	Settings, Corrections []string
	New                   func(Defaults) Method
}

// Methods are the methods beluga implements in Table 3's order: BeLUGA's
// eight, then the DomainBed forms of IRM and Group-DRO (REFERENCE 1.6's
// alternatives).
var Methods = []MethodInfo{
	{Name: "vanilla", Display: "Vanilla", BeLUGA: true,
		New: func(Defaults) Method { return vanillaFamily{name: "vanilla"} }},
	{Name: "l2", Display: "L2", BeLUGA: true, Settings: []string{"l2_weight"},
		New: func(d Defaults) Method { return vanillaFamily{name: "l2", weightDecay: d.WeightDecay} }},
	{Name: "dropout", Display: "Dropout", BeLUGA: true,
		New: func(d Defaults) Method { return vanillaFamily{name: "dropout", dropout: d.Dropout} }},
	{Name: "lp", Display: "LP", BeLUGA: true, Corrections: []string{CorrectLPFrozenEval},
		New: func(d Defaults) Method { return vanillaFamily{name: "lp", frozen: true, cached: d.LPFrozenEval} }},
	{Name: "lp-ft", Display: "LP-FT", BeLUGA: true, Corrections: []string{CorrectLPFrozenEval},
		New: func(d Defaults) Method { return lpft{cached: d.LPFrozenEval} }},
	{Name: "irm", Display: "IRM", BeLUGA: true, Settings: []string{"irm_lambda"}, Corrections: []string{CorrectIRMDummy},
		New: func(d Defaults) Method {
			return onePhase{"irm", func() Updater { return &IRM{Dummy: d.IRMDummy, Lambda: d.IRMLambda} }}
		}},
	{Name: "dro", Display: "G-DRO", BeLUGA: true, Settings: []string{"dro_eta"},
		New: func(d Defaults) Method {
			return onePhase{"dro", func() Updater { return &GroupDRO{Eta: d.DROEta} }}
		}},
	{Name: "fish", Display: "Fish", BeLUGA: true, Settings: []string{"fish_meta_steps"}, Corrections: []string{CorrectFishOuterStep},
		New: func(d Defaults) Method {
			return onePhase{"fish", func() Updater { return &Fish{MetaSteps: d.FishMetaSteps, OuterStep: d.FishOuterStep} }}
		}},
	{Name: "irm-domainbed", Display: "IRM (DomainBed)",
		New: func(Defaults) Method {
			return onePhase{"irm-domainbed", func() Updater {
				return &IRM{Dummy: losses.DummyCE, Lambda: 100, DomainBed: true, AnnealSteps: 500}
			}}
		}},
	{Name: "dro-domainbed", Display: "G-DRO (DomainBed)", Settings: []string{"dro_eta"},
		New: func(d Defaults) Method {
			return onePhase{"dro-domainbed", func() Updater { return &GroupDRO{Eta: d.DROEta, AllGroups: true} }}
		}},
}

// LookupMethod returns the registry's entry of a method name.
func LookupMethod(name string) (MethodInfo, bool) {
	for _, m := range Methods {
		if m.Name == name {
			return m, true
		}
	}
	return MethodInfo{}, false
}

// MethodNames lists the methods' names, sorted.
func MethodNames() []string {
	var names []string
	for _, m := range Methods {
		names = append(names, m.Name)
	}
	sort.Strings(names)
	return names
}

// NewMethod returns the method called name with defaults d.
func NewMethod(name string, d Defaults) (Method, error) {
	m, ok := LookupMethod(name)
	if !ok {
		return nil, fmt.Errorf("unknown method %q (known: %v)", name, MethodNames())
	}
	return m.New(d), nil
}

// Defaults are the methods' constants.
type Defaults struct {
	WeightDecay float64 // L2: decoupled AdamW decay
	Dropout     float64 // dropout: hidden and attention rate
	IRMLambda   float64 // IRM's penalty weight after the first fifth of the epochs
	// IRMDummy is the dummy loss of IRM's penalty on MFT and i.i.d.
	// batches: BeLUGA's softmax CE, although their ERM term is the sigmoid
	// BCE.
	IRMDummy      losses.DummyKind
	DROEta        float64 // Group-DRO's step size
	FishMetaSteps int     // Fish's inner steps per outer step
	// FishOuterStep keeps the Trainer's own optimiser step after each Fish
	// meta update. Under torch < 2.0 — BeLUGA's environment pins
	// cudatoolkit 11.3, whose PyTorch builds end at 1.12 — zero_grad()
	// leaves zero gradients, not None, so that AdamW step still moves every
	// weight by its momentum (then BeLUGA restores the optimiser's state, not
	// the weights). false is torch ≥ 2.0's behaviour: no outer step.
	FishOuterStep bool
	// LPFrozenEval runs linear probing with the frozen encoder's dropout
	// off, on features computed once (CorrectLPFrozenEval); BeLUGA's
	// encoder keeps its dropout.
	LPFrozenEval bool
}

// MethodSettings override BeLUGA's method constants (BeLUGA.Methods) for
// one run, so that a sweep can vary them; a zero field keeps BeLUGA's
// value. Each field names the methods that read it (SettingMethods).
type MethodSettings struct {
	L2Weight      float64 `json:"l2_weight,omitempty" yaml:"l2_weight,omitempty"`             // Defaults.WeightDecay
	IRMLambda     float64 `json:"irm_lambda,omitempty" yaml:"irm_lambda,omitempty"`           // Defaults.IRMLambda
	DROEta        float64 `json:"dro_eta,omitempty" yaml:"dro_eta,omitempty"`                 // Defaults.DROEta
	FishMetaSteps int     `json:"fish_meta_steps,omitempty" yaml:"fish_meta_steps,omitempty"` // Defaults.FishMetaSteps
}

// SettingMethods names, per MethodSettings field (by its JSON name), the
// methods that read it (MethodInfo.Settings): a sweep over a setting varies
// only their runs.
var SettingMethods = func() map[string][]string {
	out := map[string][]string{}
	for _, m := range Methods {
		for _, s := range m.Settings {
			out[s] = append(out[s], m.Name)
		}
	}
	return out
}()

// apply returns d with the settings that are set.
func (m MethodSettings) apply(d Defaults) Defaults {
	if m.L2Weight > 0 {
		d.WeightDecay = m.L2Weight
	}
	if m.IRMLambda > 0 {
		d.IRMLambda = m.IRMLambda
	}
	if m.DROEta > 0 {
		d.DROEta = m.DROEta
	}
	if m.FishMetaSteps > 0 {
		d.FishMetaSteps = m.FishMetaSteps
	}
	return d
}
