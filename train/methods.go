package train

import (
	"fmt"
	"sort"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
)

// Method trains the phase of a configuration that uses the suite (in
// multi-step configurations the other phases are vanilla), DomainBed-style:
// one small type per method family, a name → method table, and BeLUGA's
// defaults in one place (Defaults).
type Method interface {
	Name() string
	// Train runs the phase on m, starting a fresh optimiser.
	Train(m models.Classifier, data Data, hp Hyper, seed uint64) ([]CurvePoint, error)
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
}

func (v vanillaFamily) Name() string { return v.name }

func (v vanillaFamily) Train(m models.Classifier, data Data, hp Hyper, seed uint64) ([]CurvePoint, error) {
	if v.dropout > 0 {
		ds, ok := m.(dropoutSetter)
		if !ok {
			return nil, fmt.Errorf("method %s: the model's dropout cannot be set", v.name)
		}
		ds.SetDropout(v.dropout, v.dropout)
	}
	m.SetFrozenEncoder(v.frozen)
	defer m.SetFrozenEncoder(false)
	return Phase(m, data, hp, NewAdamW(v.weightDecay), v.frozen, seed)
}

// lpft is LP-FT: linear probing with LP's hyper-parameters, then full
// fine-tuning with vanilla's, each for half the epochs (BeLUGA: 1.5 + 1.5),
// the second phase with a fresh optimiser and schedule.
type lpft struct {
	lp Hyper
	// newOptimiser starts each phase's optimiser (NewAdamW unless a test
	// watches it).
	newOptimiser func(weightDecay float64) *AdamW
}

func (lpft) Name() string { return "lp-ft" }

func (l lpft) Train(m models.Classifier, data Data, hp Hyper, seed uint64) ([]CurvePoint, error) {
	lp := l.lp
	lp.Epochs = hp.Epochs / 2
	newOpt := l.newOptimiser
	if newOpt == nil {
		newOpt = NewAdamW
	}
	m.SetFrozenEncoder(true)
	curve, err := Phase(m, data, lp, newOpt(0), true, seed)
	m.SetFrozenEncoder(false)
	if err != nil {
		return curve, err
	}
	ft := hp
	ft.Epochs = hp.Epochs / 2
	more, err := Phase(m, data, ft, newOpt(0), false, seed+1)
	for i := range more {
		more[i].Step += len(curve)
	}
	return append(curve, more...), err
}

// Methods names the methods beluga implements.
var Methods = map[string]func(Defaults) Method{
	"vanilla": func(Defaults) Method { return vanillaFamily{name: "vanilla"} },
	"l2":      func(d Defaults) Method { return vanillaFamily{name: "l2", weightDecay: d.WeightDecay} },
	"dropout": func(d Defaults) Method { return vanillaFamily{name: "dropout", dropout: d.Dropout} },
	"lp":      func(Defaults) Method { return vanillaFamily{name: "lp", frozen: true} },
	"lp-ft":   func(d Defaults) Method { return lpft{lp: d.LP} },
	"irm":     func(d Defaults) Method { return IRM{Dummy: losses.DummyCE, Lambda: d.IRMLambda} },
	"dro":     func(d Defaults) Method { return &GroupDRO{Eta: d.DROEta} },
	// DomainBed's forms of IRM and Group-DRO (REFERENCE 1.6's alternatives).
	"irm-domainbed": func(Defaults) Method {
		return IRM{Dummy: losses.DummyCE, Lambda: 100, DomainBed: true, AnnealSteps: 500}
	},
	"dro-domainbed": func(d Defaults) Method { return &GroupDRO{Eta: d.DROEta, AllGroups: true} },
	"fish":          func(d Defaults) Method { return Fish{MetaSteps: d.FishMetaSteps} },
}

// MethodNames lists Methods in order.
func MethodNames() []string {
	var names []string
	for n := range Methods {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewMethod returns the method called name with defaults d.
func NewMethod(name string, d Defaults) (Method, error) {
	mk, ok := Methods[name]
	if !ok {
		return nil, fmt.Errorf("unknown method %q (known: %v)", name, MethodNames())
	}
	return mk(d), nil
}

// Defaults are the methods' constants (BeLUGA's).
type Defaults struct {
	WeightDecay   float64 // L2: decoupled AdamW decay
	Dropout       float64 // dropout: hidden and attention rate
	LP            Hyper   // LP-FT's probing phase
	IRMLambda     float64 // IRM's penalty weight after the first fifth of the epochs
	DROEta        float64 // Group-DRO's step size
	FishMetaSteps int     // Fish's inner steps per outer step
}

// BeLUGADefaults are BeLUGA's constants for sentiment (REFERENCE 1.5–1.6).
var BeLUGADefaults = Defaults{
	WeightDecay:   0.1,
	Dropout:       0.3,
	LP:            Hyper{Epochs: 3, BatchSize: 8, LR: 1e-3},
	IRMLambda:     1e4,
	DROEta:        1e-2,
	FishMetaSteps: 5,
}
