package train

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/beluga-nlp/beluga/losses"
)

// Effective returns what the run computes: the spec with every setting
// its configuration, method, task kind and loss do not read left at its
// zero value, and every setting they fix written as they fix it. Two
// specs whose effective forms are equal train the same model from the
// same inputs and score it the same way, so a run's identity is its
// effective form (package experiments hashes it with the input digests),
// and Run and the search's trials train the effective form, so that
// what is recorded is what was computed.
//
// It reads the spec as given: defaults are resolved beforehand
// (FillDefaults), and a value Validate would refuse is kept, for Validate
// to name. What each configuration, method and kind reads:
//
//   - the IID baseline (configuration iid) trains vanilla fine-tuning on
//     the i.i.d. data with iid_hyper and the softmax cross-entropy
//     (BertForSequenceClassification's, whatever the task's suite loss):
//     no suite-phase setting (hyper, probe_hyper, method settings and
//     corrections, the suite cap) is read;
//   - every other configuration trains the suite phase with hyper, never
//     iid_hyper; one that trains on no i.i.d. data (T, and IID→T, whose
//     i.i.d. training is its IID baseline's) reads no training-set size,
//     cap or unsplit training file;
//   - only LP-FT reads probe_hyper, and only its batch size and learning
//     rate: both its phases last the profile's probing epochs (BeLUGA's
//     LPFTEpochs), and probing takes the fine-tuning phase's loss options;
//   - a method reads only the method settings and corrections its
//     registry entry lists (MethodInfo.Settings, MethodInfo.Corrections);
//   - a classification task declared with mft_loss ce trains its MFT and
//     mixed i.i.d. rows with the softmax cross-entropy whatever loss.mft
//     says; a span task reads no MFT form at all (its losses are the
//     span losses).
func (s RunSpec) Effective() RunSpec {
	e := s
	e.Corrections = slices.Clone(s.Corrections)
	config, err := LookupConfiguration(s.Configuration)
	if err != nil {
		return e // Validate names it
	}
	e.Configuration = config.Name
	if config.Prompt {
		return e.effectivePrompted(config)
	}
	e.Prompt = nil
	span := e.ResolvedKind() == KindSpan
	if !config.IID && !e.splitsTrainFile() {
		e.IIDTrain, e.IIDTrainFile = "", nil
		e.IIDLimit, e.TrainSize, e.TrainFraction = 0, 0, 0
	}
	if config.Name == ConfigIID {
		e.Method = "vanilla"
		e.Hyper, e.ProbeHyper = Hyper{}, Hyper{}
		e.SuiteLimit, e.SuiteLimitAfterHoldOut = 0, false
		e.IIDHyper.Loss = LossOptions{MFT: losses.SoftmaxCE}
		if span {
			e.IIDHyper.Loss = LossOptions{}
		}
	} else {
		e.IIDHyper = Hyper{}
		if !span && e.mftLoss() == "ce" {
			e.Hyper.Loss.MFT = losses.SoftmaxCE
		}
		if span {
			e.Hyper.Loss.MFT = 0
		}
	}
	if e.Method == "lp-ft" {
		// Whatever the spec says: BeLUGA forces both phases' epochs.
		epochs := e.profile().For(e.ResolvedKind(), e.Task, e.Configuration).ProbeHyper.Epochs
		e.Hyper.Epochs, e.ProbeHyper.Epochs = epochs, epochs
		e.ProbeHyper.Loss = e.Hyper.Loss
	} else {
		e.ProbeHyper = Hyper{}
	}
	info, _ := LookupMethod(e.Method)
	e.Settings = e.Settings.readBy(info.Settings)
	e.Corrections = slices.DeleteFunc(e.Corrections, func(c string) bool {
		_, known := Corrections[c]
		return known && !slices.Contains(info.Corrections, c)
	})
	if len(e.Corrections) == 0 {
		e.Corrections = nil
	}
	return e
}

// mftLoss is the suite MFT loss of the run's classification task ("bce"
// or "ce"), "" for a task that does not resolve (Validate names it).
func (s *RunSpec) mftLoss() string {
	if _, ok := BuiltinTasks[s.Task]; !ok && s.TaskDef == nil {
		return ""
	}
	t, err := s.task()
	if err != nil {
		return ""
	}
	return t.MFTLoss
}

// SettingError is a setting's value that a run refuses, by the setting's
// field path (hyper.lr, max_length): whoever set it — a grid key in either
// spelling, a budget, a profile — is told by the one rule.
type SettingError struct {
	Path, Msg string
}

func (e *SettingError) Error() string { return e.Msg }

// CheckSettings checks the value of every setting the run reads (its
// effective spec): the limits, the training-set size, each phase's
// hyper-parameters, the feature length, the step cap and the method
// settings. It returns every value it refuses (SettingError), none when
// all are valid; Validate refuses a spec with any.
func (s *RunSpec) CheckSettings() []error {
	var out []error
	bad := func(path, format string, args ...any) {
		out = append(out, &SettingError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	for _, f := range []struct {
		path string
		v    int
	}{{"iid_limit", s.IIDLimit}, {"suite_limit", s.SuiteLimit}, {"eval_limit", s.EvalLimit}} {
		if f.v < 0 {
			bad(f.path, "%s %d must not be negative (0 means no limit)", f.path, f.v)
		}
	}
	if s.TrainSize < 0 {
		bad("train_size", "train_size %d must not be negative (0 means all)", s.TrainSize)
	}
	if s.TrainFraction < 0 || s.TrainFraction > 1 || math.IsNaN(s.TrainFraction) {
		bad("train_fraction", "train_fraction %v must be in (0, 1] (0 means all)", s.TrainFraction)
	}
	if s.TrainSize > 0 && s.TrainFraction > 0 {
		bad("train_fraction", "train_size %d and train_fraction %v: set at most one", s.TrainSize, s.TrainFraction)
	}
	// The hyper-parameters the run reads, each checked by the one rule
	// whatever key set it.
	e := s.Effective()
	switch {
	case e.config().Prompt:
		// A prompted run trains nothing: it reads no hyper-parameters.
	case e.Configuration == ConfigIID:
		out = append(out, e.IIDHyper.problems("iid_hyper")...)
	default:
		out = append(out, e.Hyper.problems("hyper")...)
	}
	if e.Method == "lp-ft" {
		out = append(out, e.ProbeHyper.problems("probe_hyper")...)
	}
	if s.MaxLength <= 0 {
		bad("max_length", "max_length %d must be positive", s.MaxLength)
	}
	if s.MaxSteps < 0 {
		bad("max_steps", "max_steps %d must not be negative", s.MaxSteps)
	}
	m := reflect.ValueOf(e.Settings)
	for i, name := range settingNames {
		if v := m.Field(i); (v.CanFloat() && !(v.Float() >= 0)) || (v.CanInt() && v.Int() < 0) {
			bad("method_settings."+name, "method_settings.%s %v must be positive (leave it out for the profile's)", name, v.Interface())
		}
	}
	return out
}
