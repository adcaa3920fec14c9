package experiments

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/yamlpath"
	"github.com/beluga-nlp/beluga/prompt"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

// ConfigIID is the IID baseline's name in experiment specs, stores and
// Table 3: its spelling in the configurations' registry
// (train.Configurations), which every other configuration is asked of by
// name (train.LookupConfiguration); the baseline is named here because
// every sweep runs it and reports set it apart.
var ConfigIID = train.MustConfiguration(train.ConfigIID).Display

// The scores a run is evaluated for. ScoreIID marks the baseline run, which is
// scored on every functionality and whose results stand in for all four suite
// scores.
const (
	ScoreIID   = "iid"
	ScoreSeen  = "seen"
	ScoreFunc  = "func"
	ScoreClass = "class"
	ScoreType  = "type"
	// ScoreSearch marks a hyper-parameter search run: it tunes one
	// configuration × method on T_val and is scored on nothing; the seen and
	// held-out runs of that cell train with what it chose.
	ScoreSearch = "search"
	// ScoreTrial marks one trial of a search: it trains one point of the
	// search's grid and scores it on T_val (TrialFile). Each trial is a run
	// of its own, so that a sweep's jobs, shards and array tasks train a
	// search's trials side by side; the search waits for them and picks
	// the best.
	ScoreTrial = "trial"
)

// IsSearchScore says whether runs of the score tune hyper-parameters (a
// search and its trials) rather than fill a table's cell.
func IsSearchScore(score string) bool { return score == ScoreSearch || score == ScoreTrial }

// ScoreInfo is a score's one entry in the registry: its name in specs,
// stores and column headers (G_seen), its title on figure panels, and for a
// held-out score the partition its runs hold out and what one fold of it
// is. A metadata score ("meta:COLUMN", IsMetaScore) is the registry's
// partition by any case-metadata column.
type ScoreInfo struct {
	Name, Title string
	Fold        splits.FoldKind // "" for seen
	Unit        string          // what a fold holds out: a functionality, class or test type
}

// ScoreRegistry lists BeLUGA's scores in Table 3's order.
var ScoreRegistry = []ScoreInfo{
	{Name: ScoreSeen, Title: "Seen"},
	{Name: ScoreFunc, Title: "Func", Fold: splits.ByFunctionality, Unit: "functionality"},
	{Name: ScoreClass, Title: "Class", Fold: splits.ByClass, Unit: "class"},
	{Name: ScoreType, Title: "Type", Fold: splits.ByType, Unit: "test type"},
}

// LookupScore returns the registry's entry of a score name.
func LookupScore(name string) (ScoreInfo, bool) {
	for _, s := range ScoreRegistry {
		if s.Name == name {
			return s, true
		}
	}
	return ScoreInfo{}, false
}

// Configurations lists the configurations a spec may ask for (the IID
// baseline is always run) in Table 3's order (train.Configurations), by
// Table 3's names; Scores the scores' names (ScoreRegistry).
var (
	Configurations = func() []string {
		var out []string
		for _, c := range train.Configurations {
			if c.Name != train.ConfigIID {
				out = append(out, c.Display)
			}
		}
		return out
	}()
	Scores = func() []string {
		var out []string
		for _, s := range ScoreRegistry {
			out = append(out, s.Name)
		}
		return out
	}()
)

// MethodRank is a method's place in Table 3's order (train.Methods); an
// unknown method comes last.
func MethodRank(method string) int {
	for i, m := range train.Methods {
		if m.Name == method {
			return i
		}
	}
	return len(train.Methods)
}

// MethodNames maps a method to its display name in tables and figures
// (train.Methods' Display).
var MethodNames = func() map[string]string {
	out := map[string]string{}
	for _, m := range train.Methods {
		out[m.Name] = m.Display
	}
	return out
}()

// Spec is an experiment: the grid of runs that one Table 3 and one Figure 1
// are computed from. It is read from YAML.
type Spec struct {
	// Name of the experiment; it names the default output directory.
	Name string `yaml:"name"`
	// Out is the run store directory. Relative paths, here as everywhere
	// in a spec, are relative to the spec file's directory.
	Out string `yaml:"out"`
	// Profile names the profile of defaults (train.Profiles) the settings
	// the spec leaves out take: beluga, BeLUGA's, when left out.
	Profile string `yaml:"profile,omitempty"`
	// Tasks trained and scored, each with its i.i.d. data and its suite.
	Tasks []Task `yaml:"tasks"`
	// Model names the model and its settings (passed through to the runner).
	Model Model `yaml:"model"`
	// Configurations from Configurations; the IID baseline is always run,
	// and [IID] (or []) asks for it alone: a learning curve of the i.i.d.
	// model.
	Configurations []string `yaml:"configurations"`
	// Methods from train.Methods.
	Methods []string `yaml:"methods"`
	// Scores from Scores; "seen" is always run because the held-out runs
	// reuse its hyper-parameters.
	Scores []string `yaml:"scores"`
	// Seeds: one run per seed for every cell of the grid.
	Seeds []int64 `yaml:"seeds"`
	// Budget bounds training.
	Budget Budget `yaml:"budget"`
	// Grid holds the values to sweep; every combination is a separate
	// run, so keep it small. A key names a field of package train's run
	// spec, by its field path (hyper.lr) or BeLUGA's short name for it
	// (lr): one field, one setting, whichever way it is spelt.
	Grid map[string][]any `yaml:"grid"`
	// Corrections lists the BeLUGA behaviours to correct (train.Corrections);
	// none means BeLUGA's faithful behaviour.
	Corrections []string `yaml:"corrections,omitempty"`
	// Baseline names the table row every other row is tested against and
	// marked ↑/↓ against (beluga report's --baseline): a row as "IID
	// train_size=4000" or "IID+T: L2" writes it, or "none". Empty: the IID
	// row; of several IID rows (a learning curve), the one trained on the
	// largest train_size.
	Baseline string `yaml:"baseline,omitempty"`
	// Search, when set, tunes every configuration × method on T_val before
	// its runs, as BeLUGA does (REFERENCE 1.5): lr, batch size and epochs
	// over the grid, maximising BeLUGA's objective; the held-out runs reuse
	// the choice. The grid then gives no epochs, batch size or learning
	// rate of the suite phase (the IID baseline's: iid_epochs, …).
	Search *SearchGrid `yaml:"search,omitempty"`
	// Prompt is the prompted configurations' language model, templates,
	// verbalizers and number of demonstrations (package prompt): the
	// rows 0-shot, k-shot IID, k-shot T and k-shot IID+T of the same
	// table. Their method is prompt, whatever methods lists; the grid
	// sweeps prompt.k and prompt.template as any other field.
	Prompt *prompt.Spec `yaml:"prompt,omitempty"`

	dir string // directory of the spec file, for relative paths
	src []byte // the spec's YAML, for the lines of its fields
}

// SearchGrid is a search's grid; empty lists mean BeLUGA's values: lr
// {2e-5, 3e-5, 5e-5} (LP: lp_lr {1e-4, 5e-4, 1e-3}), batch size {8, 16},
// epochs {1, 2, 3} — 18 trials.
type SearchGrid struct {
	LR        []float64 `yaml:"lr,omitempty" json:"lr"`
	LPLR      []float64 `yaml:"lp_lr,omitempty" json:"lp_lr"`
	BatchSize []int     `yaml:"batch_size,omitempty" json:"batch_size"`
	Epochs    []float64 `yaml:"epochs,omitempty" json:"epochs"`

	// batchDefault says batch_size was left out: READ's searches then use
	// BeLUGA's SQuAD batch sizes {2, 3}.
	batchDefault bool
}

// grid is package train's grid a search of method trains over: LP's
// learning rates are lp_lr.
func (g SearchGrid) grid(method string) train.Grid {
	out := train.Grid{LR: g.LR, BatchSize: g.BatchSize, Epochs: g.Epochs}
	if method == "lp" {
		out.LR = g.LPLR
	}
	return out
}

// fill takes the values a grid leaves out from profile p's.
func (g *SearchGrid) fill(p *train.Profile) error {
	if len(g.LR) == 0 {
		g.LR = slices.Clone(p.Classification.Search.LR)
	}
	if len(g.LPLR) == 0 {
		g.LPLR = slices.Clone(p.Classification.LPSearch.LR)
	}
	if len(g.BatchSize) == 0 {
		g.BatchSize = slices.Clone(p.Classification.Search.BatchSize)
		g.batchDefault = true
	}
	if len(g.Epochs) == 0 {
		g.Epochs = slices.Clone(p.Classification.Search.Epochs)
	}
	for _, v := range append(append(slices.Clone(g.LR), g.LPLR...), g.Epochs...) {
		if !(v > 0) {
			return fmt.Errorf("field search: %v is not a positive number", v)
		}
	}
	for _, b := range g.BatchSize {
		if b <= 0 {
			return fmt.Errorf("field search.batch_size: %d is not positive", b)
		}
	}
	return nil
}

// Task is one task of an experiment: its i.i.d. data and its suite. SENT
// and PARA (also spelt sentiment and qqp) are BeLUGA's built-in tasks; any
// other is declared here by its labels, and reads its i.i.d. data (if it
// has any) from Train and Dev.
type Task struct {
	// Name is the task's short name used in tables (e.g. SENT, PARA, READ).
	Name string `yaml:"name"`
	// Kind is a declared task's kind: classification (the default: a task
	// of labels) or span (answer spans, SQuAD-format train and dev files).
	// A built-in task declares its own (READ: span).
	Kind string `yaml:"kind,omitempty"`
	// Data names a built-in task's i.i.d. dataset (e.g. sst2) or a
	// directory holding it.
	Data string `yaml:"data,omitempty"`
	// Labels declares a task: the model's classes in index order.
	Labels []string `yaml:"labels,omitempty"`
	// Input is "text" (the default) or "pair" (text pairs).
	Input string `yaml:"input,omitempty"`
	// SuiteLabels maps the suite's labels (by name or index, or training
	// labels such as not_0) onto a task label's name or one probability
	// per task label (datasets.LabelMap, the one label map, with soft
	// targets). A suite label missing here trains as the task label of the
	// same name.
	SuiteLabels datasets.LabelMap `yaml:"suite_labels,omitempty"`
	// MFTLoss is bce (BeLUGA's sigmoid BCE) or ce (softmax cross-entropy,
	// the default of a declared task).
	MFTLoss string `yaml:"mft_loss,omitempty"`
	// ClassWeights weights the i.i.d. and MFT cross-entropy per gold class:
	// balanced (sklearn's) or one weight per label (train.ClassWeights).
	ClassWeights *train.ClassWeights `yaml:"class_weights,omitempty"`
	// Metrics are the i.i.d. metrics (accuracy, macro_f1, f1); the first
	// is the i.i.d. score G is computed from. Default: accuracy.
	Metrics []string `yaml:"metrics,omitempty"`
	// Train and Dev are a declared task's i.i.d. files with their columns
	// (Dev: halve, as BeLUGA halves SST-2's dev set, or the whole file is
	// the i.i.d. test set). A task without them runs configuration T only.
	Train *datasets.FileSpec `yaml:"train,omitempty"`
	Dev   *datasets.FileSpec `yaml:"dev,omitempty"`
	// Eval lists extra i.i.d. evaluation sets, files of the task's labels
	// with their columns, scored after training beside the task's own
	// i.i.d. test set (train.EvalSet); a classification task's only.
	Eval []train.EvalSet `yaml:"eval,omitempty"`
	// Suite is the suite file (any format package suites opens) or the
	// name of a CheckList release suite (sentiment, qqp, squad, or a
	// dataset name).
	Suite string `yaml:"suite"`
	// Split, when set, says how the suite's cases are split into T_train,
	// T_val and T_test: {stratify: COLUMN} keeps BeLUGA's sizes but gives
	// each value of the case-metadata column its suite share of every
	// part (splits.AssignStratified) — for a column held out (IdentOut's
	// target_ident). Without it the suite's own split, or BeLUGA's.
	Split *SuiteSplit `yaml:"split,omitempty"`
	// Folds lists the held-out folds per score (func, class, type,
	// meta:COLUMN). When a
	// score is missing here its folds are read from the suite file.
	Folds map[string][]string `yaml:"folds,omitempty"`
}

// SuiteSplit declares a task's split of its suite.
type SuiteSplit struct {
	// Stratify is the case-metadata column each of whose values keeps its
	// suite share of T_train, T_val and T_test.
	Stratify string `yaml:"stratify"`
}

// Model names a model and its settings.
type Model struct {
	// Name is a model kind ("bert", "wordvec") or a HuggingFace id.
	Name string `yaml:"name"`
	// Checkpoint is an optional directory or HuggingFace id to start from.
	Checkpoint string `yaml:"checkpoint,omitempty"`
	// Options are passed to the runner unchanged.
	Options map[string]any `yaml:"options,omitempty"`

	spelt map[string]string // canonical key → the spec's spelling (model.go)
}

// Budget bounds a run's training.
type Budget struct {
	Epochs   float64 `yaml:"epochs,omitempty" json:"epochs,omitempty"`
	MaxSteps int     `yaml:"max_steps,omitempty" json:"max_steps,omitempty"`
	MaxIID   int     `yaml:"max_iid,omitempty" json:"max_iid,omitempty"`     // i.i.d. training examples used, 0 = all
	MaxCases int     `yaml:"max_cases,omitempty" json:"max_cases,omitempty"` // suite test cases per functionality, 0 = all
	// FoldCap says where a metadata fold meets max_cases: FoldCapBefore
	// (the default, "" too) caps first, as the seen run does, and then
	// holds out the group, so the fold trains on the seen run's cases less
	// its group's; FoldCapAfter holds out first and caps the cases the
	// fold keeps, so it trains on as many cases per functionality as the
	// seen run where the functionality has them. Only a metadata fold's
	// runs with a cap differ (their run spec records
	// suite_limit_after_hold_out); a func, class or type fold removes
	// whole functionalities, the same cases either way.
	FoldCap string `yaml:"fold_cap,omitempty" json:"fold_cap,omitempty"`
}

// The values of budget.fold_cap.
const (
	FoldCapBefore = "before_hold_out"
	FoldCapAfter  = "after_hold_out"
)

// IsAxis says whether a swept field (a field path of the run spec, or its
// grid key) makes a different model: a method setting
// (train.SettingMethods), the training-set size, or any field but the
// epochs, batch sizes and learning rates of the phases — BeLUGA's search
// keys, whose values are replicates of one configuration × method, as
// seeds are.
func IsAxis(k string) bool {
	path, ok := gridKeys[k]
	if !ok {
		path = k
	}
	phase, setting, _ := strings.Cut(path, ".")
	switch phase {
	case "hyper", "iid_hyper", "probe_hyper":
		if setting == "epochs" || setting == "batch_size" || setting == "lr" {
			return false
		}
	}
	return true
}

// LoadSpec reads and validates an experiment spec from a YAML file.
func LoadSpec(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("experiment spec: %w", err)
	}
	s, err := ParseSpec(b)
	if err != nil {
		return nil, fmt.Errorf("experiment spec %s: %w", path, err)
	}
	// The spec's folder, absolute: the store and every path in the spec
	// are where they are whatever the working directory is later.
	if s.dir, err = filepath.Abs(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseSpec decodes and validates a YAML experiment spec. Unknown fields are
// errors so that a misspelt key does not silently change an experiment.
func ParseSpec(b []byte) (*Spec, error) {
	var s Spec
	if err := yamlpath.Decode(b, &s); err != nil {
		// folds: is a mapping by score; a list of names is the usual guess.
		var ye *yamlpath.Error
		if errors.As(err, &ye) && strings.HasSuffix(ye.Field, ".folds") && strings.Contains(ye.Msg, "want a mapping") {
			ye.Msg += ` (the folds to run per held-out score: folds: {func: [negation, typos], "meta:target_ident": [women]}; docs/experiment-spec.md)`
		}
		return nil, err
	}
	s.src = b // Validate names the line of a field at fault
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// fieldOf names where the spec sets a run setting (a field path of the run
// spec) at a grid point: the grid key and value that set it, else the
// budget or model option that does, with its line in the spec ("line 31:
// field grid.lr[0]"); "" when the spec sets it nowhere (the profile does).
func (s *Spec) fieldOf(point []setting, path string) string {
	where := s.where
	for _, st := range point {
		if gridPath(st.key) == path || (st.key == TrainSizeKey && path == "train_fraction") {
			i := slices.IndexFunc(s.Grid[st.key], func(v any) bool { return fmt.Sprint(v) == fmt.Sprint(st.value) })
			return where("grid", st.key, i)
		}
	}
	var tr train.RunSpec
	field, ok := s.setBudget(&tr)[path]
	if f, err := runSpecField(reflect.ValueOf(&tr).Elem(), path); !ok || err != nil || f.IsZero() {
		return "" // the profile's
	}
	var steps []any
	for _, k := range strings.Split(field, ".") {
		steps = append(steps, k)
	}
	return where(steps...)
}

// where names a field of the spec by its path — each step a mapping key
// or a list index — with its line: "line 31: field grid.lr[0]".
func (s *Spec) where(steps ...any) string {
	name := ""
	for _, st := range steps {
		switch x := st.(type) {
		case string:
			if name != "" {
				name += "."
			}
			name += x
		case int:
			name += fmt.Sprintf("[%d]", x)
		}
	}
	if line := yamlpath.Line(s.src, steps...); line > 0 {
		return fmt.Sprintf("line %d: field %s", line, name)
	}
	return "field " + name
}

// setBudget sets the run-spec settings the spec's budget and model options
// give and says, by field path, which spec field gives each: max_iid caps
// the i.i.d. training examples; max_cases bounds both the suite cases
// trained on and those scored, per functionality (a budget for quick runs,
// the quickstart's, whose pass rates then come from a subsample of
// T_test); epochs is every phase's unless the grid says otherwise.
func (s *Spec) setBudget(tr *train.RunSpec) map[string]string {
	tr.IIDLimit = s.Budget.MaxIID
	tr.SuiteLimit, tr.EvalLimit = s.Budget.MaxCases, s.Budget.MaxCases
	tr.MaxSteps = s.Budget.MaxSteps
	tr.Hyper.Epochs, tr.IIDHyper.Epochs = s.Budget.Epochs, s.Budget.Epochs
	tr.MaxLength = wholeNumber(s.Model.Options["max_length"])
	return map[string]string{
		"iid_limit": "budget.max_iid", "suite_limit": "budget.max_cases", "eval_limit": "budget.max_cases",
		"max_steps": "budget.max_steps", "hyper.epochs": "budget.epochs", "iid_hyper.epochs": "budget.epochs",
		"max_length": "model.options.max_length",
	}
}

// Validate checks names against the known configurations, methods and scores
// and fills defaults (scores: all four; seeds: 42; out: runs/NAME).
func (s *Spec) Validate() error {
	if len(s.Tasks) == 0 {
		return errors.New("field tasks: at least one task is required")
	}
	seen := map[string]bool{}
	for i, t := range s.Tasks {
		if t.Name == "" {
			return fmt.Errorf("field tasks[%d].name: required", i)
		}
		if seen[t.Name] {
			return fmt.Errorf("field tasks[%d].name: duplicate task %q", i, t.Name)
		}
		seen[t.Name] = true
		for score := range t.Folds {
			if _, ok := FoldKindOf(score); !ok {
				return fmt.Errorf("field tasks[%d].folds: unknown score %q (want func, class, type or meta:COLUMN)", i, score)
			}
		}
		if _, err := t.declaration(fmt.Sprintf("tasks[%d]", i)); err != nil {
			if le := (*datasets.LabelError)(nil); errors.As(err, &le) {
				return fmt.Errorf("%s: %s", s.where("tasks", i, "suite_labels", le.Key), le.Msg)
			}
			return err
		}
		if len(t.Eval) > 0 && t.kind() == train.KindSpan {
			return fmt.Errorf("field tasks[%d].eval: task %s is a span task, scored on its test half only; evaluation sets are classification data", i, t.Name)
		}
		if err := train.ValidateEvalSets(t.Eval, fmt.Sprintf("tasks[%d].eval", i)); err != nil {
			return fmt.Errorf("field %w", err)
		}
	}
	if s.Model.Name == "" {
		return fmt.Errorf("field %s: required (bert, bert-tiny or wordvec)", s.Model.field("kind"))
	}
	var configs []string
	for i, c := range s.Configurations {
		// Either spelling (IID-IID+T or train's iid-(iid+t)), any case.
		tc, err := train.LookupConfiguration(c)
		if err != nil {
			return fmt.Errorf("field configurations[%d]: unknown configuration %q (want %s, or IID for the baseline alone)", i, c, strings.Join(Configurations, ", "))
		}
		for _, t := range s.Tasks {
			if tc.UsesIID() && !t.hasIID() {
				uses := "trains on"
				if tc.Prompt {
					uses = "draws demonstrations from"
				}
				return fmt.Errorf("field configurations[%d]: %s %s i.i.d. data, which task %s does not have (declare its train and dev files, or run configuration T only)", i, c, uses, t.Name)
			}
		}
		if tc.Prompt && s.Prompt == nil {
			return fmt.Errorf("field configurations[%d]: %s asks a language model: set prompt (its model or endpoint, templates and verbalizers)", i, c)
		}
		if tc.Name == train.ConfigIID {
			continue // the baseline, always run: [IID] asks for it alone
		}
		configs = append(configs, tc.Display)
	}
	if s.Configurations != nil {
		s.Configurations = configs
	}
	if b := strings.Fields(s.Baseline); len(b) > 0 && !strings.EqualFold(b[0], "none") {
		config, _, _ := strings.Cut(b[0], ":")
		if _, err := train.ParseConfiguration(config); err != nil {
			return fmt.Errorf("field baseline: %q does not start with a configuration (want e.g. \"IID train_size=4000\", \"IID+T: L2\" or none)", s.Baseline)
		}
	}
	for i, m := range s.Methods {
		if _, ok := train.LookupMethod(m); !ok {
			return fmt.Errorf("field methods[%d]: unknown method %q (want one of %s)", i, m, strings.Join(train.MethodNames(), ", "))
		}
	}
	if len(s.Configurations) > 0 && len(s.Methods) == 0 {
		s.Methods = []string{"vanilla"}
	}
	if len(s.Scores) == 0 {
		s.Scores = slices.Clone(Scores)
	}
	for i, sc := range s.Scores {
		if !slices.Contains(Scores, sc) && !IsMetaScore(sc) {
			return fmt.Errorf("field scores[%d]: unknown score %q (want one of %s, or meta:COLUMN to hold out each value of a case-metadata column)", i, sc, strings.Join(Scores, ", "))
		}
		if slices.Contains(s.Scores[:i], sc) {
			return fmt.Errorf("field scores[%d]: score %q listed twice", i, sc)
		}
		if IsMetaScore(sc) {
			for _, t := range s.Tasks {
				if t.kind() == train.KindSpan {
					return fmt.Errorf("field scores[%d]: %s: task %s is a span task, which holds out whole functionalities only (func, class, type)", i, sc, t.Name)
				}
			}
		}
	}
	if s.Seeds != nil && len(s.Seeds) == 0 {
		return errors.New("field seeds: an empty list runs nothing (leave it out for BeLUGA's seed 42)")
	}
	if len(s.Seeds) == 0 {
		s.Seeds = []int64{42}
	}
	for field, v := range map[string]int{"budget.max_iid": s.Budget.MaxIID, "budget.max_cases": s.Budget.MaxCases, "budget.max_steps": s.Budget.MaxSteps} {
		if v < 0 {
			return fmt.Errorf("field %s: %d must not be negative (0 means no limit)", field, v)
		}
	}
	if c := s.Budget.FoldCap; c != "" && c != FoldCapBefore && c != FoldCapAfter {
		return fmt.Errorf("field budget.fold_cap: %q is neither %s (the default: the seen run's capped cases less the fold's) nor %s (the cap over the cases the fold keeps)", c, FoldCapBefore, FoldCapAfter)
	}
	if s.Budget.Epochs < 0 {
		return fmt.Errorf("field budget.epochs: %v must not be negative", s.Budget.Epochs)
	}
	profile, err := train.LookupProfile(s.Profile)
	if err != nil {
		return fmt.Errorf("field profile: %w", err)
	}
	if s.Search != nil {
		if err := s.Search.fill(profile); err != nil {
			return err
		}
	}
	for i, c := range s.Corrections {
		if _, ok := train.Corrections[c]; !ok && c != CorrectLPFTProbe {
			return fmt.Errorf("field corrections[%d]: unknown correction %q (known: %s)", i, c, strings.Join(slices.Sorted(maps.Keys(train.Corrections)), ", "))
		}
	}
	for k, vs := range s.Grid {
		if len(vs) == 0 {
			return fmt.Errorf("field grid.%s: empty list of values", k)
		}
	}
	if s.Out == "" {
		name := s.Name
		if name == "" {
			name = "experiment"
		}
		s.Out = filepath.Join("runs", name)
	}
	if _, err := canonicalJSON(s.Model.Options); err != nil {
		return fmt.Errorf("field model.options: %w", err)
	}
	if _, err := canonicalJSON(s.Grid); err != nil {
		return fmt.Errorf("field grid: %w", err)
	}
	// A search chooses the suite phase's epochs, batch size and learning
	// rate (and LP-FT's probing ones): grid values for them would set
	// nothing but a label.
	if s.Search != nil {
		for _, k := range slices.Sorted(maps.Keys(s.Grid)) {
			if p := gridPath(k); !IsAxis(p) && (strings.HasPrefix(p, "hyper.") || strings.HasPrefix(p, "probe_hyper.")) {
				return fmt.Errorf("field grid.%s: with a search grid the searches choose %s; give its values in search:, or leave the key out", k, p)
			}
		}
	}
	// One field, one key: lr and hyper.lr are one setting.
	set := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(s.Grid)) {
		path := k
		if p, ok := gridKeys[k]; ok {
			path = p
		}
		if prev, ok := set[path]; ok {
			return fmt.Errorf("field grid.%s: sets %s, as grid.%s does: give one of them", k, path, prev)
		}
		set[path] = k
	}
	return nil
}

// OutDir is the run store directory, resolved against the spec file's directory.
func (s *Spec) OutDir() string {
	if filepath.IsAbs(s.Out) || s.dir == "" {
		return s.Out
	}
	return filepath.Join(s.dir, s.Out)
}

// resolve makes a path in the spec relative to the spec file's directory
// (a spec parsed from bytes: the working directory), whatever directory
// the command runs in: the one rule for every path in a spec. A value that
// names no file there is returned as it is — a dataset or hub name — unless
// it looks like a file, which is then named where it was looked for.
func (s *Spec) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	q := filepath.Join(s.dir, p)
	if _, err := os.Stat(q); err == nil || looksLikeFile(p) && !hubLike(p) {
		return ShortPath(q)
	}
	return p
}

// ShortPath is a path as messages show it: relative to the working
// directory when it lies there or beside it (../shared/data/…), else
// absolute. A run's records hold absolute paths.
func ShortPath(p string) string {
	wd, err := os.Getwd()
	if err != nil || !filepath.IsAbs(p) {
		return p
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil || strings.HasPrefix(rel, ".."+string(filepath.Separator)+"..") {
		return p
	}
	return rel
}

// hubLike says whether a value that names no file could be a hub id
// (org/name), which resolves through the hub cache rather than the spec's
// directory.
func hubLike(p string) bool {
	org, name, ok := strings.Cut(p, "/")
	return ok && org != "" && name != "" && !strings.Contains(name, "/") && !strings.HasPrefix(org, ".") && filepath.Ext(name) == ""
}

// CheckFolds refuses a held-out score whose folds cannot measure
// generalisation: a fold that withholds every functionality of the suite
// that has test cases (type hold-out on a one-type suite, func hold-out on a
// one-functionality suite, class hold-out on a one-class suite). Its run
// would train on no suite data at all — under configuration T on nothing,
// failing with "no training data"; with i.i.d. data it would score the
// i.i.d. model again and report that as generalisation.
func CheckFolds(s *suites.Suite, score string) error {
	kind, ok := FoldKindOf(score)
	if !ok {
		return nil
	}
	if col, ok := kind.MetaColumn(); ok {
		return checkMetaFolds(s, score, col)
	}
	var withCases []string
	for _, f := range s.Functionalities {
		if len(f.Cases) > 0 {
			withCases = append(withCases, f.Name)
		}
	}
	for _, fd := range splits.Folds(s, kind, splits.DefaultFoldOptions) {
		left := 0
		for _, n := range withCases {
			if !slices.Contains(fd.Removed, n) {
				left++
			}
		}
		if left > 0 {
			continue
		}
		info, _ := LookupScore(score)
		what := info.Unit
		return fmt.Errorf("score %s: fold %q holds out every functionality (%d) of suite %s, which has one %s, leaving no suite data to train on: a degenerate fold measures nothing; remove %s from scores", score, fd.Name, len(withCases), s.Name, what, score)
	}
	return nil
}

// checkMetaFolds refuses a metadata partition that cannot measure
// generalisation: a column no case has, or a fold that withholds every
// case the suite trains on (a column with one value), leaving its run
// nothing to train on.
func checkMetaFolds(s *suites.Suite, score, col string) error {
	folds := splits.Folds(s, splits.ByMeta(col), splits.DefaultFoldOptions)
	if len(folds) == 0 {
		return fmt.Errorf("score %s: no case of suite %s has a value in meta column %q (cases' meta: docs/suite-format.md)", score, s.Name, col)
	}
	for _, fd := range folds {
		left := 0
		for _, f := range s.Functionalities {
			for _, c := range f.Cases {
				if !fd.HoldsOut(f, c) {
					left++
				}
			}
		}
		if left == 0 {
			return fmt.Errorf("score %s: fold %q holds out every case of suite %s, whose meta column %q has one value, leaving no suite data to train on: a degenerate fold measures nothing; remove %s from scores", score, fd.Name, s.Name, col, score)
		}
	}
	return nil
}

// FoldsOf returns the held-out folds of a suite for a score, in suite
// order: BeLUGA's partitions (package splits), named by the held-out
// functionality, class or test type, or a metadata column's values in
// order of first appearance.
func FoldsOf(s *suites.Suite, score string) []string {
	kind, ok := FoldKindOf(score)
	if !ok {
		return nil
	}
	var out []string
	for _, f := range splits.Folds(s, kind, splits.DefaultFoldOptions) {
		out = append(out, f.Name)
	}
	return out
}

// heldOutScores are the scores whose folds Expand lists: every one but seen,
// none without a configuration to train.
func (s *Spec) heldOutScores() []string {
	if len(s.Configurations) == 0 {
		return nil
	}
	var out []string
	for _, sc := range s.Scores {
		if sc != ScoreSeen {
			out = append(out, sc)
		}
	}
	return out
}
