package train

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

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
	return asKindRun(prepare(ctx, spec))
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
	p, err := spec.openClassRun()
	if err != nil {
		return nil, err
	}
	suite, fold := p.suite, p.fold
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

// openClassRun starts a classification run, trained or prompted: its
// suite, held-out fold and task. A suite the task cannot train on or score
// is refused before the model loads or any data is read.
func (s *RunSpec) openClassRun() (*classRun, error) {
	suite, fold, err := s.openSuite()
	if err != nil {
		return nil, err
	}
	p := &classRun{suite: suite, fold: fold}
	if p.task, err = s.task(); err != nil {
		return nil, err
	}
	if err := p.task.CheckSuite(suite); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Suite, err)
	}
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
