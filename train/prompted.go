package train

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/prompt"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// MethodPrompt is the method of every prompted run: prompting.
const MethodPrompt = "prompt"

// predictFunc predicts inputs: each output's probabilities in the task's
// label order, none (nil Probs) for an answer that names no label.
type predictFunc func(ctx context.Context, inputs []predict.Input) ([]predict.Output, error)

// predictor is how a classification run predicts: its prompts for a
// prompted run, else its model's forward pass.
func (p *classRun) predictor() (predictFunc, error) {
	if p.prompted != nil {
		return p.prompted.predict, nil
	}
	m, ok := p.model.(predict.Model)
	if !ok {
		return nil, fmt.Errorf("the model cannot run inference")
	}
	return func(ctx context.Context, in []predict.Input) ([]predict.Output, error) {
		return predict.RunContext(ctx, m, p.tk, in, 64)
	}, nil
}

// promptedRun is what a prompted run asks its model with.
type promptedRun struct {
	spec    *prompt.Spec
	labels  []string
	demos   []prompt.Demo
	scorer  prompt.Scorer
	options []string
	// unparsed counts the answers that named no label, by template.
	unparsed map[string]int
}

// predict asks the model about every input with every scored template; a
// run of several templates predicts the mean of their label
// probabilities, an input any template left unparsed counting as
// unparsed.
func (r *promptedRun) predict(ctx context.Context, inputs []predict.Input) ([]predict.Output, error) {
	templates := r.spec.Scored()
	sum := make([][]float64, len(inputs))
	unparsed := make([]bool, len(inputs))
	for _, t := range templates {
		prefix := t.Prefix(r.demos, r.options)
		reqs := make([]prompt.Request, len(inputs))
		for i, in := range inputs {
			pin := prompt.Input{Text: in.Text}
			if in.TextPair != nil {
				pin.Pair, pin.IsPair = *in.TextPair, true
			}
			reqs[i] = prompt.Request{Prefix: prefix, Context: t.Render(pin), Options: r.options}
		}
		answers, err := r.scorer.Score(ctx, reqs)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", t.Name, err)
		}
		for i, a := range answers {
			if a.Unparsed() {
				r.unparsed[t.Name]++
				unparsed[i] = true
				continue
			}
			probs := make([]float64, len(r.labels))
			if a.LogLik != nil {
				probs = prompt.Probs(a.LogLik)
			} else {
				probs[a.Label] = 1
			}
			if sum[i] == nil {
				sum[i] = make([]float64, len(probs))
			}
			for c, p := range probs {
				sum[i][c] += p / float64(len(templates))
			}
		}
	}
	out := make([]predict.Output, len(inputs))
	for i, s := range sum {
		if unparsed[i] {
			continue // unparsed: no probabilities, scored as a failure
		}
		out[i].Probs = make([]float32, len(s))
		for c, p := range s {
			out[i].Probs[c] = float32(p)
		}
	}
	return out, nil
}

// preparePrompted readies a prompted run: the suite, its fold, the task,
// the i.i.d. data it is scored on, the demonstration pool the fold
// allows, the demonstrations and the model.
func preparePrompted(ctx context.Context, spec RunSpec) (*classRun, error) {
	spec = spec.Effective()
	p, err := spec.openClassRun()
	if err != nil {
		return nil, err
	}
	suite, fold := p.suite, p.fold
	iid, err := spec.readIID(p.task)
	if err != nil {
		return nil, err
	}
	p.iidTest, p.evalSets = iid.test, iid.eval
	kept := trainPart(&spec, indices(len(iid.train)), func(i int) int { return iid.train[i].Label })
	p.trained = trainedRecord(spec, &iid, kept, suite, fold)
	config := spec.config()
	var pool []prompt.Demo
	if config.DemoIID {
		pool = append(pool, iidDemos(&iid, kept, p.task)...)
	}
	if config.DemoSuite {
		d, err := suiteDemos(spec.trainingSuite(suite, fold), fold, p.task)
		if err != nil {
			return nil, err
		}
		pool = append(pool, d...)
	}
	r := &promptedRun{spec: spec.Prompt, labels: p.task.Labels, options: spec.Prompt.Options(p.task.Labels), unparsed: map[string]int{}}
	chosen, err := prompt.Choose(pool, len(p.task.Labels), spec.Prompt.K, spec.Seed)
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", spec.Configuration, err)
	}
	for _, i := range chosen {
		r.demos = append(r.demos, pool[i])
	}
	if err := checkDemos(r.demos, suite, fold); err != nil {
		return nil, err
	}
	p.trained.Recipe += demoRecipe
	p.trained.Demonstrations = r.demos
	if r.demos == nil {
		p.trained.Demonstrations = []prompt.Demo{}
	}
	if r.scorer, err = newScorer(ctx, spec); err != nil {
		return nil, err
	}
	p.prompted = r
	return p, nil
}

// newScorer is the run's model: the endpoint its prompt spec names, its
// requests cached in the sweep's cache (RunSpec.Cache) unless the
// endpoint names a cache of its own; else the decoder it names, scored in
// process.
func newScorer(ctx context.Context, spec RunSpec) (prompt.Scorer, error) {
	if e := spec.Prompt.Endpoint; e != nil {
		c := *e
		if c.Cache == "" && spec.Cache != "" {
			c.Cache = filepath.Join(spec.Cache, "requests")
		}
		return prompt.NewClient(c), nil
	}
	lm, err := pretrained.LoadCausalLM(ctx, spec.Prompt.Model, pretrained.Options{Seed: spec.Seed})
	if err != nil {
		return nil, err
	}
	return &prompt.LocalScorer{LM: lm, ID: spec.Prompt.Model}, nil
}

// iidDemos are the i.i.d. training rows kept (positions kept) as
// demonstrations, each with its file line.
func iidDemos(d *iidData, kept []int, task *Task) []prompt.Demo {
	var file string
	var lines []int
	for k, part := range d.parts {
		if part.Name == "i.i.d. train" {
			file, lines = d.files[k], d.lines[k]
		}
	}
	out := make([]prompt.Demo, 0, len(kept))
	for _, i := range kept {
		x := d.train[i]
		dm := prompt.Demo{Input: prompt.Input{Text: x.Text, Pair: x.Pair, IsPair: x.IsPair}, Label: x.Label,
			LabelName: task.Labels[x.Label], Source: "i.i.d. train", File: filepath.Base(file)}
		if i < len(lines) {
			dm.Line = max(lines[i], -lines[i])
		}
		out = append(out, dm)
	}
	return out
}

// suiteDemos are the labelled inputs of the T_train cases fold keeps —
// BuildSuiteData's training rows (test types that train on labelled
// rows, MFT): one demonstration per input whose target is one task label
// (a soft target names none).
func suiteDemos(s *suites.Suite, fold *splits.Fold, task *Task) ([]prompt.Demo, error) {
	var out []prompt.Demo
	for _, f := range s.Functionalities {
		if fold != nil && fold.Remove(f) && !fold.ByMeta() {
			continue
		}
		tr, err := trainingOf(f)
		if err != nil {
			return nil, err
		}
		if kinds[tr.Kind].rows == nil {
			continue // compared inputs (INV, DIR): no label of their own
		}
		for c := range f.CasesIn(suites.SplitTrain) {
			if fold != nil && fold.HoldsOut(f, c) {
				continue
			}
			for i, in := range c.Inputs {
				y, err := task.rowTarget(s, f, c, i)
				if err != nil {
					return nil, err
				}
				k := oneHot(y)
				if k < 0 {
					continue
				}
				out = append(out, prompt.Demo{Input: prompt.Input{Text: in.Text, Pair: in.Pair, IsPair: in.IsPair}, Label: k,
					LabelName: task.Labels[k], Source: "suite T_train", Functionality: f.Name, Class: f.Class,
					Type: string(f.Type), Case: c.ID, InputIndex: i, Meta: string(c.Meta)})
			}
		}
	}
	return out, nil
}

// oneHot is the label a target puts all its mass on, -1 for a soft one.
func oneHot(y []float64) int {
	k := -1
	for c, v := range y {
		switch {
		case v == 1 && k < 0:
			k = c
		case v != 0:
			return -1
		}
	}
	return k
}

// checkDemos refuses a demonstration the fold holds out — a held-out
// functionality, class, type or metadata group — or one that is no
// T_train case of the suite: whatever drew it, it never enters a prompt.
func checkDemos(demos []prompt.Demo, s *suites.Suite, fold *splits.Fold) error {
	byName := map[string]*suites.Functionality{}
	for _, f := range s.Functionalities {
		byName[f.Name] = f
	}
	for i, d := range demos {
		if d.Source != "suite T_train" {
			continue
		}
		f := byName[d.Functionality]
		if f == nil {
			return fmt.Errorf("demonstration %d: functionality %q is not in suite %s", i+1, d.Functionality, s.Name)
		}
		for _, c := range f.Cases {
			if c.ID != d.Case {
				continue
			}
			if c.Split != suites.SplitTrain {
				return fmt.Errorf("demonstration %d: functionality %q case %d is in %s, not T_train", i+1, f.Name, c.ID, c.Split)
			}
			if fold != nil && fold.HoldsOut(f, c) {
				return fmt.Errorf("demonstration %d: functionality %q case %d is held out by fold %s=%s", i+1, f.Name, c.ID, fold.Kind, fold.Name)
			}
		}
	}
	return nil
}

// save writes what the run asked with into dir (its "model"): the prompt
// spec, the demonstrations and the unparsed answers per template.
func (r *promptedRun) save(dir string) error {
	return writeJSON(filepath.Join(dir, "prompt.json"), struct {
		Prompt         *prompt.Spec   `json:"prompt"`
		Scorer         string         `json:"scorer"`
		Demonstrations []prompt.Demo  `json:"demonstrations"`
		Unparsed       map[string]int `json:"unparsed"`
	}{r.spec, r.scorer.Identity(), r.demos, r.unparsed})
}

// validatePrompted checks what a prompted run reads: a classification
// task, its prompt spec against the task's labels, and the i.i.d. files
// it draws demonstrations from or is scored on.
func (s *RunSpec) validatePrompted() error {
	if s.ResolvedKind() != KindClassification {
		return fmt.Errorf("configuration %s: a prompted run classifies; task %s is of kind %s", s.Configuration, s.Task, s.ResolvedKind())
	}
	if err := s.kind().check(s); err != nil {
		return err
	}
	task, err := s.task()
	if err != nil {
		return err
	}
	// vanilla is beluga train's default method; any other would be
	// silently not applied.
	if s.Method != "" && s.Method != MethodPrompt && s.Method != "vanilla" {
		return fmt.Errorf("configuration %s prompts a language model and trains nothing: method %s does not apply (leave it out)", s.Configuration, s.Method)
	}
	if s.Prompt == nil {
		return fmt.Errorf("configuration %s asks a language model: set prompt (templates, verbalizers, model or endpoint)", s.Configuration)
	}
	if err := s.Prompt.Validate(task.Labels); err != nil {
		return err
	}
	config := s.config()
	if (config.DemoSuite || config.DemoIID) && s.Prompt.K == 0 {
		return fmt.Errorf("configuration %s draws demonstrations: set prompt.k (0-shot is configuration %s)", s.Configuration, ConfigPrompt)
	}
	if config.DemoIID && s.IIDTrain == "" && s.IIDTrainFile == nil {
		return fmt.Errorf("configuration %s draws demonstrations from the i.i.d. training data: set iid_train (or iid_train_file)", s.Configuration)
	}
	if err := ValidateEvalSets(s.IIDEval, "iid_eval"); err != nil {
		return err
	}
	return s.validateIIDFiles()
}

// effectivePrompted is Effective of a prompted run: what it asks — the
// prompt spec, the data its demonstrations are drawn from and it is
// scored on, the seed that draws them — and none of the training
// settings, which it does not read.
func (e RunSpec) effectivePrompted(config ConfigurationInfo) RunSpec {
	if e.Prompt == nil {
		return e // Validate names it
	}
	if !config.DemoIID && !e.splitsTrainFile() {
		e.IIDTrain, e.IIDTrainFile = "", nil
		e.IIDLimit, e.TrainSize, e.TrainFraction = 0, 0, 0
	}
	if !config.DemoSuite {
		e.SuiteLimit, e.SuiteLimitAfterHoldOut = 0, false
	}
	p := *e.Prompt // Effective changes no field of the spec it is given
	if !config.DemoIID && !config.DemoSuite {
		p.K = 0 // zero-shot: a sweep's k is not read
	}
	e.Prompt = &p
	e.Method, e.FromIID = MethodPrompt, ""
	e.Model, e.Hyper, e.ProbeHyper, e.IIDHyper = ModelSpec{}, Hyper{}, Hyper{}, Hyper{}
	e.MaxSteps, e.Settings, e.Corrections = 0, MethodSettings{}, nil
	e.MaxLength, e.Profile = 0, "" // the encoder's input length and defaults: not read
	return e
}

// demoRecipe is how a prompted run's demonstrations are drawn (its
// Trained.Recipe's last part).
const demoRecipe = ". Demonstrations (a prompted run): prompt.k of the pool drawn with the run's seed by prompt.Choose " +
	"(each label's candidates shuffled, taken round-robin over the labels, put in a seeded order); the pool is the i.i.d. " +
	"training rows kept (k-shot IID, IID+T) and the labelled MFT inputs of the T_train cases the fold keeps, under suite_limit " +
	"(k-shot T, IID+T), in file and suite order; each is checked against the fold again"

// unparsedPred is what the prediction files say of an answer that names
// no label.
const unparsedPred = "(unparsed)"

// unparsedCount is the unparsed answers per template (nil: none), each
// said in the log as well.
func (r *promptedRun) unparsedCount() map[string]int {
	var out map[string]int
	for t, n := range r.unparsed {
		if n > 0 {
			if out == nil {
				out = map[string]int{}
			}
			out[t] = n
			slog.Warn("unparsed answers: each failed its input, none became a label", "template", t, "answers", n)
		}
	}
	return out
}

// templateScores scores each template of a run that scores several alone,
// by the same evaluation as the run's (its predictions and verdicts under
// outDir/templates/NAME/): the results per template beside the aggregate.
// An endpoint's cache answers what the aggregate already asked.
func (p *classRun) templateScores(ctx context.Context, evalLimit int, outDir string) (map[string]TemplateScore, error) {
	templates := p.prompted.spec.Scored()
	if len(templates) < 2 {
		return nil, nil
	}
	out := map[string]TemplateScore{}
	for _, t := range templates {
		spec := *p.prompted.spec
		spec.Template = t.Name
		one := *p.prompted
		one.spec, one.unparsed = &spec, map[string]int{}
		sub := *p
		sub.prompted = &one
		dir := filepath.Join(outDir, "templates", t.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		r, err := sub.evaluate(ctx, evalLimit, dir)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", t.Name, err)
		}
		r.summarise()
		out[t.Name] = TemplateScore{IIDScore: r.IIDScore, SuiteScore: r.SuiteScore, G: r.G, Unparsed: one.unparsed[t.Name]}
	}
	return out, nil
}
