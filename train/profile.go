package train

import (
	"fmt"
	"strings"

	"github.com/beluga-nlp/beluga/losses"
)

// A Profile is every default a run takes when its spec leaves a setting
// out: the hyper-parameters of each phase, the feature length, the search
// grids and the methods' constants, per task kind, with the exceptions a
// study makes for one task in one configuration. A run spec names its
// profile (RunSpec.Profile, default DefaultProfile) and `beluga train`,
// `beluga run` and the sweep runner all look it up in Profiles, so that a
// run trains the same whichever way it was started.
type Profile struct {
	Name string
	// Classification holds the defaults of classification tasks (sentiment,
	// qqp and every declared task), Span those of READ.
	Classification, Span RunDefaults
	// Exceptions override a kind's defaults for one task in one
	// configuration.
	Exceptions []Exception
	// Methods are the methods' constants (REFERENCE 1.5–1.6); a run's
	// MethodSettings override them one by one.
	Methods Defaults
}

// RunDefaults are the defaults of one run.
type RunDefaults struct {
	MaxLength int
	// Hyper is the suite phase's when nothing is searched or given;
	// IIDHyper the IID configuration's; ProbeHyper LP-FT's probing phase,
	// whose epochs are both LP-FT phases' (Effective).
	Hyper, IIDHyper, ProbeHyper Hyper
	// Search is the grid a search tunes the suite phase over, LPSearch
	// linear probing's.
	Search, LPSearch Grid
}

// An Exception replaces some of a kind's defaults for one task in one
// configuration: the fields of ProbeHyper that are not zero.
type Exception struct {
	Task, Configuration string
	ProbeHyper          Hyper
	// Why says where the study makes the exception.
	Why string
}

// BeLUGA is BeLUGA's profile (REFERENCE 1.5–1.6): set_hyperparams'
// fallbacks, iid_finetuning.py, suite_finetuning.py's Ray-Tune grids.
var BeLUGA = Profile{
	Name: "beluga",
	Classification: RunDefaults{
		// BeLUGA's sentiment padding length.
		MaxLength: 128,
		// set_hyperparams' fallback for vanilla sentiment.
		Hyper: Hyper{Epochs: 1, BatchSize: 8, LR: 2e-5},
		// iid_finetuning.py.
		IIDHyper: Hyper{Epochs: 3, BatchSize: 16, LR: 2e-5},
		// set_hyperparams' hard-coded LP row, with LP-FT's 1.5 epochs.
		ProbeHyper: Hyper{Epochs: LPFTEpochs, BatchSize: 8, LR: 1e-3},
		// 18 trials.
		Search:   Grid{LR: []float64{2e-5, 3e-5, 5e-5}, BatchSize: []int{8, 16}, Epochs: []float64{1, 2, 3}},
		LPSearch: Grid{LR: []float64{1e-4, 5e-4, 1e-3}, BatchSize: []int{8, 16}, Epochs: []float64{1, 2, 3}},
	},
	Span: RunDefaults{
		// SQuAD's features (document stride 128, ReadStride).
		MaxLength:  384,
		Hyper:      Hyper{Epochs: 2, BatchSize: 3, LR: 3e-5},
		IIDHyper:   Hyper{Epochs: 2, BatchSize: 3, LR: 3e-5},
		ProbeHyper: Hyper{Epochs: LPFTEpochs, BatchSize: 3, LR: 1e-3},
		// SQuAD's searches use batch sizes {2, 3}.
		Search:   Grid{LR: []float64{2e-5, 3e-5, 5e-5}, BatchSize: []int{2, 3}, Epochs: []float64{1, 2, 3}},
		LPSearch: Grid{LR: []float64{1e-4, 5e-4, 1e-3}, BatchSize: []int{2, 3}, Epochs: []float64{1, 2, 3}},
	},
	Exceptions: []Exception{
		{Task: "qqp", Configuration: ConfigIIDPlusT, ProbeHyper: Hyper{BatchSize: 16},
			Why: "set_hyperparams: QQP's LP row from the initial model"},
		{Task: TaskRead, Configuration: ConfigIIDPlusT, ProbeHyper: Hyper{LR: 5e-4},
			Why: "set_hyperparams: SQuAD's LP row from the initial model"},
	},
	Methods: Defaults{
		MethodSettings: MethodSettings{
			L2Weight:  0.1,
			Dropout:   0.3,
			IRMLambda: 1e4,
			// DomainBed's hparams_registry: irm_lambda 1e2,
			// irm_penalty_anneal_iters 500.
			IRMDomainBedLambda:      100,
			IRMDomainBedAnnealSteps: 500,
			DROEta:                  1e-2,
			FishMetaSteps:           5,
		},
		IRMDummy:      losses.DummyCE,
		FishOuterStep: true,
	},
}

// For returns the defaults of a run of a task of kind (a built-in task's
// name or a declared task's) in configuration (package train's spelling).
func (p *Profile) For(kind Kind, task, configuration string) RunDefaults {
	d := p.Classification
	if kind == KindSpan {
		d = p.Span
	}
	for _, e := range p.Exceptions {
		if e.Task == task && e.Configuration == configuration {
			d.ProbeHyper = e.ProbeHyper.withDefaults(d.ProbeHyper)
		}
	}
	return d
}

// DefaultProfile is the profile a run spec that names none takes.
const DefaultProfile = "beluga"

// Profiles are the profiles a run spec may name.
var Profiles = []*Profile{&BeLUGA}

// LookupProfile returns the profile called name ("" is DefaultProfile).
func LookupProfile(name string) (*Profile, error) {
	if name == "" {
		name = DefaultProfile
	}
	var names []string
	for _, p := range Profiles {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("unknown profile %q (known: %s)", name, strings.Join(names, ", "))
}

// Defaults are the spec's profile's defaults for its task, kind and
// configuration.
func (s *RunSpec) Defaults() (RunDefaults, error) {
	p, err := LookupProfile(s.Profile)
	if err != nil {
		return RunDefaults{}, err
	}
	config, err := ParseConfiguration(s.Configuration)
	if err != nil {
		return RunDefaults{}, err
	}
	return p.For(s.ResolvedKind(), s.Task, config), nil
}

// Grid is the search grid of method: linear probing's for lp, the suite
// phase's otherwise.
func (d RunDefaults) Grid(method string) Grid {
	if method == "lp" {
		return d.LPSearch
	}
	return d.Search
}

// withDefaults returns h with its zero epochs, batch size and learning rate
// taken from def; h's loss options stay.
func (h Hyper) withDefaults(def Hyper) Hyper {
	if h.Epochs == 0 {
		h.Epochs = def.Epochs
	}
	if h.BatchSize == 0 {
		h.BatchSize = def.BatchSize
	}
	if h.LR == 0 {
		h.LR = def.LR
	}
	return h
}

// FillDefaults names the spec's profile and task kind (DefaultProfile,
// ResolvedKind) and sets every setting it leaves at zero — the feature
// length and each phase's epochs, batch size and learning rate — to the
// profile's for its task, kind and configuration. Zero is never a valid
// value of any of them.
func (s *RunSpec) FillDefaults() error {
	if _, err := ParseKind(string(s.Kind)); err != nil {
		return err
	}
	d, err := s.Defaults()
	if err != nil {
		return err
	}
	if s.Profile == "" {
		s.Profile = DefaultProfile
	}
	s.Kind = s.ResolvedKind()
	if s.MaxLength == 0 {
		s.MaxLength = d.MaxLength
	}
	s.Hyper = s.Hyper.withDefaults(d.Hyper)
	s.IIDHyper = s.IIDHyper.withDefaults(d.IIDHyper)
	s.ProbeHyper = s.ProbeHyper.withDefaults(d.ProbeHyper)
	return nil
}

// profile is the spec's profile (DefaultProfile's when it names an unknown
// one, which Validate refuses).
func (s *RunSpec) profile() *Profile {
	p, err := LookupProfile(s.Profile)
	if err != nil {
		p, _ = LookupProfile(DefaultProfile)
	}
	return p
}
