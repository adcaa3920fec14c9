package train

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

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

// LPFTEpochs is BeLUGA's length of each LP-FT phase, its profile's
// probing epochs: BeLUGA forces num_train_epochs = 3/2 for both
// (REFERENCE 1.5–1.6).
const LPFTEpochs = 1.5

// lpft is LP-FT: linear probing with the probing hyper-parameters, then full
// fine-tuning with the run's own (BeLUGA: vanilla's), the second phase with
// a fresh optimiser and schedule. Both phases last the profile's probing
// epochs and probing takes the run's loss options: the run's effective
// spec says so (RunSpec.Effective), which is what a run trains.
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
		New: func(d Defaults) Method { return vanillaFamily{name: "l2", weightDecay: d.L2Weight} }},
	{Name: "dropout", Display: "Dropout", BeLUGA: true, Settings: []string{"dropout"},
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
	{Name: "irm-domainbed", Display: "IRM (DomainBed)", Settings: []string{"irm_domainbed_lambda", "irm_domainbed_anneal_steps"},
		New: func(d Defaults) Method {
			return onePhase{"irm-domainbed", func() Updater {
				// DomainBed's penalty is always against the softmax CE.
				return &IRM{Dummy: losses.DummyCE, Lambda: d.IRMDomainBedLambda, DomainBed: true, AnnealSteps: d.IRMDomainBedAnnealSteps}
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

// MethodSettings are the methods' constants, each declared once here: its
// name in a spec's method_settings and a sweep's grid, and what it does. A
// profile sets every one (Profile.Methods: BeLUGA's values, DomainBed's
// for its forms); a run's method_settings override those they set, a zero
// field keeping the profile's, so that a sweep can vary them. The methods
// that read a setting list it in their registry entry
// (MethodInfo.Settings, SettingMethods); a run of another method never
// records it (Effective).
type MethodSettings struct {
	// L2Weight is L2's decoupled AdamW weight decay.
	L2Weight float64 `json:"l2_weight,omitempty" yaml:"l2_weight,omitempty"`
	// Dropout is the dropout method's hidden and attention rate.
	Dropout float64 `json:"dropout,omitempty" yaml:"dropout,omitempty"`
	// IRMLambda is IRM's penalty weight after the first fifth of the
	// epochs.
	IRMLambda float64 `json:"irm_lambda,omitempty" yaml:"irm_lambda,omitempty"`
	// IRMDomainBedLambda and IRMDomainBedAnnealSteps are DomainBed's IRM:
	// λ = 1 for its first anneal steps, then this penalty weight.
	IRMDomainBedLambda      float64 `json:"irm_domainbed_lambda,omitempty" yaml:"irm_domainbed_lambda,omitempty"`
	IRMDomainBedAnnealSteps int     `json:"irm_domainbed_anneal_steps,omitempty" yaml:"irm_domainbed_anneal_steps,omitempty"`
	// DROEta is Group-DRO's step size η (both forms).
	DROEta float64 `json:"dro_eta,omitempty" yaml:"dro_eta,omitempty"`
	// FishMetaSteps is Fish's inner steps per meta update.
	FishMetaSteps int `json:"fish_meta_steps,omitempty" yaml:"fish_meta_steps,omitempty"`
}

// Defaults are what a run's method is built with: the profile's settings
// with the run's over them, and the behaviours of BeLUGA's that a
// correction changes (Corrections), which no setting reaches.
type Defaults struct {
	MethodSettings
	// IRMDummy is the dummy loss of IRM's penalty on MFT and i.i.d.
	// batches: BeLUGA's softmax CE, although their ERM term is the sigmoid
	// BCE.
	IRMDummy losses.DummyKind
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

// settingNames are the settings' JSON names, in MethodSettings' field
// order: what overriding, keeping a method's settings and checking them
// walk.
var settingNames = func() []string {
	t := reflect.TypeFor[MethodSettings]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}()

// over returns base with the settings of m that are set.
func (m MethodSettings) over(base MethodSettings) MethodSettings {
	src, dst := reflect.ValueOf(m), reflect.ValueOf(&base).Elem()
	for i := range settingNames {
		if !src.Field(i).IsZero() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return base
}

// readBy keeps the settings named (by their JSON names), the others at
// zero (their profile's value, which a method that does not read them
// never uses).
func (m MethodSettings) readBy(names []string) MethodSettings {
	var out MethodSettings
	src, dst := reflect.ValueOf(m), reflect.ValueOf(&out).Elem()
	for i, name := range settingNames {
		if slices.Contains(names, name) {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return out
}
