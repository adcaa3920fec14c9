package experiments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/train"
)

// TaskDecl is a declared task as its runs train it: its kind, the
// classification task (labels and how suites map onto them; nothing for a
// span task) and its i.i.d. files.
type TaskDecl struct {
	Kind train.Kind
	train.Task
	Train *datasets.FileSpec
	Dev   *datasets.FileSpec
}

// BuiltinTask is one of BeLUGA's tasks: package train's table holds them
// (train.Builtins), with their kinds and declarations, once.
type BuiltinTask = train.Builtin

// BuiltinTasks are BeLUGA's tasks in BeLUGA's order (train.Builtins).
var BuiltinTasks = train.Builtins

// LookupBuiltinTask returns the built-in task a spec's task name denotes,
// in either spelling, and its rank in BeLUGA's order.
func LookupBuiltinTask(name string) (BuiltinTask, int, bool) {
	return train.LookupBuiltin(name)
}

// trainTaskName is package train's name of a built-in task, "" for
// another.
func trainTaskName(name string) string {
	t, _, _ := LookupBuiltinTask(name)
	return t.Train
}

// builtinTaskNames lists the spellings of the built-in tasks, sorted.
func builtinTaskNames() []string {
	var names []string
	for _, t := range BuiltinTasks {
		names = append(names, t.Name, t.Train)
	}
	slices.Sort(names)
	return names
}

// hasIID says whether the task has i.i.d. training data: a declared task
// when it names a training file; any other (a built-in task, or one a
// runner of its own knows) is taken to have it.
func (t Task) hasIID() bool {
	return !t.declared() || t.Train != nil
}

func (t Task) declared() bool {
	return t.Kind != "" || len(t.Labels) > 0 || t.Input != "" || t.SuiteLabels != nil || t.MFTLoss != "" || t.ClassWeights != nil || t.Metrics != nil || t.Train != nil || t.Dev != nil
}

// kind is the task's kind: a built-in task's own (READ: span), else the
// one it declares, classification by default (Validate refuses others).
func (t Task) kind() train.Kind {
	if b, _, ok := LookupBuiltinTask(t.Name); ok {
		return (&train.RunSpec{Task: b.Train}).ResolvedKind()
	}
	if k, err := train.ParseKind(t.Kind); err == nil && k != "" {
		return k
	}
	return train.KindClassification
}

// declaration returns a declared task's declaration, nil for a task that
// declares nothing (a built-in task, or one its runner knows: TrainRunner
// refuses others), or an error naming the spec field at fault (field is
// the task's path, e.g. tasks[2]).
func (t Task) declaration(field string) (*TaskDecl, error) {
	if b, _, ok := LookupBuiltinTask(t.Name); ok {
		if t.declared() {
			return nil, fmt.Errorf("field %s: task %s is built in (%s): declare a task of your own under another name", field, t.Name, b.Train)
		}
		return nil, nil
	}
	if !t.declared() {
		return nil, nil
	}
	kind, err := train.ParseKind(t.Kind)
	if err != nil {
		return nil, fmt.Errorf("field %s.kind: %w", field, err)
	}
	if kind == train.KindSpan {
		return t.spanDeclaration(field)
	}
	if len(t.Labels) == 0 {
		return nil, fmt.Errorf("field %s.labels: a declared task needs its labels", field)
	}
	if t.Data != "" {
		return nil, fmt.Errorf("field %s.data: a declared task reads its i.i.d. data from train and dev (files with their columns)", field)
	}
	d := &TaskDecl{Kind: train.KindClassification, Task: train.Task{Name: t.Name, Labels: t.Labels, MFTLoss: t.MFTLoss, Metrics: t.Metrics, ClassWeights: t.ClassWeights}}
	switch t.Input {
	case "", "text":
	case "pair":
		d.Pair = true
	default:
		return nil, fmt.Errorf("field %s.input: %q (want text or pair)", field, t.Input)
	}
	if d.MFTLoss == "" {
		d.MFTLoss = "ce"
	}
	if len(t.SuiteLabels) > 0 {
		d.SuiteLabels = map[string][]float64{}
	}
	for k, v := range t.SuiteLabels {
		y := make([]float64, len(t.Labels))
		switch x := v.(type) {
		case string:
			c := slices.Index(t.Labels, x)
			if c < 0 {
				return nil, fmt.Errorf("field %s.suite_labels.%s: %q is not one of the task's labels (%s)", field, k, x, strings.Join(t.Labels, ", "))
			}
			y[c] = 1
		case []any:
			if len(x) != len(t.Labels) {
				return nil, fmt.Errorf("field %s.suite_labels.%s: %d probabilities for %d labels", field, k, len(x), len(t.Labels))
			}
			for i, p := range x {
				switch n := p.(type) {
				case int:
					y[i] = float64(n)
				case float64:
					y[i] = n
				default:
					return nil, fmt.Errorf("field %s.suite_labels.%s[%d]: %v is not a number", field, k, i, p)
				}
			}
		default:
			return nil, fmt.Errorf("field %s.suite_labels.%s: want a label name or a list of probabilities, not %v", field, k, v)
		}
		d.SuiteLabels[k] = y
	}
	if err := d.Task.Validate(); err != nil {
		return nil, fmt.Errorf("field %s: %w", field, err)
	}
	split := t.Train != nil && t.Train.Split != nil
	if t.Train != nil && t.Dev == nil && !split {
		return nil, fmt.Errorf("field %s.dev: a task that trains on i.i.d. data is scored on its dev (or test) file: set dev, or split the training file (train.split: {dev: …, test: …})", field)
	}
	if split && t.Dev != nil {
		return nil, fmt.Errorf("field %s.dev: a split training file gives the dev and test parts itself: leave dev out", field)
	}
	if t.Dev != nil && t.Dev.Split != nil {
		return nil, fmt.Errorf("field %s.dev.split: only the training file is split", field)
	}
	if t.Train != nil && t.Dev != nil && t.Train.Path != "" && t.Train.Path == t.Dev.Path {
		return nil, errDevIsTrain(field, t.Dev.Path)
	}
	for _, nf := range t.files() {
		name, f := nf.name, nf.f
		if f == nil {
			continue
		}
		if f.Path == "" {
			return nil, fmt.Errorf("field %s.%s.path: required", field, name)
		}
		if len(f.Labels.Names) > 0 && !slices.Equal(f.Labels.Names, t.Labels) {
			return nil, fmt.Errorf("field %s.%s.labels: %q differ from the task's labels %q (leave them out, or map the file's labels onto the task's: labels: {FILE_LABEL: TASK_LABEL})", field, name, f.Labels.Names, t.Labels)
		}
		if name == "train" && f.Halve {
			return nil, fmt.Errorf("field %s.train.halve: only the dev file is halved", field)
		}
		g := *f
		g.Labels.Names = slices.Clone(t.Labels)
		if f.Split != nil {
			if err := f.Split.Validate(fmt.Sprintf("field %s.%s.split", field, name), -1); err != nil {
				return nil, err
			}
			// The seed is recorded in the run spec even when the default.
			sp := *f.Split
			seed := sp.SeedOrDefault()
			sp.Seed = &seed
			g.Split = &sp
		}
		if name == "train" {
			d.Train = &g
		} else {
			d.Dev = &g
		}
	}
	return d, nil
}

// spanDeclaration is a declared span task's declaration: SQuAD-format
// train and dev files by their paths alone (the dev file is halved into
// validation and i.i.d. test, as READ's is), and nothing of a
// classification task's.
func (t Task) spanDeclaration(field string) (*TaskDecl, error) {
	switch {
	case len(t.Labels) > 0 || t.Input != "" || t.SuiteLabels != nil || t.MFTLoss != "" || t.ClassWeights != nil || t.Metrics != nil:
		return nil, fmt.Errorf("field %s.kind: a span task predicts answer spans: it declares no labels, input, suite_labels, mft_loss, class_weights or metrics", field)
	case t.Data != "":
		return nil, fmt.Errorf("field %s.data: a declared span task reads its SQuAD-format files from train and dev (path:)", field)
	case t.Train == nil || t.Dev == nil:
		return nil, fmt.Errorf("field %s: a span task trains and is scored on SQuAD-format files: set train and dev (path:)", field)
	}
	d := &TaskDecl{Kind: train.KindSpan, Task: train.Task{Name: t.Name}}
	for _, nf := range t.files() {
		name, f := nf.name, nf.f
		if f.Path == "" {
			return nil, fmt.Errorf("field %s.%s.path: required", field, name)
		}
		if !reflect.DeepEqual(*f, datasets.FileSpec{Path: f.Path}) {
			return nil, fmt.Errorf("field %s.%s: a SQuAD-format file is named by its path alone", field, name)
		}
	}
	d.Train, d.Dev = &datasets.FileSpec{Path: t.Train.Path}, &datasets.FileSpec{Path: t.Dev.Path}
	return d, nil
}

// checkTrainable refuses, for TrainRunner, a task that is neither built in
// nor declared.
func (t Task) checkTrainable(field string) error {
	if _, _, ok := LookupBuiltinTask(t.Name); ok || t.declared() {
		return nil
	}
	return fmt.Errorf("field %s.labels: task %q is not built in (%s): declare it with its labels", field, t.Name, strings.Join(builtinTaskNames(), ", "))
}

// CheckSuites refuses, before any run starts, a suite its classification
// task cannot train on or be scored with (train.Task.CheckSuite): labels
// the task does not know, pairs where it reads single texts. Otherwise
// every run of the sweep would fail with the same error.
func (r *TrainRunner) CheckSuites(ctx context.Context, s *Spec) error {
	for i, t := range s.Tasks {
		field := fmt.Sprintf("tasks[%d]", i)
		decl, err := t.declaration(field)
		if err != nil {
			return err
		}
		var task *train.Task
		switch {
		case decl != nil && decl.Kind == train.KindSpan:
			continue // answer spans: no labels to check
		case decl != nil:
			task = &decl.Task
		case train.BuiltinTasks[trainTaskName(t.Name)] != nil:
			task = train.BuiltinTasks[trainTaskName(t.Name)]
		default:
			continue // not a classification task this check knows
		}
		// A suite found fit for the task before (its digest and the
		// task's declaration the same) is not read again.
		in := r.inputs()
		key, kerr := canonicalJSON(task)
		value := s.resolve(t.Suite)
		if _, opened := in.opened[value]; !opened && kerr == nil {
			if path, err := ResolveSuite(ctx, in.Data, value); err == nil && in.digests().checked(path, checkKey(key)) {
				continue
			}
		}
		suite, path, err := in.Suite(ctx, value)
		if err != nil {
			return fmt.Errorf("field %s.suite: %w", field, err)
		}
		if err := task.CheckSuite(suite); err != nil {
			return fmt.Errorf("field %s.suite: %s: %w", field, path, err)
		}
		if kerr == nil {
			in.digests().setChecked(path, checkKey(key))
		}
	}
	return nil
}

// checkKey names a task declaration a suite was found fit for, after the
// version of the check (train.Task.CheckSuite): change it with the check.
func checkKey(task []byte) string {
	sum := sha256.Sum256(task)
	return "1/" + hex.EncodeToString(sum[:8])
}

// declFile is a declared task's training (or dev) file; nil for a task
// that declares none.
func declFile(decl *TaskDecl, training bool) *datasets.FileSpec {
	switch {
	case decl == nil:
		return nil
	case training:
		return decl.Train
	}
	return decl.Dev
}

// CheckInputs reads the i.i.d. files of the spec's declared tasks before
// any run starts (train.CheckIIDFiles): what every run would refuse is
// refused once, with its file and line, and the texts the i.i.d. parts
// share are reported. Tasks without files (built-in tasks, T alone) have
// nothing to read here; their runs check their inputs as they start.
func (s *Spec) CheckInputs() (*inputcheck.Report, error) {
	all := &inputcheck.Report{}
	for i, t := range s.Tasks {
		field := fmt.Sprintf("tasks[%d]", i)
		decl, err := t.declaration(field)
		if err != nil {
			return nil, err
		}
		evals := s.evalSets(t)
		var rs train.RunSpec
		switch {
		case decl != nil && decl.Kind == train.KindSpan:
			continue // SQuAD-format files: read as questions by its runs
		case decl != nil && (decl.Train != nil || decl.Dev != nil || len(evals) > 0):
			rs = train.RunSpec{Task: decl.Name, TaskDef: &decl.Task, Configuration: train.ConfigIID}
		case decl == nil && len(evals) > 0 && train.BuiltinTasks[trainTaskName(t.Name)] != nil:
			// A built-in task's own files are read as its runs start; its
			// evaluation sets are checked here.
			rs = train.RunSpec{Task: trainTaskName(t.Name), Configuration: train.ConfigT}
		default:
			continue
		}
		rs.IIDEval = evals
		for _, f := range []struct {
			decl *datasets.FileSpec
			to   **datasets.FileSpec
		}{{declFile(decl, true), &rs.IIDTrainFile}, {declFile(decl, false), &rs.IIDDevFile}} {
			if f.decl != nil {
				g := *f.decl
				g.Path = s.resolve(g.Path)
				*f.to = &g
			}
		}
		if rs.IIDTrainFile == nil {
			rs.Configuration = train.ConfigT
		}
		// One file under two spellings (./a.csv, a link): said in the
		// spec's words, as the same spelling twice is (declaration).
		if rs.IIDTrainFile != nil && rs.IIDDevFile != nil && inputcheck.SameFile(rs.IIDTrainFile.Path, rs.IIDDevFile.Path) {
			return nil, errDevIsTrain(field, decl.Dev.Path)
		}
		r, err := train.CheckIIDFiles(rs)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", field, err)
		}
		all.Overlaps = append(all.Overlaps, r.Overlaps...)
		all.Findings = append(all.Findings, r.Findings...)
		all.Parts = append(all.Parts, r.Parts...)
		all.Labels = append(all.Labels, r.Labels...)
	}
	return all, nil
}

// errDevIsTrain refuses a task whose dev file is its training file.
func errDevIsTrain(field, dev string) error {
	return fmt.Errorf("field %s.dev.path: %s is also the training file: every evaluated row would be a training row; split it instead (train.split: {dev: …, test: …})", field, dev)
}

// namedFile is a task's train or dev file with its field's name.
type namedFile struct {
	name string
	f    *datasets.FileSpec
}

// files are the task's train and dev files in that order, so that of two
// bad files the error always names the training file (a map's order
// named either).
func (t Task) files() []namedFile {
	return []namedFile{{"train", t.Train}, {"dev", t.Dev}}
}
