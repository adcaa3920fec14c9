package train

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/prompt"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// The four configurations of BeLUGA, and T: the suite alone from the
// initial model, for suites without an i.i.d. dataset (Luz de Araujo &
// Roth's 2022 HateCheck setting).
const (
	ConfigIID       = "iid"         // i.i.d. data only
	ConfigIIDThenT  = "iid-t"       // IID→T: from the IID model, suite only
	ConfigIIDPlusT  = "iid+t"       // IID+T: from the initial model, i.i.d. + suite
	ConfigIIDThenIT = "iid-(iid+t)" // IID→(IID+T): from the IID model, i.i.d. + suite
	ConfigT         = "t"           // T: from the initial model, suite only
)

// ConfigurationInfo is a configuration's one entry in the registry: its
// name in run specs and flags, its name in experiment specs and Table 3,
// and what it trains on and from.
type ConfigurationInfo struct {
	Name, Display string
	// FromIID says it starts from the IID baseline's model (from_iid);
	// the others start from the initial model.
	FromIID bool
	// IID and Suite say whether it trains on the i.i.d. training data and
	// on the suite.
	IID, Suite bool
	// Prompt marks a prompted configuration: a language model asked with
	// demonstrations (prompted.go), none trained. DemoIID and DemoSuite
	// say where its demonstrations come from: the i.i.d. training rows,
	// the T_train cases of the functionalities its fold keeps.
	Prompt, DemoIID, DemoSuite bool
}

// readsIIDTrain says whether a run of the configuration reads the i.i.d.
// training rows: to train on, or to draw demonstrations from.
func (c ConfigurationInfo) readsIIDTrain() bool { return c.IID || c.DemoIID }

// Configurations are the configurations in Table 3's order.
var Configurations = []ConfigurationInfo{
	{Name: ConfigIID, Display: "IID", IID: true},
	{Name: ConfigIIDThenT, Display: "IID-T", FromIID: true, Suite: true},
	{Name: ConfigIIDPlusT, Display: "IID+T", IID: true, Suite: true},
	{Name: ConfigIIDThenIT, Display: "IID-IID+T", FromIID: true, IID: true, Suite: true},
	{Name: ConfigT, Display: "T", Suite: true},
	{Name: ConfigPrompt, Display: "0-shot", Prompt: true},
	{Name: ConfigPromptIID, Display: "k-shot IID", Prompt: true, DemoIID: true},
	{Name: ConfigPromptT, Display: "k-shot T", Prompt: true, DemoSuite: true},
	{Name: ConfigPromptIIDPlusT, Display: "k-shot IID+T", Prompt: true, DemoIID: true, DemoSuite: true},
}

// LookupConfiguration returns the configuration a name denotes, in either
// spelling (package train's iid-(iid+t) or Table 3's IID-IID+T), whatever
// the case.
func LookupConfiguration(name string) (ConfigurationInfo, error) {
	for _, c := range Configurations {
		if strings.EqualFold(name, c.Name) || strings.EqualFold(name, c.Display) {
			return c, nil
		}
	}
	var names []string
	for _, c := range Configurations {
		names = append(names, c.Name)
	}
	return ConfigurationInfo{}, fmt.Errorf("unknown configuration %q (want %s; IID-IID+T is the same as iid-(iid+t))", name, strings.Join(names, ", "))
}

// ParseConfiguration returns package train's name of the configuration a
// name denotes (LookupConfiguration).
func ParseConfiguration(name string) (string, error) {
	c, err := LookupConfiguration(name)
	return c.Name, err
}

// config is the registry's entry of the run's configuration (zero for a
// name Validate would refuse).
func (s *RunSpec) config() ConfigurationInfo {
	c, _ := LookupConfiguration(s.Configuration)
	return c
}

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
	// phase; the epochs are BeLUGA's 1.5 whatever they say here).
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

// Result summarises a finished run.
type Result struct {
	// IIDScore is the accuracy on the i.i.d. test set (in [0, 1]),
	// IIDMetrics it and the task's other metrics; nil and empty without
	// i.i.d. test data.
	IIDScore   *float64           `json:"iid_accuracy"`
	IIDMetrics map[string]float64 `json:"iid_metrics,omitempty"`
	// IIDEval holds each evaluation set's metrics (RunSpec.IIDEval),
	// IIDEvalCorrect whether each of its examples was predicted right.
	IIDEval        map[string]map[string]float64 `json:"iid_eval,omitempty"`
	IIDEvalCorrect map[string][]bool             `json:"-"`
	SuiteScore     *float64                      `json:"suite_score"` // mean T_test pass rate, in [0, 1]
	// G is the harmonic mean of the i.i.d. and suite scores, when both exist.
	G       *float64 `json:"g"`
	Steps   int      `json:"steps"`
	Seconds float64  `json:"seconds"`
	// IIDCorrect says, per i.i.d. test example, whether the prediction was
	// right; Suite holds the T_test verdicts. Both are also in the run's files.
	IIDCorrect []bool          `json:"-"`
	Suite      *metrics.Result `json:"-"`
	// IIDPredicted and IIDGold are the predicted and gold classes of the
	// i.i.d. test examples (classification tasks), Curve the training
	// curve: what the run store's sanity checks read.
	// Labels names the task's classes, which IIDPredicted and IIDGold index.
	Labels       []string     `json:"-"`
	IIDPredicted []int        `json:"-"`
	IIDGold      []int        `json:"-"`
	Curve        []CurvePoint `json:"-"`
	// Constant holds, per task label, what predicting it for every suite
	// input scores (classification tasks): reports' computed baselines.
	Constant []ConstantScore `json:"-"`
	// GroupBalance counts, for a run that holds out a value of a metadata
	// column, each value's cases in the suite and in each part of the
	// run's split (splits.Balance): what a report needs to mark a group
	// whose share of T_test is not its share of the suite.
	GroupBalance []splits.GroupBalance `json:"-"`
	// Unparsed counts, per template, a prompted run's generated answers
	// that named no label (each failed its input; none became a label).
	Unparsed map[string]int `json:"unparsed,omitempty"`
	// Templates are a prompted run's scores per template when it scores
	// several (its own scores are their mean probabilities'); each
	// template's predictions are under templates/NAME/.
	Templates map[string]TemplateScore `json:"templates,omitempty"`
}

// TemplateScore is one template's scores in a prompted run of several.
type TemplateScore struct {
	IIDScore   *float64 `json:"iid_accuracy,omitempty"`
	SuiteScore *float64 `json:"suite_score,omitempty"`
	G          *float64 `json:"g,omitempty"`
	Unparsed   int      `json:"unparsed,omitempty"`
}

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
	if s.Configuration != ConfigT && s.IIDDev == "" && s.IIDDevFile == nil && !s.splitsTrainFile() {
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

// Run trains and evaluates one run, writing its artefacts into outDir: the
// model, the suite and i.i.d. test predictions, per-functionality results
// and per-case verdicts, the training curve and metrics.json (with the
// steps and seconds). It
// writes no markers: the run store (package experiments) owns a run's
// lifecycle (spec.json, failed.json, done). Cancelling ctx stops training
// within one update.
func Run(ctx context.Context, spec RunSpec, outDir string) (*Result, error) {
	start := time.Now()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	spec = spec.Effective()
	if _, err := models.KernelPath(); err != nil {
		return nil, err // a forced kernel path is never silently replaced
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	var r kindRun
	var err error
	if spec.config().Prompt {
		r, err = preparePrompted(ctx, spec)
	} else {
		r, err = spec.kind().prepare(ctx, spec)
	}
	if err != nil {
		return nil, err
	}
	if err := writeInputChecks(outDir, r.inputChecks()); err != nil {
		return nil, err
	}
	if t := r.trainedOn(); t != nil {
		slog.Info("run data", "figures", t.String())
		if err := writeJSON(filepath.Join(outDir, TrainedFile), t); err != nil {
			return nil, err
		}
	}
	curve, err := trainRun(ctx, r, spec)
	if werr := writeCurve(filepath.Join(outDir, "curve.jsonl"), curve); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	if err := r.saveModel(filepath.Join(outDir, "model")); err != nil {
		return nil, err
	}
	out, err := r.evaluate(ctx, spec.EvalLimit, outDir)
	if err != nil {
		return nil, err
	}
	out.Steps, out.Curve, out.Seconds = len(curve), curve, time.Since(start).Seconds()
	out.summarise()
	if err := writeJSON(filepath.Join(outDir, "metrics.json"), out); err != nil {
		return nil, err
	}
	return out, nil
}

// summarise sets the suite score (in [0, 1]) and G from the scored suite
// and the i.i.d. score.
func (out *Result) summarise() {
	if out.Suite == nil || out.Suite.Score == nil {
		return
	}
	s := *out.Suite.Score / 100
	out.SuiteScore = &s
	if out.IIDScore != nil {
		g := metrics.HarmonicMean(*out.IIDScore, s)
		out.G = &g
	}
}

func writeJSON(path string, v any) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// classTaskKind is the kind of classification tasks (Task).
type classTaskKind struct{}

// check refuses a task that does not resolve, and registered i.i.d. files
// (iid_train, iid_dev) for a declared task, which has no reader for them.
func (classTaskKind) check(s *RunSpec) error {
	task, err := s.task()
	if err != nil {
		return err
	}
	if task.read == nil || s.TaskDef != nil {
		if s.IIDTrain != "" || s.IIDDev != "" {
			return fmt.Errorf("task %s: declared tasks read i.i.d. data from iid_train_file and iid_dev_file (with their columns), not iid_train/iid_dev", task.Name)
		}
	}
	return nil
}

// checkFold accepts every fold: a fold keyed by case metadata restricts the
// verdicts to the cases it holds out (evaluate).
func (classTaskKind) checkFold(splits.FoldKind) error { return nil }

func (classTaskKind) prepare(ctx context.Context, spec RunSpec) (kindRun, error) {
	p, err := prepare(ctx, spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// classRun is a classification run ready to train.
type classRun struct {
	model    models.Model
	tk       predict.Tokenizer
	save     func(dir string) error
	suite    *suites.Suite
	fold     *splits.Fold
	data     Data
	phases   []Phase
	task     *Task
	iidTest  []datasets.Example // nil: no i.i.d. test set (T without one)
	evalSets []evalSetData
	checks   *inputcheck.Report
	trained  *Trained
	prompted *promptedRun // a prompted run's prompts (nil: a trained model)
}

// prepare loads the suite (assigning BeLUGA's split if it has none), the
// held-out fold, the starting model and the configuration's training data.
func prepare(ctx context.Context, spec RunSpec) (*classRun, error) {
	spec = spec.Effective() // what the run computes, whoever prepares it
	suite, fold, err := spec.openSuite()
	if err != nil {
		return nil, err
	}
	p := &classRun{suite: suite, fold: fold}
	if p.task, err = spec.task(); err != nil {
		return nil, err
	}
	// A suite the task cannot train on or score is refused before the model
	// loads or any data is read.
	if err := p.task.CheckSuite(suite); err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Suite, err)
	}
	if p.model, p.tk, p.save, err = startModel(ctx, spec, len(p.task.Labels)); err != nil {
		return nil, err
	}
	// The spec is its effective form (Effective): a task with mft_loss ce
	// trains with the ordinary cross-entropy (QQP, REFERENCE 1.4), the IID
	// baseline with BertForSequenceClassification's.
	hyper := spec.Hyper
	iid, err := spec.readIID(p.task)
	if err != nil {
		return nil, err
	}
	// The positions of the training rows kept, which trained.json lists
	// by their file lines: the same draw as on the rows themselves
	// (subsample reads only their labels).
	kept := trainPart(&spec, indices(len(iid.train)), func(i int) int { return iid.train[i].Label })
	train := datasets.Pick(iid.train, kept)
	p.iidTest, p.evalSets = iid.test, iid.eval
	if p.checks, err = checkInputs(spec, p.tk, suite, p.task.Pair, iid, train); err != nil {
		return nil, err
	}
	if len(train) != len(iid.train) {
		// A learning curve's point, or max_iid: the rows that train, not
		// the pool they were drawn from.
		iid.trainedSize(p.checks, kept)
	}
	p.trained = trainedRecord(spec, &iid, kept, suite, fold)
	if p.tk, err = withTokenCache(ctx, p.tk, spec.Cache, suite, train, iid.dev); err != nil {
		return nil, err
	}
	if spec.config().IID {
		if p.data.IID, err = IIDRows(train, p.tk, len(p.task.Labels)); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if spec.Configuration == ConfigIID {
		iid := spec.IIDHyper
		if iid.Loss.classWeights, err = p.classWeights(); err != nil {
			return nil, err
		}
		p.phases = vanillaFamily{name: "vanilla"}.Phases(iid, Hyper{})
		return p, nil
	}
	if p.data.Suite, err = BuildSuiteData(spec.trainingSuite(suite, p.fold), suites.SplitTrain, p.fold, p.tk, p.task); err != nil {
		return nil, err
	}
	method, err := NewMethod(spec.Method, spec.defaults())
	if err != nil {
		return nil, err
	}
	if hyper.Loss.classWeights, err = p.classWeights(); err != nil {
		return nil, err
	}
	probe := spec.ProbeHyper
	probe.Loss.classWeights = hyper.Loss.classWeights
	p.phases = method.Phases(hyper, probe)
	return p, nil
}

func (p *classRun) batches() (models.Classifier, Data, []Phase) { return p.model, p.data, p.phases }

func (p *classRun) inputChecks() *inputcheck.Report { return p.checks }

func (p *classRun) trainedOn() *Trained { return p.trained }

func (p *classRun) saveModel(dir string) error {
	if p.prompted != nil {
		return p.prompted.save(dir)
	}
	return p.save(dir)
}

// evaluate scores the i.i.d. test set (when the run has one) by the task's
// metrics, accuracy its score, and the suite with the task's predictions;
// a fold keyed by case metadata keeps the verdicts of the cases it holds
// out.
func (p *classRun) evaluate(ctx context.Context, evalLimit int, outDir string) (*Result, error) {
	eval, err := p.predictor()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &Result{Labels: p.task.Labels}
	if p.fold != nil {
		if col, ok := p.fold.Kind.MetaColumn(); ok {
			out.GroupBalance = splits.Balance(p.suite, col)
		}
	}
	if p.iidTest != nil {
		scores, preds, err := evalIID(ctx, eval, p.task, p.iidTest, outDir)
		if err != nil {
			return nil, err
		}
		acc := scores["accuracy"]
		out.IIDScore, out.IIDMetrics, out.IIDPredicted = &acc, scores, preds
		out.IIDGold = make([]int, len(p.iidTest))
		out.IIDCorrect = make([]bool, len(p.iidTest))
		for i, e := range p.iidTest {
			out.IIDGold[i], out.IIDCorrect[i] = e.Label, preds[i] == e.Label
		}
	}
	scored := scoredSuite(p.suite, p.fold, evalLimit)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sr, constant, err := evalSuite(ctx, eval, p.task, scored, outDir)
	if err != nil {
		return nil, err
	}
	if p.fold != nil && p.fold.ByMeta() {
		// The fold's functionalities keep their other values' cases, which
		// other folds answer for.
		holds := map[string]map[int]bool{}
		for _, f := range scored.Functionalities {
			holds[f.Name] = map[int]bool{}
			for _, c := range f.Cases {
				holds[f.Name][c.ID] = p.fold.HoldsOut(f, c)
			}
		}
		sr.Restrict(func(f string, id int) bool { return holds[f][id] })
		if err := sr.WriteJSON(filepath.Join(outDir, "results.json")); err != nil {
			return nil, err
		}
		if err := sr.WriteCases(filepath.Join(outDir, "cases.jsonl")); err != nil {
			return nil, err
		}
	}
	out.Suite, out.Constant = sr, constant
	out.IIDEval, out.IIDEvalCorrect, err = evalSets(ctx, eval, p.task, p.evalSets, outDir)
	if p.prompted != nil && err == nil {
		out.Unparsed = p.prompted.unparsedCount()
		out.Templates, err = p.templateScores(ctx, evalLimit, outDir)
	}
	return out, err
}

// objective scores the model on T_val's suite data with the task's form
// of BeLUGA's objective (objective).
func (p *classRun) objective(_ context.Context, seed uint64) (Trial, error) {
	if p.prompted != nil {
		return Trial{}, fmt.Errorf("a prompted run trains nothing: there is no search to run")
	}
	val, err := BuildSuiteData(p.suite, suites.SplitValidation, nil, p.tk, p.task)
	if err != nil {
		return Trial{}, err
	}
	return objective(p.model, val, seed, p.task.searchObjective)
}

// classWeights resolves the task's class weights for the run's training
// rows (nil: unweighted).
func (p *classRun) classWeights() (*[]float64, error) {
	if p.task.ClassWeights == nil {
		return nil, nil
	}
	w, err := p.task.ClassWeights.resolve(p.task.Labels, p.data)
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// iidData is a run's i.i.d. data: the training rows, the dev file whole
// (BeLUGA halves it) or the split file's dev part, and the scored test
// rows; parts are all of them with their file lines, for the input checks,
// with the rows a split declared for each (declared) and what the files'
// label maps did (labels).
type iidData struct {
	train, dev, test []datasets.Example
	parts            []inputcheck.Part
	declared         []int
	// lines and files are each part's file lines (negative: a built-in
	// reader's row positions) and file, for the run's trained.json.
	lines  [][]int
	files  []string
	labels []inputcheck.FileLabels
	// labelNames are the task's labels, naming the parts' rows.
	labelNames []string
	// eval are the extra evaluation sets (RunSpec.IIDEval).
	eval []evalSetData
}

// readIID reads the run's i.i.d. data, as far as its configuration needs
// it: a declared file's columns (split into train, dev and test when it
// declares a split), else the built-in task's reader. The test rows are
// the dev file's test half when it is halved (always for a built-in task),
// the dev file whole otherwise.
func (s *RunSpec) readIID(task *Task) (iidData, error) {
	d := iidData{labelNames: task.Labels}
	// read reads a declared file, or a built-in task's file by its path
	// alone (its FileSpec has only the path then).
	read := func(path string, file *datasets.FileSpec) ([]datasets.Example, []int, *datasets.FileSpec, error) {
		if file != nil {
			f, err := withTaskLabels(*file, task)
			if err != nil {
				return nil, nil, nil, err
			}
			rows, err := f.ReadRows()
			d.addLabels(f, rows)
			if err == nil && once(f.Path+rows.Count.String()) {
				slog.Info("read", "file", f.Path, "lines", rows.Count.String(), "examples", len(rows.Examples), "dropped", rows.Dropped)
			}
			warnTexts(rows.Warnings)
			return rows.Examples, rows.Lines, &f, err
		}
		if path == "" {
			return nil, nil, nil, nil
		}
		if task.read == nil {
			return nil, nil, nil, fmt.Errorf("task %s: %s: a declared task's data needs its columns (iid_train_file, iid_dev_file)", task.Name, path)
		}
		// A built-in reader gives no lines: its rows are placed by their
		// position (row 1 is the first after the header).
		xs, err := task.read(path)
		rows := make([]int, len(xs))
		for i := range rows {
			rows[i] = -(i + 1)
		}
		return xs, rows, &datasets.FileSpec{Path: path}, err
	}
	if s.splitsTrainFile() {
		f, err := withTaskLabels(*s.IIDTrainFile, task)
		if err != nil {
			return d, err
		}
		parts, err := f.SplitRows()
		if err != nil {
			return d, err
		}
		d.addLabels(f, parts[0])
		d.train, d.dev, d.test = parts[0].Examples, parts[1].Examples, parts[2].Examples
		if !s.config().readsIIDTrain() {
			d.train = nil
		}
		n := len(parts[0].Examples) + len(parts[1].Examples) + len(parts[2].Examples)
		dev, test := f.Split.Sizes(n)
		for k, name := range []string{"i.i.d. train", "i.i.d. dev", "i.i.d. test"} {
			d.addPart(name, &f, parts[k].Examples, parts[k].Lines, []int{n - dev - test, dev, test}[k])
		}
	} else {
		if s.config().readsIIDTrain() {
			xs, lines, f, err := read(s.IIDTrain, s.IIDTrainFile)
			if err != nil {
				return d, err
			}
			d.train = xs
			if f != nil {
				d.addPart("i.i.d. train", f, xs, lines, 0)
			}
		}
		xs, lines, f, err := read(s.IIDDev, s.IIDDevFile)
		if err != nil {
			return d, err
		}
		if xs != nil {
			d.dev, d.test = xs, xs
			if s.IIDDevFile == nil || s.IIDDevFile.Halve {
				valIdx, testIdx := datasets.Halve(len(xs), datasets.BeLUGAHalvingSeed)
				d.test = datasets.Pick(xs, testIdx)
				d.addPart("i.i.d. validation half", f, datasets.Pick(xs, valIdx), datasets.Pick(lines, valIdx), 0)
				d.addPart("i.i.d. test half", f, d.test, datasets.Pick(lines, testIdx), 0)
			} else {
				d.addPart("i.i.d. test", f, xs, lines, 0)
			}
		}
	}
	if err := task.checkInputForm(slices.Concat(d.train, d.dev), "its i.i.d. data"); err != nil {
		return d, err
	}
	var err error
	d.eval, err = s.readEvalSets(task, &d)
	return d, err
}

// withTaskLabels gives a declared file the task's label names, keeping its
// label map; names of its own must be the task's.
func withTaskLabels(f datasets.FileSpec, task *Task) (datasets.FileSpec, error) {
	if len(f.Labels.Names) > 0 && !slices.Equal(f.Labels.Names, task.Labels) {
		return f, fmt.Errorf("data file %s: labels %q differ from the task's labels %q (leave them out, or map the file's labels: labels: {FILE_LABEL: TASK_LABEL})", f.Path, f.Labels.Names, task.Labels)
	}
	f.Labels.Names = task.Labels
	return f, nil
}

// addLabels records, for a file with a label map or drop list, what they
// did to its rows.
func (d *iidData) addLabels(f datasets.FileSpec, rows datasets.Rows) {
	if len(f.Labels.Map) == 0 && len(f.DropLabels) == 0 {
		return
	}
	read := map[string]string{}
	for k, t := range f.Labels.Map {
		read[k] = t.Name // a file's labels map onto names (Labels.validate)
	}
	if len(read) == 0 {
		read = nil
	}
	d.labels = append(d.labels, inputcheck.FileLabels{File: f.Path, Written: rows.FileLabels, Map: read,
		DropLabels: f.DropLabels, Dropped: rows.Dropped})
}

// addPart adds a part of the i.i.d. data, its rows placed by their file
// lines (or, negative, by their position), to the input checks' parts;
// declared is the rows its split declared (0: not a split part).
func (d *iidData) addPart(name string, f *datasets.FileSpec, xs []datasets.Example, lines []int, declared int) {
	rows := make([]inputcheck.Row, len(xs))
	for i, x := range xs {
		where := fmt.Sprintf("%s line %d", f.Path, lines[i])
		if lines[i] < 0 {
			where = fmt.Sprintf("%s row %d", f.Path, -lines[i])
		}
		rows[i] = inputcheck.Row{Text: x.Text, Pair: x.Pair, Where: where, Group: x.Group}
		if x.Label >= 0 && x.Label < len(d.labelNames) {
			rows[i].Label = d.labelNames[x.Label]
		}
	}
	p := inputcheck.Part{Name: name, Rows: rows}
	if len(xs) > 0 && xs[0].IsPair {
		p.Sides = [2]string{"first text", "second text"}
		if f.PairColumn != "" {
			p.Sides = [2]string{cmp.Or(f.TextColumn, "text"), f.PairColumn}
		}
	}
	if f.Split != nil {
		p.GroupColumn = f.Split.Group
	}
	d.parts = append(d.parts, p)
	d.declared = append(d.declared, declared)
	d.lines = append(d.lines, lines)
	d.files = append(d.files, f.Path)
}

// report is the input checks of the i.i.d. data: the texts its parts
// share, their sizes and labels, what label maps did.
func (d *iidData) report(r *inputcheck.Report) {
	r.AddOverlaps(d.parts)
	r.AddSizes(d.labelNames, d.parts, d.declared)
	for _, l := range d.labels {
		r.AddLabels(l)
	}
}

// openSuite opens the run's suite, assigning BeLUGA's split if it has
// none, and finds its held-out fold (nil for a seen run).
func (s *RunSpec) openSuite() (*suites.Suite, *splits.Fold, error) {
	suite, err := suites.Open(s.Suite)
	if err != nil {
		return nil, nil, err
	}
	if err := splits.AssignFor(suite, s.SuiteStratify); err != nil {
		return nil, nil, err
	}
	if s.HeldOut == nil {
		return suite, nil, nil
	}
	if err := s.kind().checkFold(s.HeldOut.Kind); err != nil {
		return nil, nil, err
	}
	for _, f := range splits.Folds(suite, s.HeldOut.Kind, splits.DefaultFoldOptions) {
		if f.Name == s.HeldOut.Name {
			return suite, &f, nil
		}
	}
	return nil, nil, fmt.Errorf("suite %s has no %s fold %q", suite.Name, s.HeldOut.Kind, s.HeldOut.Name)
}

// defaults are BeLUGA's method constants with the run's settings and
// corrections.
func (s *RunSpec) defaults() Defaults {
	d := s.Settings.apply(s.profile().Methods)
	if s.corrected(CorrectFishOuterStep) {
		d.FishOuterStep = false
	}
	if s.corrected(CorrectIRMDummy) {
		d.IRMDummy = losses.DummyBCE
	}
	d.LPFrozenEval = s.corrected(CorrectLPFrozenEval)
	return d
}

// startModel builds the run's initial model, its tokenizer and a function
// that saves it: the IID model for a configuration that starts from it,
// else the model its source builds (a checkpoint, BERT-tiny from scratch,
// word vectors).
func startModel(ctx context.Context, spec RunSpec, classes int) (models.Model, predict.Tokenizer, func(dir string) error, error) {
	var pm *pretrained.Model
	var err error
	if spec.config().FromIID {
		// One loader for predict and train: a local directory or archive, a
		// beluga model directory or a HuggingFace hub id.
		pm, err = pretrained.Load(ctx, spec.FromIID, pretrained.Options{Labels: classes, MaxLength: spec.MaxLength, AllowMissing: spec.Model.AllowMissing})
	} else {
		pm, err = pretrained.Start(ctx, spec.Model, pretrained.StartOptions{Labels: classes, MaxLength: spec.MaxLength, Seed: spec.Seed})
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if err := pretrained.SetPrecision(pm.Classifier, spec.Model.Precision); err != nil {
		return nil, nil, nil, err
	}
	return pm.Classifier, pm.Tokenizer, pm.Save, nil
}

func writeCurve(path string, curve []CurvePoint) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, c := range curve {
			if math.IsNaN(c.Loss) || math.IsInf(c.Loss, 0) {
				c.Loss = -1 // JSON has no NaN; the failure record says what happened
			}
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// evalIID predicts the i.i.d. test set, writes the predictions — as
// BeLUGA writes them (iid_predictions.txt: class and probabilities) and with
// each example's text and gold label (iid_predictions.jsonl) — and returns
// the task's metrics and the predicted classes.
func evalIID(ctx context.Context, m predictFunc, task *Task, test []datasets.Example, outDir string) (map[string]float64, []int, error) {
	return evalIIDTo(ctx, m, task, test, filepath.Join(outDir, "iid_predictions"))
}

// evalIIDTo is evalIID writing the predictions to base+".txt" and
// base+".jsonl".
func evalIIDTo(ctx context.Context, m predictFunc, task *Task, test []datasets.Example, base string) (map[string]float64, []int, error) {
	inputs := make([]predict.Input, len(test))
	gold := make([]int, len(test))
	for i, e := range test {
		inputs[i] = predict.NewInput(e.Text, e.Pair, e.IsPair)
		gold[i] = e.Label
	}
	outs, err := m(ctx, inputs)
	if err != nil {
		return nil, nil, err
	}
	name := func(c int) string {
		if c >= 0 && c < len(task.Labels) {
			return task.Labels[c]
		}
		return strconv.Itoa(c)
	}
	preds := make([]int, len(outs))
	var buf, lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	for i, o := range outs {
		preds[i] = argmax(o.Probs)
		if o.Probs == nil {
			preds[i] = -1 // a prompted model's unparsed answer: wrong, never a label
		}
		buf.WriteString(strconv.Itoa(preds[i]))
		probs := make([]float64, len(o.Probs))
		for c, p := range o.Probs {
			fmt.Fprintf(&buf, " %g", p)
			probs[c] = float64(p)
		}
		buf.WriteByte('\n')
		k := preds[i]
		line := metrics.CaseInput{Text: test[i].Text, Label: name(gold[i]), Pred: name(k), PredClass: &k, Probs: probs}
		if k < 0 {
			line.Pred, line.Probs = unparsedPred, nil
		}
		if test[i].IsPair {
			line.Pair = test[i].Pair
		}
		if err := enc.Encode(line); err != nil {
			return nil, nil, err
		}
	}
	if err := atomicfile.WriteFile(base+".txt", buf.Bytes()); err != nil {
		return nil, nil, err
	}
	if err := atomicfile.WriteFile(base+".jsonl", lines.Bytes()); err != nil {
		return nil, nil, err
	}
	scores, err := task.iidScores(preds, gold)
	return scores, preds, err
}

// evalSuite predicts every input of the T_test cases of s in suite order,
// writes the predictions as BeLUGA writes them and scores them: a 2-class
// sentiment model squashed to CheckList's three classes (pred_and_softmax),
// two classes as P(second class) (binary_conf), more as class and
// probabilities in the suite's label order (pred_and_softmax).
func evalSuite(ctx context.Context, m predictFunc, task *Task, s *suites.Suite, outDir string) (*metrics.Result, []ConstantScore, error) {
	var inputs []predict.Input
	for _, f := range s.Functionalities {
		for _, c := range f.Cases {
			if c.Split != suites.SplitTest {
				continue
			}
			for _, in := range c.Inputs {
				inputs = append(inputs, predict.NewInput(in.Text, in.Pair, in.IsPair))
			}
		}
	}
	outs, err := m(ctx, inputs)
	if err != nil {
		return nil, nil, err
	}
	squash := task.squashes(s)
	var toSuite []int
	if !squash {
		if toSuite, err = task.suiteClasses(s); err != nil {
			return nil, nil, err
		}
	}
	// prediction turns the model's probabilities into a scored prediction
	// and its line in BeLUGA's prediction file.
	prediction := func(out []float32, buf *bytes.Buffer) metrics.Prediction {
		if out == nil {
			buf.WriteString("-1\n") // a prompted model's unparsed answer
			return metrics.Prediction{Class: -1}
		}
		var probs []float64
		if !squash {
			probs = make([]float64, len(s.Labels))
			for c, p := range out {
				probs[toSuite[c]] = float64(p)
			}
		}
		switch {
		case squash:
			// BeLUGA squashes its float32 model's softmax at float32.
			pr := metrics.Squash32(out[1], metrics.SquashCheckList)
			p := pr.Probs
			fmt.Fprintf(buf, "%d %g %g %g\n", pr.Class, p[0], p[1], p[2])
			return pr
		case len(out) == 2 && len(s.Labels) == 2:
			p1 := probs[1]
			pr := metrics.Prediction{Probs: []float64{1 - p1, p1}}
			if p1 > 0.5 {
				pr.Class = 1
			}
			fmt.Fprintf(buf, "%g\n", p1)
			return pr
		default:
			pr := metrics.Prediction{Class: toSuite[argmax(out)], Probs: probs}
			buf.WriteString(strconv.Itoa(pr.Class))
			for _, p := range probs {
				fmt.Fprintf(buf, " %g", p)
			}
			buf.WriteByte('\n')
			return pr
		}
	}
	preds := make([]metrics.Prediction, len(outs))
	var buf bytes.Buffer
	for i, o := range outs {
		preds[i] = prediction(o.Probs, &buf)
	}
	// What predicting one task label for every input scores: the constant
	// baselines of reports, computed rather than trained.
	var constant []ConstantScore
	for c, label := range task.Labels {
		onehot := make([]float32, len(task.Labels))
		onehot[c] = 1
		p := prediction(onehot, &bytes.Buffer{})
		same := make([]metrics.Prediction, len(outs))
		for i := range same {
			same[i] = p
		}
		r, err := metrics.Score(s, same, metrics.ScoreOptions{Split: suites.SplitTest})
		if err != nil {
			return nil, nil, err
		}
		constant = append(constant, ConstantScore{Label: label, Suite: r})
	}
	if err := atomicfile.WriteFile(filepath.Join(outDir, "suite_predictions.txt"), buf.Bytes()); err != nil {
		return nil, nil, err
	}
	r, err := scoreSuite(s, preds, outDir)
	return r, constant, err
}

// ConstantScore is what predicting one label for every input scores on
// the suite.
type ConstantScore struct {
	Label string
	Suite *metrics.Result
}

// scoreSuite scores predictions of the T_test inputs of s in suite order
// and writes the per-functionality results and per-case verdicts.
func scoreSuite(s *suites.Suite, preds []metrics.Prediction, outDir string) (*metrics.Result, error) {
	r, err := metrics.Score(s, preds, metrics.ScoreOptions{Split: suites.SplitTest})
	if err != nil {
		return nil, err
	}
	if err := r.WriteJSON(filepath.Join(outDir, "results.json")); err != nil {
		return nil, err
	}
	return r, r.WriteCases(filepath.Join(outDir, "cases.jsonl"))
}

// limitCases keeps, per functionality, the first n cases of split (and
// every case of the other splits). With a fold, the cases it holds out
// take no place under the cap: they stay (BuildSuiteData leaves them out)
// and the cap counts only the cases the fold keeps.
func limitCases(s *suites.Suite, split suites.Split, n int, fold *splits.Fold) *suites.Suite {
	out := *s
	out.Functionalities = nil
	for _, f := range s.Functionalities {
		g := *f
		g.Cases = nil
		kept := 0
		for _, c := range f.Cases {
			if c.Split == split && (fold == nil || !fold.HoldsOut(f, c)) {
				if kept == n {
					continue
				}
				kept++
			}
			g.Cases = append(g.Cases, c)
		}
		out.Functionalities = append(out.Functionalities, &g)
	}
	return &out
}

// dropOtherSplits keeps only the cases of split.
func dropOtherSplits(s *suites.Suite, split suites.Split) *suites.Suite {
	out := *s
	out.Functionalities = nil
	for _, f := range s.Functionalities {
		g := *f
		g.Cases = nil
		for _, c := range f.Cases {
			if c.Split == split {
				g.Cases = append(g.Cases, c)
			}
		}
		out.Functionalities = append(out.Functionalities, &g)
	}
	return &out
}

// subsetSuite keeps the named functionalities of s (sharing their cases).
func subsetSuite(s *suites.Suite, names []string) *suites.Suite {
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
	}
	out := *s
	out.Functionalities = nil
	for _, f := range s.Functionalities {
		if keep[f.Name] {
			out.Functionalities = append(out.Functionalities, f)
		}
	}
	return &out
}

// warnTexts logs the texts of an i.i.d. file that are likely wrong (empty,
// or with a control character), as suite import does: the first ten,
// then how many more.
func warnTexts(ws []*datasets.RowError) {
	for i, w := range ws {
		if i == 10 {
			slog.Warn("i.i.d. data: more texts likely wrong", "count", len(ws)-i)
			break
		}
		if once(w.Error()) {
			slog.Warn("i.i.d. data: text kept as it is", "problem", w.Error())
		}
	}
}
