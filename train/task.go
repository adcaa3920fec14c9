package train

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/suites"
)

// Task declares a classification task: the classes the model predicts,
// whether it reads single texts or pairs, how a suite's labels become
// training targets and predictions become suite verdicts, and how the
// i.i.d. data is scored. BeLUGA's SENT and PARA are the built-in tasks
// sentiment and qqp (BuiltinTasks); any other is declared in a spec.
type Task struct {
	// Name identifies the task (sentiment, qqp, or a declared name).
	Name string `json:"name" yaml:"name"`
	// Labels are the model's classes in index order (at least two).
	Labels []string `json:"labels" yaml:"labels"`
	// Pair says inputs are text pairs (PARA); otherwise single texts.
	Pair bool `json:"pair,omitempty" yaml:"pair,omitempty"`
	// SuiteLabels maps a suite's training labels onto soft targets over
	// Labels (one probability per class). A key is a suite label's name, its
	// index as the suite stores it, or a training label of the suite format
	// such as BeLUGA's not_0. A suite label that is missing here trains as
	// the one-hot target of the task label of the same name.
	SuiteLabels map[string][]float64 `json:"suite_labels,omitempty" yaml:"suite_labels,omitempty"`
	// MFTLoss is the loss of suite MFT rows and of the i.i.d. rows mixed
	// with them: "bce" (BeLUGA's sigmoid BCE, HuggingFace's
	// multi_label_classification) or "ce" (softmax cross-entropy). The IID
	// baseline always trains with "ce", as BeLUGA's does.
	MFTLoss string `json:"mft_loss" yaml:"mft_loss"`
	// Metrics are i.i.d. test metrics recorded beside accuracy: macro_f1
	// and (for two classes, the second class positive) f1. Accuracy is the
	// i.i.d. score of every task, the one G is the harmonic mean of and
	// the reports' significance tests pair per example, as in BeLUGA.
	Metrics []string `json:"metrics,omitempty" yaml:"metrics,omitempty"`
	// ClassWeights, when set, weights the softmax cross-entropy of i.i.d.
	// and MFT rows per gold class (balanced or explicit; needs mft_loss:
	// ce). Unset keeps the unweighted losses and the runs' IDs.
	ClassWeights *ClassWeights `json:"class_weights,omitempty" yaml:"class_weights,omitempty"`

	// read reads a built-in task's registered i.i.d. files.
	read func(path string) ([]datasets.Example, error)
	// labelDIR trains DIR functionalities whose direction is "label" as
	// labelled pairs (QQP, REFERENCE 1.5).
	labelDIR bool
	// searchObjective is BeLUGA's hyper-parameter search objective of the
	// task ("sentiment", "qqp"; others: generic).
	searchObjective string
}

// Builtin is one of BeLUGA's tasks, in the one table of them (Builtins):
// its names, its kind, its classification declaration, and where its data
// live in the data cache.
type Builtin struct {
	// Name is Table 3's (SENT, PARA, READ); Train is a run spec's
	// (sentiment, qqp, squad). A sweep spec may use either.
	Name, Train string
	// Kind is what its runs do (classification or span).
	Kind Kind
	// Task declares a classification task's classes, suite labels, loss
	// and readers; nil for the span task.
	Task *Task
	// IIDFiles are the i.i.d. train and dev files inside the task's
	// dataset (a data cache name or a directory); READ reads its own.
	IIDFiles [2]string
	// Suite is the data cache name of the task's CheckList release suite.
	Suite string
}

// Builtins are BeLUGA's tasks in BeLUGA's order (sentiment, QQP, SQuAD):
// the order of Table 3's columns, Figure 1's rows and the randomisation
// test's visits, which decides its p-values. Sentiment trains SST-2 and
// the CheckList sentiment suite (soft labels: neutral ½/½, not-negative
// ⅓/⅔; sigmoid BCE); QQP the CheckList QQP suite (one-hot labels, softmax
// CE, DIR cases with changed labels trained as labelled pairs).
var Builtins = []Builtin{
	{Name: "SENT", Train: "sentiment", Kind: KindClassification,
		IIDFiles: [2]string{"sst2/train.tsv", "sst2/dev.tsv"}, Suite: "checklist-sentiment",
		Task: &Task{
			Name:   "sentiment",
			Labels: []string{"negative", "positive"},
			SuiteLabels: map[string][]float64{
				"0": {1, 0}, "1": {0.5, 0.5}, "2": {0, 1}, "not_0": {1. / 3, 2. / 3},
			},
			MFTLoss: "bce", Metrics: []string{"accuracy"},
			read: datasets.ReadSST2, searchObjective: "sentiment",
		}},
	{Name: "PARA", Train: "qqp", Kind: KindClassification,
		IIDFiles: [2]string{"qqp/train.tsv", "qqp/dev.tsv"}, Suite: "checklist-qqp",
		Task: &Task{
			Name:        "qqp",
			Labels:      []string{"not duplicate", "duplicate"},
			Pair:        true,
			SuiteLabels: map[string][]float64{"0": {1, 0}, "1": {0, 1}},
			MFTLoss:     "ce", Metrics: []string{"accuracy"},
			read: datasets.ReadQQP, labelDIR: true, searchObjective: "qqp",
		}},
	{Name: "READ", Train: TaskRead, Kind: KindSpan, Suite: "checklist-squad"},
}

// LookupBuiltin returns the built-in task a name denotes, in either
// spelling, and its rank in BeLUGA's order.
func LookupBuiltin(name string) (Builtin, int, bool) {
	for i, t := range Builtins {
		if name == t.Name || name == t.Train {
			return t, i, true
		}
	}
	return Builtin{}, -1, false
}

// builtinKind is the kind of the built-in task a run spec names (by its
// run-spec name), and false for any other task.
func builtinKind(task string) (Kind, bool) {
	for _, t := range Builtins {
		if t.Train == task {
			return t.Kind, true
		}
	}
	return "", false
}

// BuiltinTasks are the built-in classification tasks by run-spec name: a
// view of Builtins.
var BuiltinTasks = func() map[string]*Task {
	m := map[string]*Task{}
	for _, t := range Builtins {
		if t.Task != nil {
			m[t.Train] = t.Task
		}
	}
	return m
}()

// IIDMetrics are the i.i.d. metrics a task can declare.
var IIDMetrics = []string{"accuracy", "macro_f1", "f1"}

// LookupTask returns the built-in task of a name.
func LookupTask(name string) (*Task, error) {
	if t, ok := BuiltinTasks[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("unknown task %q: the built-in tasks are %s; declare others with labels (and, for training, i.i.d. data files)", name, strings.Join(slices.Sorted(maps.Keys(BuiltinTasks)), ", "))
}

// Validate checks a declaration.
func (t *Task) Validate() error {
	if t.Name == "" {
		return fmt.Errorf("task: name required")
	}
	if len(t.Labels) < 2 {
		return fmt.Errorf("task %s: labels %q: a task needs at least two label names", t.Name, t.Labels)
	}
	seen := map[string]bool{}
	for i, l := range t.Labels {
		if l == "" {
			return fmt.Errorf("task %s: labels[%d] is empty", t.Name, i)
		}
		if seen[l] {
			return fmt.Errorf("task %s: label %q twice", t.Name, l)
		}
		seen[l] = true
	}
	soft := datasets.LabelMap{}
	for k, y := range t.SuiteLabels {
		soft[k] = datasets.Target{Probs: append([]float64{}, y...)}
	}
	if _, err := soft.Targets(t.Labels, "task "+t.Name); err != nil {
		var le *datasets.LabelError
		if errors.As(err, &le) {
			le.Field = "task " + t.Name + ": suite_labels"
		}
		return err
	}
	switch t.MFTLoss {
	case "bce", "ce":
	case "":
		return fmt.Errorf("task %s: mft_loss required (bce: BeLUGA's sigmoid BCE, or ce: softmax cross-entropy)", t.Name)
	default:
		return fmt.Errorf("task %s: mft_loss %q (want bce or ce)", t.Name, t.MFTLoss)
	}
	if t.ClassWeights != nil {
		if err := t.ClassWeights.validate(t); err != nil {
			return err
		}
	}
	for i, m := range t.Metrics {
		if !slices.Contains(IIDMetrics, m) {
			return fmt.Errorf("task %s: metrics[%d]: unknown metric %q (want %s)", t.Name, i, m, strings.Join(IIDMetrics, ", "))
		}
		if m == "f1" && len(t.Labels) != 2 {
			return fmt.Errorf("task %s: metrics[%d]: f1 is for two classes; use macro_f1", t.Name, i)
		}
	}
	return nil
}

// metrics returns accuracy and the declared metrics.
func (t *Task) metrics() []string {
	out := []string{"accuracy"}
	for _, m := range t.Metrics {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// target returns the training target of a suite training label: a class
// index as the suite stores it, or a training label such as not_0.
func (t *Task) target(s *suites.Suite, label string) ([]float64, error) {
	if y, ok := t.SuiteLabels[label]; ok {
		return y, nil
	}
	name := label
	if i, err := strconv.Atoi(label); err == nil && i >= 0 && i < len(s.Labels) {
		name = s.Labels[i]
	}
	if y, ok := t.SuiteLabels[name]; ok {
		return y, nil
	}
	if c := slices.Index(t.Labels, name); c >= 0 {
		y := make([]float64, len(t.Labels))
		y[c] = 1
		return y, nil
	}
	return nil, fmt.Errorf("suite label %q is not a label of task %s (%s) and suite_labels does not map it", name, t.Name, strings.Join(t.Labels, ", "))
}

// squash says whether predictions are scored as CheckList scores a
// 2-class sentiment model on its 3-class suite, squashed
// (pred_and_softmax), and then which of the suite's two model_labels each
// task class is. The task's labels are the model_labels in any order,
// matched by name, as beluga test matches a model's classes.
func (t *Task) squash(s *suites.Suite) (modelLabel []int, ok bool) {
	if len(s.Labels) != 3 || len(s.ModelLabels) != 2 || len(t.Labels) != 2 {
		return nil, false
	}
	modelLabel = make([]int, 2)
	for c, l := range t.Labels {
		if modelLabel[c] = slices.Index(s.ModelLabels, l); modelLabel[c] < 0 {
			return nil, false
		}
	}
	return modelLabel, modelLabel[0] != modelLabel[1]
}

// suiteClasses maps each task class onto the suite's label of the same
// name, for scoring predictions against the suite's expectations.
func (t *Task) suiteClasses(s *suites.Suite) ([]int, error) {
	if len(s.Labels) == 0 {
		return nil, fmt.Errorf("suite %s has no class labels: task %s cannot be scored on it", s.Name, t.Name)
	}
	out := make([]int, len(t.Labels))
	for c, l := range t.Labels {
		out[c] = slices.Index(s.Labels, l)
		if out[c] < 0 {
			return nil, fmt.Errorf("suite %s labels (%s) do not include task %s's label %q: its predictions cannot be scored", s.Name, strings.Join(s.Labels, ", "), t.Name, l)
		}
	}
	return out, nil
}

// CheckSuite refuses, before anything trains, a suite the task cannot
// train on or be scored with: labels the task does not know, a class the
// suite cannot express, single texts where the task reads pairs (or the
// reverse). Errors name the suite, functionality and case.
func (t *Task) CheckSuite(s *suites.Suite) error {
	if k, ok := builtinKind(s.Task); ok && k == KindSpan {
		return fmt.Errorf("suite %s is a reading-comprehension suite (answers, not classes): task %s is a classification task", s.Name, t.Name)
	}
	if _, squashed := t.squash(s); !squashed {
		if _, err := t.suiteClasses(s); err != nil {
			return err
		}
	}
	for _, f := range s.Functionalities {
		if f.Train.Label != "" {
			if _, err := t.target(s, f.Train.Label); err != nil {
				return fmt.Errorf("suite %s functionality %q: training label: %w", s.Name, f.Name, err)
			}
		}
		for _, c := range f.Cases {
			for i, in := range c.Inputs {
				if in.IsPair != t.Pair {
					want := "single texts"
					if t.Pair {
						want = "text pairs"
					}
					return fmt.Errorf("suite %s functionality %q case %d input %d: task %s reads %s", s.Name, f.Name, c.ID, i, t.Name, want)
				}
			}
			for _, l := range c.Labels {
				if l.IsAnswer {
					return fmt.Errorf("suite %s functionality %q case %d: an answer label, but task %s is a classification task", s.Name, f.Name, c.ID, t.Name)
				}
				if l.Class < 0 || l.Class >= len(s.Labels) {
					return fmt.Errorf("suite %s functionality %q case %d: class %d outside the suite's labels (%s)", s.Name, f.Name, c.ID, l.Class, strings.Join(s.Labels, ", "))
				}
				if f.Train.Label == "" && trainsAsRows(f) {
					if _, err := t.target(s, strconv.Itoa(l.Class)); err != nil {
						return fmt.Errorf("suite %s functionality %q case %d: %w", s.Name, f.Name, c.ID, err)
					}
				}
			}
		}
	}
	return nil
}

// iidScores computes the declared i.i.d. metrics of predicted classes.
func (t *Task) iidScores(pred, gold []int) (map[string]float64, error) {
	out := map[string]float64{}
	for _, m := range t.metrics() {
		switch m {
		case "accuracy":
			out[m] = metrics.Accuracy(pred, gold)
		case "f1":
			out[m] = metrics.F1(pred, gold, 1)
		case "macro_f1":
			out[m] = metrics.MacroF1(pred, gold, len(t.Labels))
		default:
			return nil, fmt.Errorf("task %s: unknown metric %q", t.Name, m)
		}
	}
	return out, nil
}

// checkInputForm refuses examples that are not the task's form, text pairs
// or single texts; what names them in the message.
func (t *Task) checkInputForm(xs []datasets.Example, what string) error {
	for _, x := range xs {
		if x.IsPair != t.Pair {
			return fmt.Errorf("task %s reads %s, but %s does not", t.Name, map[bool]string{true: "text pairs", false: "single texts"}[t.Pair], what)
		}
	}
	return nil
}

// trainsAsRows says whether f's inputs train as labelled rows, each against
// its case's label (MFT), rather than as pairs.
func trainsAsRows(f *suites.Functionality) bool {
	tr, err := trainingOf(f)
	return err == nil && kinds[tr.Kind].rows != nil
}
