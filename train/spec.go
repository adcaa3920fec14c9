package train

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/prompt"
	"github.com/beluga-nlp/beluga/splits"
)

// ModelSpec says which model a run starts from: a registered model source
// (pretrained.Source: a HuggingFace checkpoint, BERT-tiny from scratch,
// word vectors) and its settings.
type ModelSpec = pretrained.Spec

// FoldSpec names a held-out fold: kind func, class, type or meta:COLUMN, and
// the held-out functionality, class, test type or value of the case-metadata
// column.
type FoldSpec struct {
	Kind splits.FoldKind `json:"kind" yaml:"kind"`
	Name string          `json:"name" yaml:"name"`
}

// RunSpec is one training run.
type RunSpec struct {
	// Task names a built-in task (sentiment, qqp: BuiltinTasks) or, with
	// TaskDef, a declared one.
	Task    string `json:"task" yaml:"task"`
	TaskDef *Task  `json:"task_def,omitempty" yaml:"task_def,omitempty"`
	// Kind is the task's kind (classification or span); empty means the
	// built-in task's (span for squad), else classification
	// (ResolvedKind). A span task other than squad is declared by it.
	Kind Kind `json:"kind,omitempty" yaml:"kind,omitempty"`
	// Profile names the profile of defaults the settings the spec leaves
	// out take (Profiles; empty: DefaultProfile, BeLUGA's).
	Profile string `json:"profile,omitempty" yaml:"profile,omitempty"`
	Suite   string `json:"suite" yaml:"suite"`
	// SuiteStratify, when set, splits the suite by BeLUGA's sizes but
	// stratified by this case-metadata column
	// (splits.AssignStratified), whatever split the suite file holds;
	// empty keeps the file's split, or assigns BeLUGA's where it has none.
	SuiteStratify string `json:"suite_stratify,omitempty" yaml:"suite_stratify,omitempty"`
	// IIDTrain and IIDDev are a built-in task's registered i.i.d. files
	// (BeLUGA halves the dev file into validation and i.i.d. test).
	IIDTrain string `json:"iid_train,omitempty" yaml:"iid_train,omitempty"`
	IIDDev   string `json:"iid_dev,omitempty" yaml:"iid_dev,omitempty"`
	// IIDTrainFile and IIDDevFile declare i.i.d. files by their columns,
	// for any task; the dev file is halved when it says halve, and is
	// the i.i.d. test set whole otherwise. The configuration T needs
	// neither, and scores the i.i.d. test set only when one is given.
	IIDTrainFile *datasets.FileSpec `json:"iid_train_file,omitempty" yaml:"iid_train_file,omitempty"`
	IIDDevFile   *datasets.FileSpec `json:"iid_dev_file,omitempty" yaml:"iid_dev_file,omitempty"`
	IIDLimit     int                `json:"iid_limit,omitempty" yaml:"iid_limit,omitempty"`
	// IIDEval are extra i.i.d. evaluation sets of a classification task,
	// scored whole after training beside its i.i.d. test set (EvalSet).
	IIDEval []EvalSet `json:"iid_eval,omitempty" yaml:"iid_eval,omitempty"`
	// TrainSize or TrainFraction (of the examples left after IIDLimit)
	// trains on a seeded, label-stratified subsample of the i.i.d.
	// training part, for learning curves; the validation and i.i.d. test
	// parts are untouched. At most one is set; none trains on all.
	TrainSize     int     `json:"train_size,omitempty" yaml:"train_size,omitempty"`
	TrainFraction float64 `json:"train_fraction,omitempty" yaml:"train_fraction,omitempty"`
	// SuiteLimit caps the T_train cases used per functionality (0: all),
	// for quick runs; the cases kept are the first in suite order.
	SuiteLimit int `json:"suite_limit,omitempty" yaml:"suite_limit,omitempty"`
	// SuiteLimitAfterHoldOut applies SuiteLimit to the cases a fold keeps
	// rather than before the fold removes its held-out cases: a metadata
	// fold (IdentOut) then trains on as many cases per functionality as
	// the seen run where the functionality has them, not on the seen
	// run's capped cases less its group. False, BeLUGA's order, keeps
	// every existing run's identity (trainingSuite).
	SuiteLimitAfterHoldOut bool `json:"suite_limit_after_hold_out,omitempty" yaml:"suite_limit_after_hold_out,omitempty"`
	// EvalLimit caps the T_test cases scored per functionality (0: all), for
	// quick runs only: pass rates then come from a subsample.
	EvalLimit     int       `json:"eval_limit,omitempty" yaml:"eval_limit,omitempty"`
	Model         ModelSpec `json:"model" yaml:"model"`
	Configuration string    `json:"configuration" yaml:"configuration"`
	Method        string    `json:"method" yaml:"method"`
	FromIID       string    `json:"from_iid,omitempty" yaml:"from_iid,omitempty"`
	HeldOut       *FoldSpec `json:"held_out,omitempty" yaml:"held_out,omitempty"`
	Hyper         Hyper     `json:"hyper" yaml:"hyper"`
	// ProbeHyper are LP-FT's linear-probing hyper-parameters (its first
	// phase; the epochs of both its phases are the profile's probing
	// epochs, BeLUGA's 1.5, whatever they say here).
	ProbeHyper Hyper `json:"probe_hyper,omitempty" yaml:"probe_hyper,omitempty"`
	IIDHyper   Hyper `json:"iid_hyper" yaml:"iid_hyper"`
	MaxLength  int   `json:"max_length" yaml:"max_length"`
	// MaxSteps caps the updates of each training phase (0: none).
	MaxSteps int    `json:"max_steps,omitempty" yaml:"max_steps,omitempty"`
	Seed     uint64 `json:"seed" yaml:"seed"`
	// Corrections lists the BeLUGA behaviours to correct (Corrections);
	// none means BeLUGA's faithful behaviour.
	Corrections []string `json:"corrections,omitempty" yaml:"corrections,omitempty"`
	// Cache is a directory of caches shared by the runs of a sweep (none
	// when empty): tokenised inputs (tokenize.Cache) and frozen encoders'
	// features (CorrectLPFrozenEval). It changes no result, so it is no
	// part of the spec a run records or is identified by.
	Cache string `json:"-" yaml:"-"`
	// Settings override BeLUGA's method constants (none: BeLUGA's, and the
	// recorded spec is unchanged).
	Settings MethodSettings `json:"method_settings,omitzero" yaml:"method_settings,omitempty"`
	// Prompt is a prompted configuration's template, verbalizers, number
	// of demonstrations and model (package prompt); no other run reads it.
	Prompt *prompt.Spec `json:"prompt,omitempty" yaml:"prompt,omitempty"`
}

// InputField is a field of a run spec that names a file or directory the
// run reads, by its field path (suite, iid_train, iid_train_file.path,
// iid_eval[0].path, model.path, model.vocab, …).
type InputField struct {
	Field string
	Path  *string
}

// InputFields lists the fields of s that name what its run reads, those
// that are set, in a fixed order: the suite, the i.i.d. files, the
// evaluation sets and the model's files. A run's other inputs are other
// runs' outputs (from_iid) and its cache, which changes no result. A
// field added here is part of every run's identity (package experiments
// digests each file these name).
func (s *RunSpec) InputFields() []InputField {
	var out []InputField
	add := func(field string, p *string) {
		if *p != "" {
			out = append(out, InputField{field, p})
		}
	}
	add("suite", &s.Suite)
	add("iid_train", &s.IIDTrain)
	add("iid_dev", &s.IIDDev)
	if s.IIDTrainFile != nil {
		add("iid_train_file.path", &s.IIDTrainFile.Path)
	}
	if s.IIDDevFile != nil {
		add("iid_dev_file.path", &s.IIDDevFile.Path)
	}
	for i := range s.IIDEval {
		add(fmt.Sprintf("iid_eval[%d].path", i), &s.IIDEval[i].Path)
	}
	add("model.path", &s.Model.Path)
	add("model.vocab", &s.Model.Vocab)
	add("model.tokenizer", &s.Model.Tokenizer)
	add("model.glove", &s.Model.GloVe)
	if s.Prompt != nil {
		add("prompt.model", &s.Prompt.Model)
	}
	return out
}

// Corrections of BeLUGA's faithful behaviour that a run can ask for, with
// what they change.
var Corrections = map[string]string{
	CorrectFishOuterStep: "Fish without the Trainer's extra AdamW step after each meta update (torch ≥ 2.0's behaviour)",
	CorrectIRMDummy:      "IRM's dummy loss for sentiment MFT batches is the sigmoid BCE the ERM term uses, not softmax CE",
	CorrectLPFrozenEval:  "LP and LP-FT's probing without dropout in the frozen encoder, the head trained on its features computed once",
}

// The corrections package train applies.
const (
	CorrectFishOuterStep = "fish-outer-step"
	CorrectIRMDummy      = "irm-dummy"
)

func (s *RunSpec) corrected(name string) bool { return slices.Contains(s.Corrections, name) }

// Validate checks a run spec before anything is written for it, and
// writes its configuration in package train's spelling (ParseConfiguration).
func (s *RunSpec) Validate() error {
	if errs := s.CheckSettings(); len(errs) > 0 {
		return errors.Join(errs...)
	}
	config, err := LookupConfiguration(s.Configuration)
	if err != nil {
		return err
	}
	s.Configuration = config.Name
	if s.Model.Precision, err = pretrained.CanonicalPrecision(string(s.Model.Precision)); err != nil {
		return fmt.Errorf("model.precision: %w", err)
	}
	if _, err := ParseKind(string(s.Kind)); err != nil {
		return err
	}
	if _, err := LookupProfile(s.Profile); err != nil {
		return err
	}
	if config.FromIID && s.FromIID == "" {
		return fmt.Errorf("configuration %s starts from the IID model: set from_iid", s.Configuration)
	}
	if config.Prompt {
		return s.validatePrompted()
	}
	src, err := pretrained.LookupSource(s.Model.Kind)
	if err != nil {
		return err
	}
	if err := src.Check(s.Model); err != nil {
		return err
	}
	// A model file that is not there fails the run before it reads
	// anything, in the words of an experiment spec's preflight.
	for _, f := range []struct{ key, path string }{{"vocab", s.Model.Vocab}, {"tokenizer", s.Model.Tokenizer}, {"glove", s.Model.GloVe}} {
		if _, err := os.Stat(f.path); f.path != "" && errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("model.%s: %s: file not found", f.key, f.path)
		}
	}
	if err := ValidateEvalSets(s.IIDEval, "iid_eval"); err != nil {
		return err
	}
	if err := s.kind().check(s); err != nil {
		return err
	}
	if config.IID && s.IIDTrain == "" && s.IIDTrainFile == nil {
		return fmt.Errorf("configuration %s trains on i.i.d. data: set iid_train (or iid_train_file)", s.Configuration)
	}
	if err := s.validateIIDFiles(); err != nil {
		return err
	}
	if config.UsesIID() && s.IIDDev == "" && s.IIDDevFile == nil && !s.splitsTrainFile() {
		return fmt.Errorf("configuration %s scores the i.i.d. test set: set iid_dev (or iid_dev_file)", s.Configuration)
	}
	for _, c := range s.Corrections {
		if _, ok := Corrections[c]; !ok {
			return fmt.Errorf("unknown correction %q (known: %s)", c, strings.Join(slices.Sorted(maps.Keys(Corrections)), ", "))
		}
	}
	return nil
}

// splitsTrainFile says whether the i.i.d. training file is split into the
// train, dev and test parts (datasets.Split).
func (s *RunSpec) splitsTrainFile() bool {
	return s.IIDTrainFile != nil && s.IIDTrainFile.Split != nil
}

// validateIIDFiles refuses a split training file beside a dev file, a split
// of a dev file, and one file named for training and evaluation without a
// split: every evaluated row would be a training row.
func (s *RunSpec) validateIIDFiles() error {
	if s.IIDDevFile != nil && s.IIDDevFile.Split != nil {
		return fmt.Errorf("iid_dev_file.split: only the training file is split (its dev and test parts replace iid_dev_file)")
	}
	if s.splitsTrainFile() {
		if s.IIDDevFile != nil || s.IIDDev != "" {
			return fmt.Errorf("iid_train_file.split: a split training file gives the dev and test parts itself: leave out iid_dev_file")
		}
		return s.IIDTrainFile.Split.Validate("iid_train_file.split", -1)
	}
	train, dev := s.IIDTrain, s.IIDDev
	if s.IIDTrainFile != nil {
		train = s.IIDTrainFile.Path
	}
	if s.IIDDevFile != nil {
		dev = s.IIDDevFile.Path
	}
	// READ trains on dev's validation half when both name dev (SQuAD train
	// is not always at hand), never on the test half it scores.
	if _, span := s.kind().(spanTaskKind); !span && train != "" && dev != "" && inputcheck.SameFile(train, dev) {
		return fmt.Errorf("iid_train_file and iid_dev_file are one file (%s): every evaluated row would be a training row; split it instead (iid_train_file.split: {dev: …, test: …})", dev)
	}
	return nil
}

// task returns a classification run's task: its declaration, else the
// built-in task of its name.
func (s *RunSpec) task() (*Task, error) {
	if s.TaskDef == nil {
		return LookupTask(s.Task)
	}
	if s.TaskDef.Name != s.Task {
		return nil, fmt.Errorf("task %q is declared as %q", s.Task, s.TaskDef.Name)
	}
	if _, ok := BuiltinTasks[s.Task]; ok {
		return nil, fmt.Errorf("task %q is built in: declare a task under another name", s.Task)
	}
	if err := s.TaskDef.Validate(); err != nil {
		return nil, err
	}
	return s.TaskDef, nil
}

// defaults are BeLUGA's method constants with the run's settings and
// corrections.
func (s *RunSpec) defaults() Defaults {
	d := s.profile().Methods
	d.MethodSettings = s.Settings.over(d.MethodSettings)
	if s.corrected(CorrectFishOuterStep) {
		d.FishOuterStep = false
	}
	if s.corrected(CorrectIRMDummy) {
		d.IRMDummy = losses.DummyBCE
	}
	d.LPFrozenEval = s.corrected(CorrectLPFrozenEval)
	return d
}
