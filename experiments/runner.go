package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/train"
)

// TrainRunner executes runs with package train. It fetches the datasets a
// run names into Cache, checks every other input against the digest the
// run's identity holds, starts IID→T and IID→(IID+T) runs from the model of
// their IID baseline (Run.From), which must be done in Store, and trains
// with the choices of their searches.
type TrainRunner struct {
	Cache *datasets.Cache
	Store *Store
	// Inputs, when set, is what expanded the sweep: its suites (which the
	// preflight checks read rather than open again) and its digests.
	Inputs *Inputs

	lazy sync.Mutex // guards Inputs' creation by concurrent runs
}

func (r *TrainRunner) inputs() *Inputs {
	r.lazy.Lock()
	defer r.lazy.Unlock()
	if r.Inputs == nil {
		r.Inputs = &Inputs{Data: r.Cache}
	}
	return r.Inputs
}

// FoldKindOf is the held-out partition a score's runs are folds of: BeLUGA's
// func, class and type, or a case-metadata column for a score "meta:COLUMN"
// (IsMetaScore); false for seen, iid and search.
func FoldKindOf(score string) (splits.FoldKind, bool) {
	if s, ok := LookupScore(score); ok && s.Fold != "" {
		return s.Fold, true
	}
	if IsMetaScore(score) {
		return splits.FoldKind(score), true
	}
	return "", false
}

// IsMetaScore reports whether score holds out the cases of each value of
// a case-metadata column, spelt "meta:COLUMN" (splits.MetaPrefix), e.g.
// meta:target_ident for Checking HateCheck's IdentOut.
func IsMetaScore(score string) bool {
	_, ok := splits.FoldKind(score).MetaColumn()
	return ok
}

// Spec is the package train spec a run trains with on this machine: its
// Train with the datasets it names fetched into the cache and every other
// input checked against its digest (an input that changed since the sweep
// was listed is another run's), the IID baseline's model, the searches'
// choices and the store's cache filled in.
func (r *TrainRunner) Spec(ctx context.Context, run Run) (train.RunSpec, error) {
	s := run.Train
	s.IIDTrainFile, s.IIDDevFile = cloneFile(s.IIDTrainFile), cloneFile(s.IIDDevFile)
	s.IIDEval = slices.Clone(s.IIDEval)
	for _, f := range s.InputFields() {
		in, ok := run.Input(f.Field)
		switch {
		case !ok:
			return s, fmt.Errorf("input %s (%s) has no digest", f.Field, *f.Path)
		case in.File != "":
			if r.Cache == nil {
				return s, fmt.Errorf("%s: dataset %s needs a data cache", f.Field, in.Name)
			}
			path, err := r.Cache.EnsureFile(ctx, in.Name, in.File)
			if err != nil {
				return s, err
			}
			*f.Path = path
		case in.Pending != "":
			return s, fmt.Errorf("%s: %s", f.Field, in.Pending)
		case in.Commit != "":
			// A hub checkpoint, identified by its commit: fetched now
			// (pinned to that commit) unless the hub cache has it; the
			// download checks each file against the hub's sha256.
			dir, err := r.inputs().checkpointDir(ctx, in)
			if err != nil {
				return s, fmt.Errorf("%s: %w", f.Field, err)
			}
			*f.Path = dir
		default:
			sum, _, err := r.inputs().digests().Path(in.Path)
			if err != nil {
				return s, fmt.Errorf("%s: %w", f.Field, err)
			}
			if sum != in.SHA256 {
				return s, fmt.Errorf("%s %s changed since the sweep was listed (sha256 %.12s…, was %.12s…): this run's inputs are gone; run the sweep again for the runs of the new content", f.Field, in.Path, sum, in.SHA256)
			}
		}
	}
	if run.From != "" {
		if r.Store == nil || r.Store.State(run.From) != Done {
			return s, fmt.Errorf("%s starts from the IID baseline %s, which is not done", run.Configuration, run.From)
		}
		// Every file of the model is checked against the baseline's done
		// before it is fine-tuned: a model edited since (floats
		// overwritten in place) would silently change every dependent run.
		if err := VerifyPart(r.Store.RunDir(run.From), BaselineModel, r.inputs().digests()); err != nil {
			return s, fmt.Errorf("%s starts from the IID baseline %s, whose model is not the one it trained: %w (remove %s for beluga run to train the baseline again)", run.Configuration, run.From, err, r.Store.RunDir(run.From))
		}
		s.FromIID = filepath.Join(r.Store.RunDir(run.From), filepath.FromSlash(BaselineModel))
	}
	if run.HyperFrom != "" {
		h, err := r.chosen(run.HyperFrom)
		if err != nil {
			return s, err
		}
		s.Hyper.Epochs, s.Hyper.BatchSize, s.Hyper.LR = h.Epochs, h.BatchSize, h.LR
	}
	if run.ProbeFrom != "" {
		h, err := r.chosen(run.ProbeFrom)
		if err != nil {
			return s, err
		}
		s.ProbeHyper.BatchSize, s.ProbeHyper.LR = h.BatchSize, h.LR
	}
	if r.Store != nil {
		s.Cache = filepath.Join(r.Store.Dir, CacheDir)
	}
	return s, nil
}

// BaselineModel is where, in an IID baseline's run directory, the model
// that IID→T and IID→(IID+T) runs start from lies.
const BaselineModel = "train/model"

// CacheDir is where, in a store, the runs of a sweep share what they would
// otherwise each compute: tokenised suites and datasets, frozen encoders'
// features (train.RunSpec.Cache).
const CacheDir = ".cache"

// readData returns where READ's i.i.d. train and dev files come from (the
// datasets or directories, and the files in them): "squad" is SQuAD v1.1
// train and dev (squad-train, squad-dev); "squad-dev" is dev for both, so
// that training takes dev's validation half only (package train never
// trains on the i.i.d. test half) — the offline demonstration where SQuAD
// train is absent; a directory holds train-v1.1.json and dev-v1.1.json.
func readData(data string) (from, files [2]string) {
	const train, dev = "squad/train-v1.1.json", "squad/dev-v1.1.json"
	switch data {
	case "squad":
		return [2]string{"squad-train", "squad-dev"}, [2]string{train, dev}
	case "squad-dev":
		return [2]string{data, data}, [2]string{dev, dev}
	}
	return [2]string{data, data}, [2]string{train, dev}
}

// gridKeys are the grid's short keys, each the name of a field path of
// train.RunSpec (fieldpath.go): BeLUGA's search keys, the i.i.d. and probing
// phases', the method settings (train.MethodSettings, each by its own name;
// unset: the profile's) and the training-set size. Their values must be
// positive; a field path's need only fit its field.
var gridKeys = func() map[string]string {
	keys := map[string]string{
		"epochs": "hyper.epochs", "batch_size": "hyper.batch_size", "lr": "hyper.lr",
		"iid_epochs": "iid_hyper.epochs", "iid_batch_size": "iid_hyper.batch_size", "iid_lr": "iid_hyper.lr",
		"probe_batch_size": "probe_hyper.batch_size", "probe_lr": "probe_hyper.lr",
		// A count, or a fraction in (0, 1): train_size or train_fraction.
		TrainSizeKey: "train_size",
	}
	for name := range train.SettingMethods {
		keys[name] = "method_settings." + name
	}
	return keys
}()

// setGridKey sets the field a grid key names to the key's value and
// returns the field's path.
func setGridKey(s *train.RunSpec, key string, v any) (string, error) {
	if key == TrainSizeKey {
		// A fraction; a count read back from JSON is a float64 too.
		if f, ok := v.(float64); ok && f < 1 {
			s.TrainFraction = f
			return "train_fraction", nil
		}
	}
	path := gridPath(key)
	return path, setFieldPath(s, path, v)
}

// gridKeyKind is the kind checkKind checks a short grid key's values
// against: "size" for the training-set size, else its field's.
func gridKeyKind(key string) (string, bool) {
	path, ok := gridKeys[key]
	switch {
	case !ok:
		return "", false
	case key == TrainSizeKey:
		return "size", true
	}
	f, err := runSpecField(reflect.ValueOf(&train.RunSpec{}).Elem(), path)
	if err != nil {
		// gridKeys names fields of train.RunSpec; a test holds it to that.
		panic(fmt.Sprintf("experiments: grid key %s: %v", key, err))
	}
	if f.Kind() == reflect.Float64 {
		return "number", true
	}
	return "int", true
}

// Check refuses, with the field's path, what TrainRunner cannot train or
// would silently ignore: an unknown model, model option or grid key, a
// value of the wrong kind, a value that is not positive.
func (r *TrainRunner) Check(s *Spec) error {
	for i, t := range s.Tasks {
		if err := t.checkTrainable(fmt.Sprintf("tasks[%d]", i)); err != nil {
			return err
		}
	}
	src, err := pretrained.LookupSource(s.Model.Name)
	if err != nil {
		return fmt.Errorf("field %s: unknown model %q (want %s)", s.Model.field("kind"), s.Model.Name, strings.Join(pretrained.SourceKinds(), ", "))
	}
	if src.FromCheckpoint && s.Model.Checkpoint == "" {
		return fmt.Errorf("field %s: model %s starts from a checkpoint (a directory, .tar.gz or hub id)", s.Model.field("path"), s.Model.Name)
	}
	opts := src.Options
	for k, v := range s.Model.Options {
		kind, ok := opts[k]
		if !ok {
			return fmt.Errorf("field model.options.%s: model %s has no such option (known: %s)", k, s.Model.Name, strings.Join(slices.Sorted(maps.Keys(opts)), ", "))
		}
		if err := checkKind(v, kind); err != nil {
			return fmt.Errorf("field model.options.%s: %w", k, err)
		}
	}
	// Every bad value, each with its line; a value's range is train's
	// rule (train.RunSpec.CheckSettings, which Expand applies to every
	// run), whichever key spells the setting: here only its kind.
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(s.Grid)) {
		vs := s.Grid[k]
		if err := fieldPathError(gridPath(k)); err != nil {
			bad = append(bad, fmt.Sprintf("%s: unknown key: %v (known: %s, or a field path of the run spec such as hyper.lr or method_settings.irm_lambda)", s.where("grid", k), err, strings.Join(slices.Sorted(maps.Keys(gridKeys)), ", ")))
			continue
		}
		for i, v := range vs {
			err := checkSetting(k, v)
			if kind, ok := gridKeyKind(k); ok && k == TrainSizeKey && err == nil {
				err = checkKind(v, kind)
			}
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s: %v", s.where("grid", k, i), err))
			}
		}
	}
	if len(bad) > 0 {
		return &BadValuesError{bad}
	}
	return nil
}

// checkSetting is train's verdict on a grid key's value
// (train.RunSpec.CheckSettings), in a run that reads the setting, with the
// profile's defaults for the others: one rule, one message, whichever key
// spells it (lr or hyper.lr). A method setting's zero is refused too: it
// means the profile's value, which a grid cannot ask for by a value.
func checkSetting(key string, v any) error {
	path := gridPath(key)
	tr := train.RunSpec{Configuration: train.ConfigIIDPlusT, Method: "vanilla"}
	setting, isMethod := strings.CutPrefix(path, "method_settings.")
	switch {
	case strings.HasPrefix(path, "iid_hyper."):
		tr.Configuration = train.ConfigIID
	case strings.HasPrefix(path, "probe_hyper."):
		tr.Method = "lp-ft"
	case isMethod && len(train.SettingMethods[setting]) > 0:
		tr.Method = train.SettingMethods[setting][0]
	}
	if err := tr.FillDefaults(); err != nil {
		return err
	}
	path, err := setGridKey(&tr, key, v)
	if err != nil {
		return err
	}
	if f, err := runSpecField(reflect.ValueOf(&tr).Elem(), path); err == nil && isMethod && f.IsZero() {
		return fmt.Errorf("%v is not a positive number (leave %s out for the profile's)", v, key)
	}
	for _, e := range tr.CheckSettings() {
		var se *train.SettingError
		if errors.As(e, &se) && se.Path == path {
			return e
		}
	}
	return nil
}

// TrainSizeKey is the grid key of the training-set size: a whole number
// of i.i.d. training examples, or a fraction of them in (0, 1] written
// with a point (0.5, 1.0). Seeded by the run's seed and stratified by label
// (train.RunSpec.TrainSize); the validation and i.i.d. test parts stay
// whole.
const TrainSizeKey = "train_size"

// checkKind checks a YAML value against a kind: "int" (a positive whole
// number), "number" (a positive number), "size" (a positive whole number
// or a number in (0, 1)) or "string".
func checkKind(v any, kind string) error {
	switch kind {
	case "size":
		// 1.0 is refused: it is all the examples, and its JSON (hence the
		// run's ID) is that of the count 1.
		if f, ok := v.(float64); ok && !(f > 0 && f < 1) {
			return fmt.Errorf("%v is neither a whole number of examples nor a fraction in (0, 1)", v)
		}
		if _, ok := v.(float64); ok {
			return nil
		}
		return checkKind(v, "int")
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%v is not a string", v)
		}
		return nil
	case "int":
		if n, ok := v.(int); ok && n > 0 {
			return nil
		}
		return fmt.Errorf("%#v is not a positive whole number", v)
	}
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case float64:
		f = x
	default:
		return fmt.Errorf("%#v is not a number", v)
	}
	if !(f > 0) || math.IsInf(f, 0) {
		return fmt.Errorf("%v is not a positive number", v)
	}
	return nil
}

// TrainSpecFile records the package train spec a run was trained with.
const TrainSpecFile = "train_spec.json"

// SearchFile is what a search run writes: the grid, every trial's
// validation scores and the chosen hyper-parameters.
const SearchFile = "hp_search.json"

// SearchRecord is the content of SearchFile.
type SearchRecord struct {
	Grid   train.Grid    `json:"grid"`
	Trials []train.Trial `json:"trials"`
	Chosen train.Hyper   `json:"chosen"`
}

// chosen reads what a done search run chose.
func (r *TrainRunner) chosen(id string) (train.Hyper, error) {
	if r.Store == nil || r.Store.State(id) != Done {
		return train.Hyper{}, fmt.Errorf("trains with the choice of search %s, which is not done", id)
	}
	h, _, err := readChoice(r.Store.RunDir(id))
	return h, err
}

// readChoice reads the hyper-parameters a search chose from dir's
// SearchFile; ok is false when dir holds none (its run did not search).
func readChoice(dir string) (h train.Hyper, ok bool, err error) {
	rec, err := readSearch(dir)
	if err != nil {
		return h, false, err
	}
	return rec.Chosen, true, nil
}

// readSearch reads dir's SearchFile; a file that is not there is
// fs.ErrNotExist, unwrapped.
func readSearch(dir string) (SearchRecord, error) {
	var rec SearchRecord
	path := filepath.Join(dir, SearchFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// TrainedHyper reads the suite-phase hyper-parameters (hyper) the done run
// in dir trained with, for a run that reuses them (beluga train
// --hyper-from; a held-out run reuses its full run's): the choice of its
// search when it searched (SearchFile: beluga train --search, a sweep's
// search), else its recorded train spec's — TrainSpecFile in a sweep's
// run, SpecFile in a run directory of beluga train. A run that is not done
// is refused: a search that failed leaves a spec whose hyper it never chose.
func TrainedHyper(dir string) (train.Hyper, error) {
	var h train.Hyper
	dir = filepath.Clean(dir) // runs/l2/ is the run l2 of the store runs
	if st, why := (&Store{Dir: filepath.Dir(dir)}).Check(filepath.Base(dir), false); st != Done {
		if why != "" {
			return h, fmt.Errorf("run directory %s is %s: %s", dir, st, why)
		}
		return h, fmt.Errorf("run directory %s is %s, not done", dir, st)
	}
	if h, ok, err := readChoice(dir); ok || !errors.Is(err, fs.ErrNotExist) {
		return h, err
	}
	path := filepath.Join(dir, TrainSpecFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		path = filepath.Join(dir, SpecFile)
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return h, err
	}
	var spec train.RunSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	if spec.Hyper == (train.Hyper{}) {
		return h, fmt.Errorf("%s records no suite-phase hyper-parameters (hyper): not a run of beluga train or of a sweep's training", path)
	}
	return spec.Hyper, nil
}

// Run implements Runner: package train writes its outputs under dir/train,
// then the run's result file is written for the reports.
func (r *TrainRunner) Run(ctx context.Context, run Run, dir string) error {
	s, err := r.Spec(ctx, run)
	if err != nil {
		return err
	}
	switch run.Score {
	case ScoreTrial:
		t, err := train.RunTrial(ctx, s)
		if err != nil {
			return err
		}
		return writeJSON(filepath.Join(dir, TrialFile), t)
	case ScoreSearch:
		return r.search(run, dir)
	}
	// What the run trains — its effective spec, with the paths and the
	// searched hyper-parameters — is kept beside the run's own spec.
	if err := writeJSON(filepath.Join(dir, TrainSpecFile), s.Effective()); err != nil {
		return err
	}
	res, err := train.Run(ctx, s, filepath.Join(dir, "train"))
	if err != nil {
		return err
	}
	return WriteResult(dir, resultOf(res, run.Score == ScoreIID || run.Score == ScoreSeen))
}

// resultOf is the result file of a run; constant records the constant
// predictors' scores (for runs scored on every functionality).
func resultOf(res *train.Result, constant bool) *Result {
	out := &Result{IIDCorrect: res.IIDCorrect, IIDMetrics: res.IIDMetrics, Flags: metrics.Sanity(res.SanityInput()), Functionalities: funcResults(res.Suite),
		IIDEval: res.IIDEval, IIDEvalCorrect: res.IIDEvalCorrect, GroupBalance: res.GroupBalance}
	if !constant || len(res.Constant) == 0 {
		return out
	}
	out.IIDGold = res.IIDGold
	for _, c := range res.Constant {
		out.Constant = append(out.Constant, ConstantResult{Label: c.Label, Class: slices.Index(res.Labels, c.Label), Functionalities: funcResults(c.Suite)})
	}
	return out
}

// funcResults turns a scored suite into per-functionality verdict strings,
// leaving out the functionalities BeLUGA cannot score.
func funcResults(r *metrics.Result) []FuncResult {
	verdicts := map[string]*strings.Builder{}
	for _, c := range r.Cases {
		b := verdicts[c.Functionality]
		if b == nil {
			b = &strings.Builder{}
			verdicts[c.Functionality] = b
		}
		b.WriteByte(map[metrics.Verdict]byte{metrics.Pass: Pass, metrics.Fail: Fail, metrics.Filtered: Filtered}[c.Verdict])
	}
	var out []FuncResult
	for _, f := range r.Functionalities {
		if f.Excluded {
			continue // BeLUGA cannot score it (every case filtered with a confident model)
		}
		out = append(out, FuncResult{Name: f.Name, Class: f.Class, Type: string(f.Type), Verdicts: verdicts[f.Name].String()})
	}
	return out
}

// samePoint says whether two hyper-parameters are one point of a search's
// grid: the same epochs, batch size and learning rate.
func samePoint(a, b train.Hyper) bool {
	return a.Epochs == b.Epochs && a.BatchSize == b.BatchSize && a.LR == b.LR
}

// TrialFile is what a search's trial writes: its point of the grid and
// its validation scores (train.Trial).
const TrialFile = "trial.json"

// search picks the best of a done search's trials (train.Best, BeLUGA's
// rule) from their TrialFiles and records the grid, every trial and the
// choice in dir's SearchFile. It trains nothing.
func (r *TrainRunner) search(run Run, dir string) error {
	grid := run.Search.grid(run.Method)
	points := grid.Points(run.Train.Hyper.Loss)
	if len(run.Trials) != len(points) {
		return fmt.Errorf("search of %d points lists %d trials", len(points), len(run.Trials))
	}
	trials := make([]train.Trial, len(run.Trials))
	for i, id := range run.Trials {
		if r.Store == nil || r.Store.State(id) != Done {
			return fmt.Errorf("needs trial %s, which is not done", id)
		}
		path := filepath.Join(r.Store.RunDir(id), TrialFile)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &trials[i]); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if h, p := trials[i].Hyper, points[i]; !samePoint(h, p) {
			return fmt.Errorf("%s: a trial of lr %g, batch %d, epochs %g, not the search's point %d (lr %g, batch %d, epochs %g)",
				path, h.LR, h.BatchSize, h.Epochs, i+1, p.LR, p.BatchSize, p.Epochs)
		}
	}
	best, err := train.Best(trials)
	if err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, SearchFile), SearchRecord{Grid: grid, Trials: trials, Chosen: trials[best].Hyper})
}

// Search chooses spec's suite-phase epochs, batch size and learning rate
// over grid on T_val in one process (train.Search: every trial in turn,
// for beluga train --search) and records the grid, every trial and the
// choice in dir's SearchFile, as a sweep's search run does.
func Search(ctx context.Context, spec train.RunSpec, grid train.Grid, dir string) (train.Hyper, []train.Trial, error) {
	best, trials, err := train.Search(ctx, spec, grid)
	if err != nil {
		return best, trials, err
	}
	return best, trials, writeJSON(filepath.Join(dir, SearchFile), SearchRecord{Grid: grid, Trials: trials, Chosen: best})
}
