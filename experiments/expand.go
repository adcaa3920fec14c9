package experiments

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/train"
)

// Expand lists the runs of an experiment in a stable order: per task the IID
// baseline, then per configuration × method its searches (with a search
// grid), the "seen" run and one run per held-out fold of each requested
// score; every run once per seed and per grid point, and each run once
// however many grid points ask for it (a method's setting is no part of
// another method's runs). Each run is resolved as it will train (Run):
// its inputs are found (paths relative to the spec's directory, datasets
// by name) and digested through in, and the suites whose folds the spec
// does not list are opened (fetched when needed, until ctx is done).
func Expand(ctx context.Context, s *Spec, in *Inputs) ([]Run, error) {
	var runs []Run
	seen := map[string]bool{} // run IDs listed
	add := func(r Run) {
		if id := r.ID(); !seen[id] {
			seen[id] = true
			runs = append(runs, r)
		}
	}
	grid, err := s.gridPoints()
	if err != nil {
		return nil, err
	}
	bad := &badValues{seen: map[string]bool{}}
	profile, err := train.LookupProfile(s.Profile)
	if err != nil {
		return nil, fmt.Errorf("field profile: %w", err)
	}
	for i, t := range s.Tasks {
		b, err := s.taskRun(ctx, in, i, t)
		if err != nil {
			return nil, err
		}
		foldsOf := map[string][]string{}
		resolved := t
		resolved.Suite = s.resolve(t.Suite)
		for _, sc := range s.heldOutScores() {
			fs, err := in.folds(ctx, resolved, sc)
			if err != nil {
				return nil, err
			}
			if len(fs) == 0 {
				return nil, fmt.Errorf("task %s: no held-out folds for score %s", t.Name, sc)
			}
			foldsOf[sc] = fs
		}
		search := s.Search
		if search != nil && search.batchDefault && t.kind() == train.KindSpan {
			g := *search
			g.BatchSize = slices.Clone(profile.Span.Search.BatchSize)
			search = &g
		}
		for _, point := range grid {
			for _, seed := range s.Seeds {
				c := cell{s: s, bad: bad, base: b, point: point, seed: seed, search: search, ids: map[string]string{}, swept: map[string][]string{}}
				if t.hasIID() {
					r, err := c.run(ConfigIID, "vanilla", ScoreIID, "")
					if err != nil {
						return nil, err
					}
					add(r)
				}
				for _, config := range s.Configurations {
					for _, m := range s.methodsOf(config) {
						seenRun, err := c.run(config, m, ScoreSeen, "")
						if err != nil {
							return nil, err
						}
						// The searches this cell's runs need, each listed once.
						for _, method := range c.searches(m) {
							r, trials, err := c.searchWithTrials(config, method)
							if err != nil {
								return nil, err
							}
							for _, t := range trials {
								add(t)
							}
							add(r)
						}
						add(seenRun)
						for _, sc := range s.Scores {
							for _, f := range foldsOf[sc] {
								r, err := c.run(config, m, sc, f)
								if err != nil {
									return nil, err
								}
								add(r)
							}
						}
					}
				}
			}
		}
	}
	if len(bad.lines) > 0 {
		return nil, &BadValuesError{bad.lines}
	}
	return runs, nil
}

// taskBase is what every run of a task shares: package train's spec
// without configuration, method, seed and grid point, and its inputs.
type taskBase struct {
	task   string // the spec's name of the task
	train  train.RunSpec
	inputs []Input
}

// taskRun resolves a task's part of its runs' spec: the task, its kind,
// the profile, the data, suite, evaluation sets and model, each input
// found and digested, and the spec's budget, model options and
// corrections. What it names by a dataset name or hub id stays a name in
// the run's inputs (the runner fetches a dataset when a run starts; a hub
// checkpoint is fetched here, as its content is part of the runs'
// identity).
func (s *Spec) taskRun(ctx context.Context, in *Inputs, i int, t Task) (taskBase, error) {
	field := fmt.Sprintf("tasks[%d]", i)
	var tr train.RunSpec
	var inputs []Input
	addInput := func(f, raw string) func(Input, error) error {
		return func(x Input, err error) error {
			if err != nil {
				return s.inputError(f, raw, err)
			}
			inputs = append(inputs, x)
			return nil
		}
	}
	decl, err := t.declaration(field)
	if err != nil {
		return taskBase{}, err
	}
	tr.Profile = s.Profile
	builtin, _, isBuiltin := LookupBuiltinTask(t.Name)
	data := s.resolve(t.Data)
	switch {
	case isBuiltin:
		tr.Task = builtin.Train
		iidFiles, from := builtin.IIDFiles, [2]string{data, data}
		if builtin.Train == train.TaskRead {
			from, iidFiles = readData(data)
		}
		if data != "" {
			for k, fieldName := range []string{"iid_train", "iid_dev"} {
				x, err := in.file(fieldName, from[k], iidFiles[k])
				if err := addInput(field+".data", t.Data)(x, err); err != nil {
					return taskBase{}, err
				}
			}
			tr.IIDTrain, tr.IIDDev = inputs[0].Path, inputs[1].Path
		}
	case decl != nil && decl.Kind == train.KindSpan:
		tr.Task, tr.Kind = t.Name, train.KindSpan
		for k, f := range []*datasets.FileSpec{decl.Train, decl.Dev} {
			name := []string{"train", "dev"}[k]
			x, err := in.local([]string{"iid_train", "iid_dev"}[k], s.resolve(f.Path))
			if err := addInput(field+"."+name+".path", f.Path)(x, err); err != nil {
				return taskBase{}, err
			}
		}
		tr.IIDTrain, tr.IIDDev = inputs[0].Path, inputs[1].Path
	case decl != nil:
		def := decl.Task
		tr.Task, tr.TaskDef = t.Name, &def
		for k, f := range []*datasets.FileSpec{decl.Train, decl.Dev} {
			if f == nil {
				continue
			}
			g := *f
			name := []string{"train", "dev"}[k]
			x, err := in.local([]string{"iid_train_file.path", "iid_dev_file.path"}[k], s.resolve(g.Path))
			if err := addInput(field+"."+name+".path", g.Path)(x, err); err != nil {
				return taskBase{}, err
			}
			g.Path = x.Path
			if k == 0 {
				tr.IIDTrainFile = &g
			} else {
				tr.IIDDevFile = &g
			}
		}
	default:
		// Neither built in nor declared: a task only a runner of its own
		// knows (TrainRunner.Check refuses it).
		tr.Task = t.Name
	}
	if t.Suite != "" {
		x, err := in.suite(s.resolve(t.Suite))
		if err := addInput(field+".suite", t.Suite)(x, err); err != nil {
			return taskBase{}, err
		}
		tr.Suite = x.Path
	}
	if t.Split != nil {
		if t.Split.Stratify == "" {
			return taskBase{}, fmt.Errorf("field %s.split.stratify: required (a case-metadata column, such as target_ident)", field)
		}
		tr.SuiteStratify = t.Split.Stratify
	}
	for k, e := range t.Eval {
		x, err := in.local(fmt.Sprintf("iid_eval[%d].path", k), s.resolve(e.Path))
		if err := addInput(fmt.Sprintf("%s.eval[%d].path", field, k), e.Path)(x, err); err != nil {
			return taskBase{}, err
		}
		e.Path = x.Path
		tr.IIDEval = append(tr.IIDEval, e)
	}
	if err := s.modelRun(ctx, in, &tr, addInput); err != nil {
		return taskBase{}, err
	}
	if err := s.promptRun(ctx, in, &tr, addInput); err != nil {
		return taskBase{}, err
	}
	// The budget's epochs, then the grid's keys, then the profile's
	// defaults (FillDefaults).
	s.setBudget(&tr)
	for _, c := range s.Corrections {
		if _, ok := train.Corrections[c]; ok {
			tr.Corrections = append(tr.Corrections, c)
		}
	}
	// Every input field the spec sets has its digest.
	for _, f := range tr.InputFields() {
		if !slices.ContainsFunc(inputs, func(x Input) bool { return x.Field == f.Field }) {
			return taskBase{}, fmt.Errorf("%s: input %s has no digest", field, f.Field)
		}
	}
	return taskBase{task: t.Name, train: tr, inputs: inputs}, nil
}

// modelRun sets the model of a task's runs from the spec's model block,
// through the registered model source of its kind (pretrained.Source):
// a checkpoint is found (a hub id through the hub cache) and digested,
// and every file option the source resolves (vocabulary, tokenizer, word
// vectors; their defaults, datasets) is an input of the runs. A kind no
// source registers is kept as the model's kind, for runners of their own
// (TrainRunner.Check refuses it).
func (s *Spec) modelRun(ctx context.Context, in *Inputs, tr *train.RunSpec, add func(string, string) func(Input, error) error) error {
	src, err := pretrained.LookupSource(s.Model.Name)
	if err != nil {
		tr.Model.Kind = s.Model.Name
		return nil
	}
	path := ""
	if src.FromCheckpoint && s.Model.Checkpoint != "" {
		value := s.resolve(s.Model.Checkpoint)
		var x Input
		if _, serr := os.Stat(value); serr != nil && looksLikeFile(s.Model.Checkpoint) && !hubLike(s.Model.Checkpoint) {
			// ./model or model.tar.gz names a file, not a hub id: say where
			// it was looked for, not that the hub cannot be reached.
			err = &NotFoundError{value}
		} else {
			x, err = in.checkpoint(ctx, "model.path", value)
		}
		if err := add(s.Model.field("path"), s.Model.Checkpoint)(x, err); err != nil {
			return err
		}
		path = x.Path
	}
	// The file options, resolved as every path in the spec, each digested.
	found := map[string]Input{} // by path
	resolve := func(v string) (string, error) {
		x, err := in.file("", s.resolve(v), "")
		if err != nil {
			key := "model"
			for k, o := range s.Model.Options {
				if fmt.Sprint(o) == v {
					key = s.Model.field(k)
				}
			}
			return "", s.inputError(key, v, err)
		}
		found[x.Path] = x
		return x.Path, nil
	}
	spec, err := src.SpecFrom(path, s.Model.Options, resolve)
	if err != nil {
		return err
	}
	tr.Model = spec
	for _, f := range tr.InputFields() {
		if x, ok := found[*f.Path]; ok && strings.HasPrefix(f.Field, "model.") {
			x.Field = f.Field
			if err := add(s.Model.field(strings.TrimPrefix(f.Field, "model.")), "")(x, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// inputError says which field of the spec names an input that could not be
// found or read; a relative path missing is named as the spec gives it and
// where it was looked for.
func (s *Spec) inputError(field, raw string, err error) error {
	var nf *NotFoundError
	if errors.As(err, &nf) && raw != "" && !filepath.IsAbs(raw) && raw != nf.Path {
		return fmt.Errorf("field %s: %s: file not found (looked for %s: a path in a spec is relative to the spec's folder)", field, raw, nf.Path)
	}
	return fmt.Errorf("field %s: %w", field, err)
}

// evalSets are t's evaluation sets with their paths resolved against the
// spec file's directory.
func (s *Spec) evalSets(t Task) []train.EvalSet {
	var out []train.EvalSet
	for _, e := range t.Eval {
		e.Path = s.resolve(e.Path)
		out = append(out, e)
	}
	return out
}

// setting is one grid key's value at a grid point.
type setting struct {
	key   string
	value any
}

// gridPoints returns every combination of the grid's values (keys sorted),
// or one empty point for an empty grid.
func (s *Spec) gridPoints() ([][]setting, error) {
	points := [][]setting{nil}
	for _, k := range slices.Sorted(maps.Keys(s.Grid)) {
		var next [][]setting
		for _, p := range points {
			for _, v := range s.Grid[k] {
				next = append(next, append(slices.Clone(p), setting{k, v}))
			}
		}
		points = next
	}
	return points, nil
}

// cell makes the runs of one task at one grid point and seed.
type cell struct {
	s      *Spec
	bad    *badValues
	base   taskBase
	point  []setting
	seed   int64
	search *SearchGrid
	// ids holds the IDs of the baseline and the searches, which many runs
	// of the cell need, and swept their settings swept, by ID.
	ids   map[string]string
	swept map[string][]string
}

// train is the package train spec of a run of configuration × method at
// the cell's grid point: the grid's settings that the method reads (a
// method setting is no part of another method's runs), then the profile's
// defaults. swept are the field paths the grid set.
func (c cell) train(config, method string) (tr train.RunSpec, swept []string, err error) {
	tr = c.base.train
	if tr.Prompt != nil {
		p := *tr.Prompt // the grid sets prompt.k and prompt.template per run
		tr.Prompt = &p
	}
	if tr.Configuration, err = train.ParseConfiguration(config); err != nil {
		return tr, nil, err
	}
	tr.Method, tr.Seed = method, uint64(c.seed)
	// The profile's defaults first: a value the grid gives, zero included,
	// is then the run's, for train's one check of it (CheckSettings).
	if err := tr.FillDefaults(); err != nil {
		return tr, nil, err
	}
	for _, st := range c.point {
		if ms, ok := train.SettingMethods[strings.TrimPrefix(gridPath(st.key), "method_settings.")]; ok && !slices.Contains(ms, method) {
			continue
		}
		path, err := setGridKey(&tr, st.key, st.value)
		if err != nil {
			return tr, nil, fmt.Errorf("grid key %s: %w", st.key, err)
		}
		swept = append(swept, path)
	}
	sort.Strings(swept)
	for _, e := range tr.CheckSettings() {
		var se *train.SettingError
		if !errors.As(e, &se) {
			continue
		}
		c.bad.add(c.s.fieldOf(c.point, se.Path), e)
	}
	return tr, swept, nil
}

// badValues collects the values of a sweep's settings its runs refuse
// (train.RunSpec.CheckSettings), each once with where the spec sets it:
// Expand reports them all, before anything runs.
type badValues struct {
	seen  map[string]bool
	lines []string
}

func (b *badValues) add(field string, err error) {
	line := err.Error()
	if field != "" {
		line = field + ": " + line
	}
	if !b.seen[line] {
		b.seen[line] = true
		b.lines = append(b.lines, line)
	}
}

// BadValuesError lists every value of a sweep's settings its runs refuse,
// each with the spec's line and field.
type BadValuesError struct{ Lines []string }

func (e *BadValuesError) Error() string {
	if len(e.Lines) == 1 {
		return e.Lines[0]
	}
	return fmt.Sprintf("%d values refused:\n  %s", len(e.Lines), strings.Join(e.Lines, "\n  "))
}

// run is the cell's run of configuration × method for a score (and fold).
func (c cell) run(config, method, score, fold string) (Run, error) {
	tr, swept, err := c.train(config, method)
	if err != nil {
		return Run{}, err
	}
	if kind, ok := FoldKindOf(score); ok {
		tr.HeldOut = &train.FoldSpec{Kind: kind, Name: fold}
		// Only where the order changes what trains: a capped metadata
		// fold. Every other run keeps its identity.
		if _, meta := kind.MetaColumn(); meta && tr.SuiteLimit > 0 && c.s.Budget.FoldCap == FoldCapAfter {
			tr.SuiteLimitAfterHoldOut = true
		}
	}
	r := Run{Task: c.base.task, Configuration: config, Method: method, Score: score, Fold: fold, Seed: c.seed,
		Swept: swept, Train: tr, Inputs: c.base.inputs}
	if err := c.needs(&r); err != nil {
		return Run{}, err
	}
	if c.search == nil || config == ConfigIID {
		return r, c.seal(&r)
	}
	// The searches' choices replace the profile's values.
	at := func(method string) (string, error) {
		key := "search " + config + " " + method
		if id, ok := c.ids[key]; ok {
			return id, nil
		}
		s, err := c.searchRun(config, method)
		if err != nil {
			return "", err
		}
		c.ids[key] = s.ID()
		return c.ids[key], nil
	}
	for _, m := range c.searches(method) {
		id, err := at(m)
		if err != nil {
			return Run{}, err
		}
		if method == "lp-ft" && m == "lp" {
			if score == ScoreSeen && !slices.Contains(c.s.Corrections, CorrectLPFTProbe) {
				continue
			}
			r.ProbeFrom = id
			r.Train.ProbeHyper.BatchSize, r.Train.ProbeHyper.LR = 0, 0
			continue
		}
		r.HyperFrom = id
		r.Train.Hyper.Epochs, r.Train.Hyper.BatchSize, r.Train.Hyper.LR = 0, 0, 0
	}
	return r, c.seal(&r)
}

// seal sorts a run's swept settings — those it or the runs it needs
// depend on — and seals it.
func (c cell) seal(r *Run) error {
	var needed []string
	for _, id := range r.Needs() {
		needed = append(needed, c.swept[id]...)
	}
	r.sortSwept(needed)
	if err := r.seal(); err != nil {
		return err
	}
	c.swept[r.ID()] = r.Swept
	return nil
}

// needs sets the ID of the IID baseline a run of an IID→T or IID→(IID+T)
// configuration (a search of one too) starts from.
func (c cell) needs(r *Run) error {
	if ci, _ := train.LookupConfiguration(r.Configuration); !ci.FromIID {
		return nil
	}
	if id, ok := c.ids[ConfigIID]; ok {
		r.From = id
		return nil
	}
	base, err := c.run(ConfigIID, "vanilla", ScoreIID, "")
	if err != nil {
		return err
	}
	r.From = base.ID()
	c.ids[ConfigIID] = r.From
	return nil
}

// searches lists the methods whose searches a run of method trains with
// the choice of (none without a search grid): its own, or for LP-FT
// vanilla's (the fine-tuning phase) and LP's (the probing phase: held-out
// runs, and seen runs with CorrectLPFTProbe).
func (c cell) searches(method string) []string {
	if c.search == nil {
		return nil
	}
	if method != "lp-ft" {
		return []string{method}
	}
	return []string{"vanilla", "lp"}
}

// searchRun is the search of configuration × method at the cell's grid
// point: it tunes the suite phase's epochs, batch size and learning rate
// over the grid (LP's over lp_lr) and is scored on nothing.
func (c cell) searchRun(config, method string) (Run, error) {
	r, _, err := c.searchWithTrials(config, method)
	return r, err
}

// searchWithTrials is the search of configuration × method and its
// trials, one run per point of its grid (lr, then batch size, then epochs:
// train.Search's order), each trained as the search's spec with the
// point's epochs, batch size and learning rate.
func (c cell) searchWithTrials(config, method string) (Run, []Run, error) {
	tr, swept, err := c.train(config, method)
	if err != nil {
		return Run{}, nil, err
	}
	tr.Hyper.Epochs, tr.Hyper.BatchSize, tr.Hyper.LR = 0, 0, 0
	g := *c.search
	r := Run{Task: c.base.task, Configuration: config, Method: method, Score: ScoreSearch, Seed: c.seed,
		Swept: swept, Train: tr, Inputs: c.base.inputs, Search: &g}
	if err := c.needs(&r); err != nil {
		return Run{}, nil, err
	}
	trials, err := r.trialRuns()
	if err != nil {
		return Run{}, nil, err
	}
	for _, t := range trials {
		r.Trials = append(r.Trials, t.ID())
	}
	return r, trials, c.seal(&r)
}

// trialRuns are a search's trials: its spec at each point of its grid, in
// the grid's order (lr, then batch size, then epochs: train.Search's),
// with its baseline and swept settings. A search's record determines them,
// so that a store's search can be split into its trials (Migrate).
func (r Run) trialRuns() ([]Run, error) {
	var trials []Run
	for _, h := range r.Search.grid(r.Method).Points(r.Train.Hyper.Loss) {
		t := Run{Task: r.Task, Configuration: r.Configuration, Method: r.Method, Score: ScoreTrial, Seed: r.Seed,
			Swept: slices.Clone(r.Swept), Unread: slices.Clone(r.Unread), Train: r.Train, Inputs: r.Inputs, From: r.From}
		t.Train.Hyper = h
		if err := t.seal(); err != nil {
			return nil, err
		}
		trials = append(trials, t)
	}
	return trials, nil
}

// CorrectLPFTProbe makes LP-FT's seen run probe with the LP search's
// choice, as its held-out runs do. BeLUGA's seen run passes a directory
// where set_hyperparams wants training_args.bin, so it probes with the
// hard-coded LP row instead (suite_finetuning.py).
const CorrectLPFTProbe = "lpft-probe"

// Needs lists the IDs of the runs r needs done before it starts: its IID
// baseline, its searches, and a search its trials.
func (r Run) Needs() []string {
	out := slices.Clone(r.Trials)
	for _, id := range []string{r.From, r.HyperFrom, r.ProbeFrom} {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

// gridPath is the field path a grid key names.
func gridPath(key string) string {
	if p, ok := gridKeys[key]; ok {
		return p
	}
	return key
}

// promptRun sets the prompt of a task's runs from the spec's prompt
// block: its language model found and digested as a checkpoint is, its
// weights part of the prompted runs' identity.
func (s *Spec) promptRun(ctx context.Context, in *Inputs, tr *train.RunSpec, add func(string, string) func(Input, error) error) error {
	if s.Prompt == nil {
		return nil
	}
	p := *s.Prompt
	if p.Model != "" {
		x, err := in.checkpoint(ctx, "prompt.model", s.resolve(p.Model))
		if err := add("prompt.model", p.Model)(x, err); err != nil {
			return err
		}
		p.Model = x.Path
	}
	tr.Prompt = &p
	return nil
}

// methodsOf are the methods a configuration's runs use: prompt for a
// prompted configuration, which trains nothing, else the spec's.
func (s *Spec) methodsOf(config string) []string {
	if ci, err := train.LookupConfiguration(config); err == nil && ci.Prompt {
		return []string{train.MethodPrompt}
	}
	return s.Methods
}
