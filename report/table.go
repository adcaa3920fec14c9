package report

import (
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
)

// Functionality describes one column of a per-functionality view.
type Functionality struct {
	Name, Class, Type string
}

// Row is one row of Table 3: the IID baseline or a configuration × method
// at the values of its axes. Its cells (Cell) hold every value, p-value,
// interval and flag of the row; a value over several replicates (seeds,
// grid points) is their mean, the cell keeping each replicate's.
type Row struct {
	Configuration, Method string
	// Axes are the values of the row's axes (experiments.Run.Axes),
	// e.g. "irm_lambda=10"; empty for a configuration × method swept along
	// none.
	Axes string
	// Reference marks a computed baseline row (Options.Baselines): shown,
	// never bold, not tested against the IID baseline.
	Reference bool

	cells map[CellKey]*Cell
}

// Label is the row's display name, e.g. "IID+T: LP".
func (r *Row) Label() string {
	return r.Configuration + ": " + r.methodLabel()
}

// Table is Table 3 with everything needed for Figure 1.
type Table struct {
	// Tasks in BeLUGA's order (sentiment, QQP, SQuAD; experiments.BuiltinTasks), then
	// any other task in the order met.
	Tasks []string
	// Scores are experiments.Scores, then the metadata scores
	// ("meta:COLUMN") some run has, in run order.
	Scores []string
	// Functionalities[task] in suite order.
	Functionalities map[string][]Functionality
	Rows            []*Row
	// Replicates names the seeds × grid points, e.g. "seed=1"; a table of
	// one replicate is BeLUGA's.
	Replicates []string
	// Groups[task][score] lists the folds of a held-out score in run
	// order: the functionalities, classes or test types held out, or the
	// values of a metadata score (experiments.IsMetaScore) — Checking
	// HateCheck's target identities for meta:target_ident. Each is a
	// group of the per-group tables (GroupLines); a metadata score's are
	// columns of Table 3 too.
	Groups map[string]map[string][]string
	// EvalSets[task] names the task's extra i.i.d. evaluation sets
	// (experiments.Run.IIDEval) that some run was scored on, sorted.
	EvalSets map[string][]string
	// CI is the level of the bootstrap intervals in percent (0: none).
	CI float64
	// Bootstrap is the kind of the intervals (Options.Bootstrap) when CI
	// is set.
	Bootstrap string
	// Metrics[task] are the i.i.d. metrics the task declares beside
	// accuracy (experiments.Task.Metrics: macro_f1, f1), a column each.
	Metrics map[string][]string
	// GAccuracy is which i.i.d. score a held-out G is the harmonic mean
	// with (Options.GAccuracy).
	GAccuracy string
	// beluga[task] is the BeLUGA task (sentiment, qqp, squad) a task is,
	// when it is one.
	beluga map[string]string
	// gaps are the runs of the sweep the table lacks (Options.Partial),
	// missingRows the flags of those of rows the table has no cell of.
	gaps        []Gap
	missingRows []RunFlag
	// base is the index in Rows of the row every other is tested against
	// (Options.Baseline); -1 for none.
	base int
	// refs are the computed constant predictors (majority class, one per
	// label), scored on every cell's cases whether or not they are shown
	// (Options.Baselines): a trained value not above the best of them is
	// marked.
	refs []*Row
	// sets[task][score] is the column's set of cases, groupSets the set
	// of each of its groups; caseCounts[task][k] is functionality k's
	// number of T_test cases.
	sets       map[string]map[string]*caseSet
	groupSets  map[string]map[string]map[string]*caseSet
	caseCounts map[string][]int
}

// Options controls significance tests and intervals.
type Options struct {
	// Trials of approximate randomisation; 0 means DefaultTrials.
	Trials int
	// Seed of the randomisation's swap draws and of the bootstrap's
	// resamples; 0 means DefaultSeed.
	Seed uint32
	// CI, when set, adds bootstrap intervals at this level in percent
	// (e.g. 95) over test cases and i.i.d. examples.
	CI float64
	// Resamples is the bootstrap's B; 0 means metrics.DefaultResamples.
	Resamples int
	// Bootstrap is what the intervals resample: BootstrapHierarchical
	// (functionalities, then cases within them) or BootstrapCases (cases
	// within each functionality); "" means DefaultBootstrap.
	Bootstrap string
	// Baselines shows the computed rows after the trained ones: the
	// majority class and a constant predictor per label (ConfigBaseline),
	// scored on the runs' own i.i.d. test set and on every cell's cases.
	// They are computed whether or not they are shown: a value not above
	// the best of them is marked (MarkTrivial).
	Baselines bool
	// Partial builds the table of a sweep with runs not done (gaps: see
	// FromStore), marking the cells they leave incomplete; without it such
	// a sweep is refused (IncompleteError).
	Partial bool
	// MixedInputs builds the table of runs of one task that read
	// different content for one input (MixedInputsError).
	MixedInputs bool
	// Inputs, when set, digests the inputs of done runs again: a run
	// whose files changed since it ran is stale (experiments.StatusOf).
	Inputs *experiments.Inputs
	// Baseline names the row every other row is tested against (and
	// marked ↑/↓ against): "" for the default (DefaultBaseline), "none"
	// for no tests, else a row as ParseRowRef reads it ("IID
	// train_size=4000", "IID+T: L2").
	Baseline string
	// GAccuracy is which i.i.d. score a held-out G (func, class, type,
	// a metadata score) is the harmonic mean with: GAccuracySeen (the
	// default, BeLUGA's: the seen run's) or GAccuracyFold (each fold
	// run's own, averaged over the folds).
	GAccuracy string
}

// The choices of Options.GAccuracy.
const (
	// GAccuracySeen pairs a held-out suite score with the seen run's
	// i.i.d. score, as BeLUGA does: significance_testing.py's get_score
	// and gen_graphics.ipynb compute every G of a configuration × method
	// from the i.i.d. predictions of its model trained on all of T_train
	// (get_model_name's "-all" model), one i.i.d. score per row.
	GAccuracySeen = "seen"
	// GAccuracyFold pairs it with the i.i.d. score of the models that
	// produced it: the mean over the score's fold runs of each one's
	// i.i.d. accuracy. A fold that trains on less suite data may also
	// move the i.i.d. score; this G charges that to the held-out score.
	GAccuracyFold = "fold"
)

// The bootstrap kinds of Options.Bootstrap (docs/statistics.md).
const (
	// BootstrapHierarchical resamples functionalities, then cases within
	// each resampled functionality; i.i.d. examples by themselves.
	BootstrapHierarchical = "hierarchical"
	// BootstrapCases resamples cases within each functionality and the
	// i.i.d. examples: test-set noise for this suite's functionalities.
	BootstrapCases = "cases"
)

// DefaultBootstrap is hierarchical: the suite scores and G claim
// generalisation to functionalities (G_func, G_class and G_type hold whole
// functionalities out), and a suite's functionalities are a sample of the
// ones a user could have written, so their spread belongs in the interval;
// cases of one template are correlated as well, which the case-level
// interval treats as independent.
const DefaultBootstrap = BootstrapHierarchical

// BeLUGA's randomisation test: 10,000 trials, random.Random(42).
const (
	DefaultTrials = 10000
	DefaultSeed   = 42
)

func (o Options) withDefaults() (Options, error) {
	if o.Trials <= 0 {
		o.Trials = DefaultTrials
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.CI != 0 && !(o.CI > 0 && o.CI < 100) {
		return o, fmt.Errorf("confidence level %v%% is not in (0, 100)", o.CI)
	}
	if o.Resamples < 0 {
		return o, fmt.Errorf("%d bootstrap resamples", o.Resamples)
	}
	switch o.Bootstrap {
	case "":
		o.Bootstrap = DefaultBootstrap
	case BootstrapHierarchical, BootstrapCases:
	default:
		return o, fmt.Errorf("unknown bootstrap %q (want %s or %s)", o.Bootstrap, BootstrapHierarchical, BootstrapCases)
	}
	switch o.GAccuracy {
	case "":
		o.GAccuracy = GAccuracySeen
	case GAccuracySeen, GAccuracyFold:
	default:
		return o, fmt.Errorf("unknown G accuracy %q (want %s or %s)", o.GAccuracy, GAccuracySeen, GAccuracyFold)
	}
	return o, nil
}

// cellRuns holds one (task, configuration, method, score) cell's runs by
// replicate.
type cellRuns map[string]*experiments.Result // replicate key → result (merged over folds)

// replicate identifies a seed × grid point; runs of one replicate are paired
// with the baseline's run of the same replicate.
func replicate(r experiments.Run) string { return r.Replicate() }

// replicateKeys readies a sweep's runs for the table: each computation
// once (runs are identified by their effective spec, so two runs of one
// ID are one replicate, never two), and replicates told apart only by
// the settings that vary among them. A setting the grid gives one value
// names no replicate: the IID baseline, which reads iid_lr, and a suite
// run, which reads lr, are then one replicate of their seed, as they are
// when each reads only its own phase's settings (experiments.Run.Reads).
func replicateKeys(runs []experiments.Run) []experiments.Run {
	var out []experiments.Run
	seen := map[string]bool{}
	values := map[string]map[string]bool{} // non-axis setting → its values
	for _, r := range runs {
		if seen[r.ID()] {
			continue
		}
		seen[r.ID()] = true
		out = append(out, r)
		for k, v := range r.SweptValues() {
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			values[k][fmt.Sprint(v)] = true
		}
	}
	for i, r := range out {
		var swept []string
		for _, p := range r.Swept {
			if k := experiments.SettingName(p); experiments.IsAxis(k) || len(values[k]) > 1 {
				swept = append(swept, p)
			}
		}
		out[i].Swept = swept
	}
	return out
}

// rowKey identifies a row: a configuration × method and the values of its
// axes (experiments.Run.Axes), e.g. IRM at λ = 10.
type rowKey struct{ config, method, axes string }

func rowKeyOf(r experiments.Run) rowKey { return rowKey{r.Configuration, r.Method, r.Axes()} }

func (r *Row) key() rowKey { return rowKey{r.Configuration, r.Method, r.Axes} }

// FromStore builds the table of a sweep from the runs of it that are done
// in the store. Runs not done are refused, each named with its state and
// why (IncompleteError), unless opt.Partial, which leaves them out and
// marks the cells they leave incomplete; done runs of one task that read
// different inputs are refused unless opt.MixedInputs.
func FromStore(store *experiments.Store, runs []experiments.Run, opt Options) (*Table, error) {
	runs = replicateKeys(runs)
	done, gaps := split(store, runs, opt)
	if len(done) == 0 {
		if len(gaps) > 0 && !opt.Partial {
			return nil, &IncompleteError{Store: store.Dir, Total: len(runs), Gaps: gaps}
		}
		return nil, fmt.Errorf("run store %s: no finished runs", store.Dir)
	}
	if !opt.MixedInputs {
		if err := checkInputs(done); err != nil {
			return nil, fmt.Errorf("run store %s: %w", store.Dir, err)
		}
	}
	if len(gaps) > 0 && !opt.Partial {
		return nil, &IncompleteError{Store: store.Dir, Total: len(runs), Gaps: gaps}
	}
	// The runs the sweep asked for, done or not, decide the columns and
	// the groups a complete cell needs.
	t, err := build(store, done, opt, runs)
	if err != nil {
		return nil, err
	}
	t.gaps = gaps
	t.markGaps(gaps)
	return t, nil
}

// FromDir builds the table of every run a store directory records (its
// sweeps and every run with a spec) as FromStore does.
//
// Runs come in the order of the sweeps the store recorded (Expand's, as a
// spec's table lists them: learning-curve sizes by number, held-out groups
// in suite order), then the others by directory.
func FromDir(dir string, opt Options) (*Table, error) {
	store := &experiments.Store{Dir: dir}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("run store: %w", err)
	}
	runs, err := store.Runs()
	if err != nil {
		return nil, err
	}
	sortRuns(runs)
	return FromStore(store, runs, opt)
}

// Partial lists, per row, the runs of the sweep the table lacks (built with
// Options.Partial): none for a complete table.
func (t *Table) Partial() []string { return gapLines(t.gaps) }

// Lacks says whether the run of id is one the table lacks.
func (t *Table) Lacks(id string) bool {
	return slices.ContainsFunc(t.gaps, func(g Gap) bool { return g.Run.ID() == id })
}

// belugaTask names the BeLUGA task a run belongs to, in package train's
// spelling (sentiment, qqp, squad: experiments.BuiltinTasks), or "" for
// another task.
func belugaTask(r experiments.Run) string {
	t, _, _ := experiments.LookupBuiltinTask(r.Task)
	return t.Train
}

// taskRank is a run's task's place in BeLUGA's order (sentiment, QQP,
// SQuAD), after which come other tasks.
func taskRank(r experiments.Run) int {
	if _, i, ok := experiments.LookupBuiltinTask(r.Task); ok {
		return i
	}
	return len(experiments.BuiltinTasks)
}

// sortRuns orders runs read from a directory as Expand would have listed
// them, tasks in BeLUGA's order (others by name).
func sortRuns(runs []experiments.Run) {
	rank := func(list []string, v string) int {
		if i := slices.Index(list, v); i >= 0 {
			return i
		}
		return len(list)
	}
	configs := append([]string{experiments.ConfigIID}, experiments.Configurations...)
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if x, y := taskRank(a), taskRank(b); x != y {
			return x < y
		}
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		if x, y := rank(configs, a.Configuration), rank(configs, b.Configuration); x != y {
			return x < y
		}
		if x, y := experiments.MethodRank(a.Method), experiments.MethodRank(b.Method); x != y {
			return x < y
		}
		return false
	})
}

// mergeVerdicts merges the folds of a metadata score: each fold scores some
// cases of a functionality and leaves the rest Filtered, so a case's
// verdict is the one fold's that scored it (validate refuses two).
func mergeVerdicts(prev, next []experiments.FuncResult) []experiments.FuncResult {
	out := slices.Clone(prev)
	for _, f := range next {
		i := slices.IndexFunc(out, func(g experiments.FuncResult) bool { return g.Name == f.Name })
		if i < 0 {
			out = append(out, f)
			continue
		}
		v := []byte(out[i].Verdicts)
		for j := range min(len(v), len(f.Verdicts)) {
			if v[j] == experiments.Filtered {
				v[j] = f.Verdicts[j]
			}
		}
		out[i].Verdicts = string(v)
	}
	return out
}

// resultSuiteScore is a run's suite score from its verdicts: the mean pass
// rate of its functionalities that have one.
func resultSuiteScore(res *experiments.Result) float64 {
	var rates []float64
	for _, f := range res.Functionalities {
		rates = append(rates, f.PassRate())
	}
	return metrics.NanMean(rates)
}

// knownScores are the scores a table reads: the baseline's and the registry's.
var knownScores = append([]string{experiments.ScoreIID}, experiments.Scores...)

// heldOutGroups lists, per task and held-out score, the folds the runs
// have, in run order: what a complete cell of that score merges, and the
// groups of the per-group tables.
func heldOutGroups(runs []experiments.Run) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, r := range runs {
		in := infoOf(r)
		if _, ok := experiments.FoldKindOf(in.Score); !ok || in.Fold == "" {
			continue
		}
		if out[in.Task] == nil {
			out[in.Task] = map[string][]string{}
		}
		if !slices.Contains(out[in.Task][in.Score], in.Fold) {
			out[in.Task][in.Score] = append(out[in.Task][in.Score], in.Fold)
		}
	}
	return out
}

// askedScores are the scores the runs were asked for, the table's columns:
// the registry's in Table 3's order, then metadata scores in run order. A
// sweep of baselines alone (configurations: [IID]) shows seen: the
// baseline's suite score on T_test.
func askedScores(runs []experiments.Run) []string {
	var meta []string
	has := map[string]bool{}
	for _, r := range runs {
		in := infoOf(r)
		has[in.Score] = true
		if experiments.IsMetaScore(in.Score) && !slices.Contains(meta, in.Score) {
			meta = append(meta, in.Score)
		}
	}
	var out []string
	for _, s := range experiments.Scores {
		if has[s] {
			out = append(out, s)
		}
	}
	out = append(out, meta...)
	if !slices.Contains(out, experiments.ScoreSeen) {
		out = append([]string{experiments.ScoreSeen}, out...)
	}
	return out
}

// build makes the table of the done runs among asked (every run the
// sweep asked for, done or not): the asked runs decide the columns (the
// scores they have) and the folds a complete held-out cell merges, as a
// func cell has a value only when every functionality's fold is done.
func build(store *experiments.Store, runs []experiments.Run, opt Options, asked []experiments.Run) (*Table, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	groups := heldOutGroups(asked)
	// Tasks in BeLUGA's order; the stable sort keeps the given order
	// otherwise, so a spec's own order decides among other tasks.
	runs = slices.Clone(runs)
	sort.SliceStable(runs, func(i, j int) bool { return taskRank(runs[i]) < taskRank(runs[j]) })
	t := &Table{Scores: askedScores(append(slices.Clone(asked), runs...)), Functionalities: map[string][]Functionality{}, beluga: map[string]string{},
		Groups: groups, EvalSets: map[string][]string{}, Metrics: map[string][]string{}, GAccuracy: opt.GAccuracy,
		caseCounts: map[string][]int{}, base: -1}
	type metaCell struct {
		task  string
		row   rowKey
		score string
		rep   string
	}
	metaFolds := map[metaCell]int{} // folds merged into a metadata cell
	if opt.CI > 0 {
		t.CI, t.Bootstrap = opt.CI, opt.Bootstrap
	}
	results := make([]*experiments.Result, len(runs))
	for i, r := range runs {
		res, err := experiments.ReadResult(store.RunDir(r.ID()))
		if err != nil {
			return nil, fmt.Errorf("run %s (%s): %w", r.ID(), r.Label(), err)
		}
		results[i] = res
	}
	if err := validate(runs, results); err != nil {
		return nil, err
	}
	cells := map[string]map[rowKey]map[string]cellRuns{}                    // task → row → score → runs
	folds := map[string]map[rowKey]map[string]map[string]cellRuns{}         // task → row → score → group → each replicate's fold result
	foldResults := map[string]map[string]map[string][]*experiments.Result{} // task → score → group → every row's fold results
	var rowOrder []rowKey
	seeds := map[string]int64{}
	flags := cellFlags{}
	for i, r := range runs {
		res := results[i]
		in := infoOf(r)
		flags.add(r.Task, rowKeyOf(r), r.Score, r, res.Flags)
		for set := range res.IIDEvalCorrect {
			if !slices.Contains(t.EvalSets[r.Task], set) {
				t.EvalSets[r.Task] = append(t.EvalSets[r.Task], set)
				slices.Sort(t.EvalSets[r.Task])
			}
		}
		if !slices.Contains(t.Tasks, r.Task) {
			t.Tasks = append(t.Tasks, r.Task)
			t.beluga[r.Task] = belugaTask(r)
			cells[r.Task] = map[rowKey]map[string]cellRuns{}
			folds[r.Task] = map[rowKey]map[string]map[string]cellRuns{}
			foldResults[r.Task] = map[string]map[string][]*experiments.Result{}
		}
		for _, m := range in.Metrics {
			if !slices.Contains(t.Metrics[r.Task], m) {
				t.Metrics[r.Task] = append(t.Metrics[r.Task], m)
			}
		}
		k := rowKeyOf(r)
		if !slices.Contains(rowOrder, k) {
			rowOrder = append(rowOrder, k)
		}
		if cells[r.Task][k] == nil {
			cells[r.Task][k] = map[string]cellRuns{}
			folds[r.Task][k] = map[string]map[string]cellRuns{}
		}
		rep := replicate(r)
		if _, ok := seeds[rep]; !ok {
			seeds[rep] = r.Seed
			t.Replicates = append(t.Replicates, rep)
		}
		byMeta := experiments.IsMetaScore(r.Score)
		if _, heldOut := experiments.FoldKindOf(r.Score); heldOut {
			if folds[r.Task][k][r.Score] == nil {
				folds[r.Task][k][r.Score] = map[string]cellRuns{}
			}
			if folds[r.Task][k][r.Score][r.Fold] == nil {
				folds[r.Task][k][r.Score][r.Fold] = cellRuns{}
			}
			folds[r.Task][k][r.Score][r.Fold][rep] = res
			if foldResults[r.Task][r.Score] == nil {
				foldResults[r.Task][r.Score] = map[string][]*experiments.Result{}
			}
			foldResults[r.Task][r.Score][r.Fold] = append(foldResults[r.Task][r.Score][r.Fold], res)
		}
		if byMeta {
			metaFolds[metaCell{r.Task, k, r.Score, rep}]++
		}
		if slices.Contains(knownScores, r.Score) || byMeta {
			if cells[r.Task][k][r.Score] == nil {
				cells[r.Task][k][r.Score] = cellRuns{}
			}
			c := cells[r.Task][k][r.Score]
			if prev := c[rep]; prev != nil {
				// Held-out folds of one cell: merge their functionalities
				// (into a copy: the result may be shared); the i.i.d.
				// score of a held-out cell is its folds' (foldIID).
				merged := *prev
				if byMeta {
					merged.Functionalities = mergeVerdicts(prev.Functionalities, res.Functionalities)
				} else {
					merged.Functionalities = append(slices.Clone(prev.Functionalities), res.Functionalities...)
				}
				c[rep] = &merged
			} else {
				c[rep] = res
			}
		}
		// The functionality list comes from a run scored on all of them.
		if r.Score == experiments.ScoreIID || (r.Score == experiments.ScoreSeen && t.Functionalities[r.Task] == nil) {
			var fs []Functionality
			var lengths []int
			for _, f := range res.Functionalities {
				fs = append(fs, Functionality{f.Name, f.Class, f.Type})
				lengths = append(lengths, len(f.Verdicts))
			}
			t.Functionalities[r.Task], t.caseCounts[r.Task] = fs, lengths
		}
	}
	for mc, n := range metaFolds {
		if n < len(groups[mc.task][mc.score]) {
			// Not every held-out value is done: no suite score yet.
			delete(cells[mc.task][mc.row][mc.score], mc.rep)
		}
	}
	t.buildCaseSets(foldResults)
	// A replicate another includes is no replicate of its own: its runs
	// read fewer settings, and stand for each replicate that includes it.
	all := slices.Clone(t.Replicates)
	t.Replicates = slices.DeleteFunc(t.Replicates, func(sub string) bool {
		return slices.ContainsFunc(all, func(rep string) bool { return rep != sub && includes(rep, sub) })
	})
	sort.SliceStable(t.Replicates, func(i, j int) bool { return seeds[t.Replicates[i]] < seeds[t.Replicates[j]] })
	for _, k := range rowOrder {
		t.Rows = append(t.Rows, &Row{Configuration: k.config, Method: k.method, Axes: k.axes})
	}
	// The baselines' rows first.
	sort.SliceStable(t.Rows, func(i, j int) bool {
		return t.Rows[i].Configuration == experiments.ConfigIID && t.Rows[j].Configuration != experiments.ConfigIID
	})
	if t.base, err = t.findBaseline(opt.Baseline); err != nil {
		return nil, err
	}
	data := map[*Row]*rowData{}
	for _, row := range t.Rows {
		data[row] = newRowData(t, cells, folds, row.key())
		data[row].fill(t, row)
	}
	if t.base >= 0 {
		base := t.Rows[t.base]
		for i, row := range t.Rows {
			if i == t.base {
				continue
			}
			b := data[base].alignedTo(data[row].reps)
			if err := significance(t, b, data[row], row, opt); err != nil {
				return nil, fmt.Errorf("%s against the baseline: %w", row.Label(), err)
			}
			compareFunctionalities(t, b, data[row], row)
			overSeeds(t, base, row)
		}
	}
	for _, row := range t.Rows {
		if err := groupTests(t, data, row, opt); err != nil {
			return nil, fmt.Errorf("%s: %w", row.Label(), err)
		}
	}
	if opt.CI > 0 {
		for _, row := range t.Rows {
			if err := intervals(t, data[row], row, opt); err != nil {
				return nil, fmt.Errorf("%s: %w", row.Label(), err)
			}
		}
	}
	t.fillFlags(flags)
	refData := t.addBaselines(runs, results)
	if opt.CI > 0 {
		for _, row := range t.refs {
			if err := intervals(t, refData[row], row, opt); err != nil {
				return nil, fmt.Errorf("%s: %w", row.Label(), err)
			}
		}
	}
	if opt.CI > 0 {
		all := append(slices.Clone(t.Rows), t.refs...)
		for k, v := range refData {
			data[k] = v
		}
		for _, row := range all {
			if err := groupIntervals(t, data, row, opt); err != nil {
				return nil, fmt.Errorf("%s: %w", row.Label(), err)
			}
		}
	}
	t.fillTrivial()
	if opt.Baselines {
		t.Rows = append(t.Rows, t.refs...)
	}
	t.shortenReplicates()
	return t, nil
}

// shortenReplicates names replicates by what tells them apart: a
// hyper-parameter with the same value in every replicate (a spec's fixed
// grid values) is left out of the name, so "seed=42 lr=0.001" becomes
// "seed=42" when every replicate has lr=0.001.
func (t *Table) shortenReplicates() {
	if len(t.Replicates) < 2 {
		return
	}
	common := map[string]int{}
	for _, rep := range t.Replicates {
		for _, part := range strings.Fields(rep) {
			common[part]++
		}
	}
	short := func(rep string) string {
		var keep []string
		for _, part := range strings.Fields(rep) {
			if strings.HasPrefix(part, "seed=") || common[part] < len(t.Replicates) {
				keep = append(keep, part)
			}
		}
		return strings.Join(keep, " ")
	}
	for i, rep := range t.Replicates {
		t.Replicates[i] = short(rep)
	}
	for _, r := range t.Rows {
		for _, c := range r.cells {
			if c.Reps == nil {
				continue
			}
			reps := make(map[string]float64, len(c.Reps))
			for k, v := range c.Reps {
				reps[short(k)] = v
			}
			c.Reps = reps
		}
	}
}

// includes says whether replicate rep names every setting sub names: a run
// of sub reads fewer settings, and stands for rep's run where a pair is
// wanted (experiments.Run.Reads).
func includes(rep, sub string) bool {
	parts := strings.Fields(rep)
	for _, p := range strings.Fields(sub) {
		if !slices.Contains(parts, p) {
			return false
		}
	}
	return true
}

// atRep is m's value of replicate rep: its own, else that of the one
// replicate of m's that rep includes (a row whose runs read fewer
// settings, such as the IID baseline's, pairs each of its runs with every
// replicate that differs only in a setting it does not read).
func atRep[V any](m map[string]V, rep string) (V, bool) {
	if v, ok := m[rep]; ok {
		return v, true
	}
	var found V
	n := 0
	for k, v := range m {
		if includes(rep, k) {
			found, n = v, n+1
		}
	}
	return found, n == 1
}

// alignMap is m with a value for each of reps it has through atRep.
func alignMap[V any](m map[string]V, reps []string) map[string]V {
	out := maps.Clone(m)
	for _, rep := range reps {
		if v, ok := atRep(m, rep); ok {
			out[rep] = v
		}
	}
	return out
}

// alignedTo is b with a value for each of reps that b has through atRep,
// for pairing b's runs with those of a row of replicates reps: the
// statistics of b's own row still count each of its runs once.
func (b *rowData) alignedTo(reps []string) *rowData {
	align := func(m map[string][]bool) map[string][]bool { return alignMap(m, reps) }
	alignV := func(m map[string][][]byte) map[string][][]byte { return alignMap(m, reps) }
	a := *b
	a.iid, a.eval, a.hits, a.seen, a.foldIID = map[string]map[string][]bool{}, map[string]map[string]map[string][]bool{},
		map[string]map[string]map[string][][]byte{}, map[string]map[string][][]byte{}, map[string]map[string]map[string][]bool{}
	for task, m := range b.iid {
		a.iid[task] = align(m)
	}
	for task, sets := range b.eval {
		a.eval[task] = map[string]map[string][]bool{}
		for set, m := range sets {
			a.eval[task][set] = align(m)
		}
	}
	for task, scores := range b.hits {
		a.hits[task] = map[string]map[string][][]byte{}
		for score, m := range scores {
			a.hits[task][score] = alignV(m)
		}
	}
	for task, m := range b.seen {
		a.seen[task] = alignV(m)
	}
	for task, scores := range b.foldIID {
		a.foldIID[task] = map[string]map[string][]bool{}
		for score, m := range scores {
			a.foldIID[task][score] = align(m)
		}
	}
	return &a
}

// rowData holds, per replicate, the i.i.d. correctness per task and the
// verdicts per task, score and functionality: what scores are computed from
// and what randomisation swaps.
type rowData struct {
	reps []string
	iid  map[string]map[string][]bool              // task → rep → correct
	eval map[string]map[string]map[string][]bool   // task → evaluation set → rep → correct
	hits map[string]map[string]map[string][][]byte // task → score → rep → func → verdicts, on the score's cases
	// seen holds the row's verdicts on the whole suite (its seen run's;
	// the baseline's and a constant predictor's own), per task and rep:
	// what a held-out group is compared with on the group's cases.
	seen map[string]map[string][][]byte
	// foldIID holds, per task, held-out score and rep, the i.i.d.
	// correctness of every fold run of the score one after another
	// (GAccuracyFold).
	foldIID map[string]map[string]map[string][]bool
	// metricVals holds the i.i.d. metrics in [0, 1] per task and rep.
	metricVals map[string]map[string]map[string]float64
}

func newRowData(t *Table, cells map[string]map[rowKey]map[string]cellRuns, folds map[string]map[rowKey]map[string]map[string]cellRuns, k rowKey) *rowData {
	d := &rowData{iid: map[string]map[string][]bool{}, eval: map[string]map[string]map[string][]bool{}, hits: map[string]map[string]map[string][][]byte{},
		seen: map[string]map[string][][]byte{}, foldIID: map[string]map[string]map[string][]bool{}, metricVals: map[string]map[string]map[string]float64{}}
	for _, task := range t.Tasks {
		byScore := cells[task][k]
		d.iid[task] = map[string][]bool{}
		d.hits[task] = map[string]map[string][][]byte{}
		d.foldIID[task] = map[string]map[string][]bool{}
		iidCell := byScore[experiments.ScoreSeen]
		if k.config == experiments.ConfigIID {
			iidCell = byScore[experiments.ScoreIID]
		}
		d.eval[task] = map[string]map[string][]bool{}
		for rep, res := range iidCell {
			d.iid[task][rep] = res.IIDCorrect
			for set, c := range res.IIDEvalCorrect {
				if d.eval[task][set] == nil {
					d.eval[task][set] = map[string][]bool{}
				}
				d.eval[task][set][rep] = c
			}
			if !slices.Contains(d.reps, rep) {
				d.reps = append(d.reps, rep)
			}
		}
		d.seen[task] = map[string][][]byte{}
		d.metricVals[task] = map[string]map[string]float64{}
		for rep, res := range iidCell {
			d.seen[task][rep] = verdictsOf(t, task, res, false)
			d.metricVals[task][rep] = res.IIDMetrics
		}
		for _, score := range t.Scores {
			c := byScore[score]
			if k.config == experiments.ConfigIID {
				c = byScore[experiments.ScoreIID]
			}
			d.hits[task][score] = map[string][][]byte{}
			for rep, res := range c {
				d.hits[task][score][rep] = t.set(task, score, "").restrict(verdictsOf(t, task, res, experiments.IsMetaScore(score)))
			}
			if _, heldOut := experiments.FoldKindOf(score); !heldOut || k.config == experiments.ConfigIID {
				continue
			}
			d.foldIID[task][score] = map[string][]bool{}
			for _, rep := range d.reps {
				var all []bool
				complete := true
				for _, g := range t.Groups[task][score] {
					res := folds[task][k][score][g][rep]
					if res == nil || len(res.IIDCorrect) == 0 {
						complete = false
						break
					}
					all = append(all, res.IIDCorrect...)
				}
				if complete && len(all) > 0 {
					d.foldIID[task][score][rep] = all
				}
			}
		}
	}
	// The table's replicate order.
	slices.SortFunc(d.reps, func(a, b string) int { return slices.Index(t.Replicates, a) - slices.Index(t.Replicates, b) })
	return d
}

// verdictsOf lays a result's verdicts out in the task's functionality
// order: nil for a functionality it did not score, or, for a metadata
// score's merged folds (complete), empty — no fold scores a functionality
// none of whose cases has a value of the column.
func verdictsOf(t *Table, task string, res *experiments.Result, complete bool) [][]byte {
	byName := map[string]string{}
	for _, f := range res.Functionalities {
		byName[f.Name] = f.Verdicts
	}
	v := make([][]byte, len(t.Functionalities[task]))
	for i, f := range t.Functionalities[task] {
		if s, ok := byName[f.Name]; ok {
			v[i] = []byte(s)
		} else if complete {
			v[i] = []byte{}
		}
	}
	return v
}

func passRate(v []byte) float64 {
	return experiments.FuncResult{Verdicts: string(v)}.PassRate()
}

func accuracy(c []bool) float64 {
	return (&experiments.Result{IIDCorrect: c}).IIDScore()
}

// fill computes the row's cells from its data: every value and its
// replicates' values; the tests against the baseline, the intervals and
// the flags are added to these cells afterwards.
func (d *rowData) fill(t *Table, row *Row) {
	var gs []float64
	avgParts := map[string][]float64{}
	for _, task := range t.Tasks {
		fillAccuracy(row.cell(IIDKey(task)), d.reps, d.iid[task])
		for _, set := range t.EvalSets[task] {
			fillAccuracy(row.cell(EvalSetKey(task, set)), d.reps, d.eval[task][set])
		}
		for _, m := range t.Metrics[task] {
			c := row.cell(MetricKey(task, m))
			c.Reps = map[string]float64{}
			var vs []float64
			for _, rep := range d.reps {
				if v, ok := d.metricVals[task][rep][m]; ok {
					c.Reps[rep] = 100 * v
					vs = append(vs, c.Reps[rep])
				}
			}
			c.Value = metrics.Mean(vs)
		}
		for _, score := range t.Scores {
			reps := d.hits[task][score]
			for k := range t.Functionalities[task] {
				c := row.cell(PassKey(task, score, "", k))
				c.Reps = map[string]float64{}
				var per []float64
				for _, rep := range d.reps {
					if v := reps[rep]; v != nil && v[k] != nil {
						c.Reps[rep] = passRate(v[k])
						per = append(per, c.Reps[rep])
					}
				}
				c.Value = metrics.NanMean(per)
			}
			g := row.cell(GKey(task, score))
			g.Reps = map[string]float64{}
			sc := row.cell(SuiteKey(task, score, ""))
			sc.Reps = map[string]float64{}
			var suite, gv []float64
			for _, rep := range d.reps {
				v, ok := reps[rep]
				if !ok {
					continue
				}
				s := suiteScore(v)
				suite = append(suite, s)
				sc.Reps[rep] = s
				if c, ok := d.accuracyFor(t, row, task, score, rep); ok {
					g.Reps[rep] = g100(accuracy(c), s)
					gv = append(gv, g.Reps[rep])
					avgParts[rep] = append(avgParts[rep], g.Reps[rep])
				}
			}
			sc.Value = metrics.Mean(suite)
			g.Value = metrics.Mean(gv)
			gs = append(gs, g.Value)
			d.fillGroups(t, row, task, score)
		}
	}
	avg := row.cell(AvgKey)
	avg.Value = metrics.Mean(gs)
	avg.Reps = map[string]float64{}
	if !math.IsNaN(avg.Value) {
		for rep, parts := range avgParts {
			if len(parts) == len(gs) {
				avg.Reps[rep] = metrics.Mean(parts)
			}
		}
	}
}

// accuracyFor is the i.i.d. correctness a row's G of a score is computed
// from in one replicate: the row's own i.i.d. score (its seen run's), or
// with GAccuracyFold for a held-out score its folds' (foldIID).
func (d *rowData) accuracyFor(t *Table, row *Row, task, score, rep string) ([]bool, bool) {
	if t.GAccuracy == GAccuracyFold && !row.Reference && row.Configuration != experiments.ConfigIID {
		if _, heldOut := experiments.FoldKindOf(score); heldOut {
			c, ok := d.foldIID[task][score][rep]
			return c, ok
		}
	}
	c, ok := d.iid[task][rep]
	return c, ok
}

// fillGroups computes the cells of a held-out score's column and groups
// on their cases (caseSet): each group's suite score and pass rates (the
// held-out folds' for a trained row; the baseline's and a constant
// predictor's own verdicts on those cases), the row's seen run on the same
// cases, and for a trained row the gap, seen − held out.
func (d *rowData) fillGroups(t *Table, row *Row, task, score string) {
	if _, heldOut := experiments.FoldKindOf(score); !heldOut {
		return
	}
	fs := t.Functionalities[task]
	trained := row.Configuration != experiments.ConfigIID && !row.Reference
	for _, g := range append([]string{""}, t.Groups[task][score]...) {
		cs := t.set(task, score, g)
		seen, gap := row.cell(SeenKey(task, score, g)), row.cell(GapKey(task, score, g))
		seen.Reps, gap.Reps = map[string]float64{}, map[string]float64{}
		held := row.cell(SuiteKey(task, score, g))
		if g != "" {
			held.Reps = map[string]float64{}
		}
		pass := make([][]float64, len(fs))
		var hv, sv, gv []float64
		for _, rep := range d.reps {
			if v, ok := d.hits[task][score][rep]; ok {
				v = cs.restrict(v)
				if g != "" {
					held.Reps[rep] = suiteScore(v)
					hv = append(hv, held.Reps[rep])
					for k := range fs {
						if v[k] != nil {
							pass[k] = append(pass[k], passRate(v[k]))
						}
					}
				}
			}
			if v, ok := d.seen[task][rep]; ok {
				seen.Reps[rep] = suiteScore(cs.restrict(v))
				sv = append(sv, seen.Reps[rep])
				if h, ok := held.Reps[rep]; ok && trained {
					gap.Reps[rep] = seen.Reps[rep] - h
					gv = append(gv, gap.Reps[rep])
				}
			}
		}
		if g != "" {
			held.Value = metrics.Mean(hv)
			for k := range fs {
				c := row.cell(PassKey(task, score, g, k))
				c.Value = metrics.NanMean(pass[k])
			}
		}
		seen.Value, gap.Value = metrics.Mean(sv), metrics.Mean(gv)
	}
}

// suiteScore is the mean pass rate over functionalities; NaN when a
// functionality has no run yet, so that an incomplete cell never looks
// complete.
func suiteScore(v [][]byte) float64 {
	rates := make([]float64, 0, len(v))
	for _, f := range v {
		if f == nil {
			return math.NaN()
		}
		rates = append(rates, passRate(f))
	}
	return metrics.NanMean(rates)
}

// g100 is G on percentages.
func g100(iid, suite float64) float64 { return metrics.HarmonicMean(iid, suite) }

// significance fills row's p-values against the baseline over cases and
// examples with package metrics' tests; replicates (seeds, grid points) are
// concatenated, each paired with the baseline's run of the same replicate.
// Every G the row has is tested (a row without func runs still gets its
// seen, class and type p-values); Avg only when the row has every G. Both
// rows' verdicts are on each column's cases (caseSet), so the test pairs
// the same cases the values are computed on. A task without i.i.d. data
// has its suite scores tested instead, by themselves.
func significance(t *Table, base, d *rowData, row *Row, opt Options) error {
	a := metrics.Scores{IID: map[string][]float64{}, Suite: map[string]map[string]map[string][]float64{}}
	b := metrics.Scores{IID: map[string][]float64{}, Suite: map[string]map[string]map[string][]float64{}}
	ro := metrics.RandomisationOptions{Tasks: nil, ScoreNames: t.Scores, Functionalities: map[string][]string{},
		TaskScores: map[string][]string{}, Trials: opt.Trials, Seed: opt.Seed}
	baseRow := t.Rows[t.base]
	tested := 0
	for _, task := range t.Tasks {
		if x, y := pairedHits(d.reps, base.iid[task], d.iid[task]); len(x) > 0 {
			a.IID[task], b.IID[task] = x, y
		}
		if len(a.IID[task]) > 0 {
			p, err := metrics.McNemarExact(a.IID[task], b.IID[task])
			if err != nil {
				return fmt.Errorf("task %s i.i.d.: %w", task, err)
			}
			row.cell(IIDKey(task)).P = p
		}
		for _, set := range t.EvalSets[task] {
			if x, y := pairedHits(d.reps, base.eval[task][set], d.eval[task][set]); len(x) > 0 {
				p, err := metrics.McNemarExact(x, y)
				if err != nil {
					return fmt.Errorf("task %s evaluation set %s: %w", task, set, err)
				}
				row.cell(EvalSetKey(task, set)).P = p
			}
		}
		if !t.hasIID(task) {
			if err := suiteSignificance(t, base, d, row, task, opt); err != nil {
				return err
			}
			continue
		}
		names := funcNames(t, task)
		ro.Tasks = append(ro.Tasks, task)
		ro.Functionalities[task] = names
		ro.TaskScores[task] = []string{}
		a.Suite[task], b.Suite[task] = map[string]map[string][]float64{}, map[string]map[string][]float64{}
		for _, score := range t.Scores {
			if math.IsNaN(row.Cell(GKey(task, score)).Value) || math.IsNaN(baseRow.Cell(GKey(task, score)).Value) {
				continue
			}
			// The suite score by itself too (a learning curve's suite
			// line is marked with it).
			p, err := suiteTest(names, base.hits[task][score], d.hits[task][score], d.reps, wholeSuite, opt)
			if err != nil {
				return fmt.Errorf("task %s %s: %w", task, score, err)
			}
			row.cell(SuiteKey(task, score, "")).P = p
			if t.GAccuracy == GAccuracyFold && len(d.foldIID[task][score]) > 0 {
				// Each score's G has its own i.i.d. part: that score alone
				// is tested here, with its folds' i.i.d. items.
				continue
			}
			ro.TaskScores[task] = append(ro.TaskScores[task], score)
			tested++
			a.Suite[task][score], b.Suite[task][score] = pairedVerdicts(d.reps, base.hits[task][score], d.hits[task][score], names)
		}
	}
	if err := foldAccuracySignificance(t, base, d, row, opt); err != nil {
		return err
	}
	if tested == 0 {
		return nil // nothing to test
	}
	res, err := metrics.Randomisation(a, b, ro)
	if err != nil {
		return err
	}
	for _, task := range ro.Tasks {
		for _, score := range ro.TaskScores[task] {
			row.cell(GKey(task, score)).P = res.G[task][score]
		}
	}
	if avg := row.cell(AvgKey); !math.IsNaN(avg.Value) && t.GAccuracy != GAccuracyFold {
		avg.P = res.Avg
	}
	return nil
}

// pairedVerdicts concatenates, per functionality, the baseline's and a
// row's hits over the replicates both have.
func pairedVerdicts(reps []string, base, row map[string][][]byte, names []string) (x, y map[string][]float64) {
	x, y = map[string][]float64{}, map[string][]float64{}
	for _, rep := range reps {
		bv, rv := base[rep], row[rep]
		if bv == nil || rv == nil {
			continue
		}
		for k, name := range names {
			if k >= len(bv) || k >= len(rv) || len(bv[k]) != len(rv[k]) {
				continue
			}
			x[name] = append(x[name], verdictHits(bv[k])...)
			y[name] = append(y[name], verdictHits(rv[k])...)
		}
	}
	return x, y
}

// foldAccuracySignificance tests, with GAccuracyFold, each held-out G on
// its own: the i.i.d. items are the folds' (each fold run's i.i.d.
// predictions paired with the baseline's), the suite items the score's.
func foldAccuracySignificance(t *Table, base, d *rowData, row *Row, opt Options) error {
	if t.GAccuracy != GAccuracyFold {
		return nil
	}
	baseRow := t.Rows[t.base]
	for _, task := range t.Tasks {
		names := funcNames(t, task)
		for _, score := range t.Scores {
			if len(d.foldIID[task][score]) == 0 || math.IsNaN(row.Cell(GKey(task, score)).Value) || math.IsNaN(baseRow.Cell(GKey(task, score)).Value) {
				continue
			}
			a := metrics.Scores{IID: map[string][]float64{}, Suite: map[string]map[string]map[string][]float64{task: {}}}
			b := metrics.Scores{IID: map[string][]float64{}, Suite: map[string]map[string]map[string][]float64{task: {}}}
			for _, rep := range d.reps {
				fc, ok1 := d.foldIID[task][score][rep]
				bc, ok2 := base.iid[task][rep]
				if !ok1 || !ok2 || len(bc) == 0 || len(fc)%len(bc) != 0 {
					continue
				}
				for i := 0; i < len(fc); i += len(bc) {
					a.IID[task] = append(a.IID[task], boolHits(bc)...)
				}
				b.IID[task] = append(b.IID[task], boolHits(fc)...)
			}
			a.Suite[task][score], b.Suite[task][score] = pairedVerdicts(d.reps, base.hits[task][score], d.hits[task][score], names)
			res, err := metrics.Randomisation(a, b, metrics.RandomisationOptions{Tasks: []string{task}, ScoreNames: []string{score},
				Functionalities: map[string][]string{task: names}, Trials: opt.Trials, Seed: opt.Seed})
			if err != nil {
				return fmt.Errorf("task %s %s: %w", task, score, err)
			}
			row.cell(GKey(task, score)).P = res.G[task][score]
		}
	}
	return nil
}

// suiteSignificance tests a task without i.i.d. data: each of the row's
// suite scores against the baseline's on the same cases.
func suiteSignificance(t *Table, base, d *rowData, row *Row, task string, opt Options) error {
	names := funcNames(t, task)
	baseRow := t.Rows[t.base]
	for _, score := range t.Scores {
		k := SuiteKey(task, score, "")
		if math.IsNaN(row.Cell(k).Value) || math.IsNaN(baseRow.Cell(k).Value) {
			continue
		}
		p, err := suiteTest(names, base.hits[task][score], d.hits[task][score], d.reps, wholeSuite, opt)
		if err != nil {
			return fmt.Errorf("task %s %s: %w", task, score, err)
		}
		row.cell(k).P = p
	}
	return nil
}

// suiteTest is the randomisation test of two rows' suite scores on the
// cases of cs (each row's verdicts of every replicate both have).
func suiteTest(names []string, x, y map[string][][]byte, reps []string, cs *caseSet, opt Options) (float64, error) {
	rx, ry := map[string][][]byte{}, map[string][][]byte{}
	for _, rep := range reps {
		if x[rep] != nil && y[rep] != nil {
			rx[rep], ry[rep] = cs.restrict(x[rep]), cs.restrict(y[rep])
		}
	}
	if len(rx) == 0 {
		return math.NaN(), nil
	}
	a, b := pairedVerdicts(reps, rx, ry, names)
	const task, score = "T", "suite"
	res, err := metrics.Randomisation(
		metrics.Scores{Suite: map[string]map[string]map[string][]float64{task: {score: a}}},
		metrics.Scores{Suite: map[string]map[string]map[string][]float64{task: {score: b}}},
		metrics.RandomisationOptions{Tasks: []string{task}, ScoreNames: []string{score}, Functionalities: map[string][]string{task: names},
			Trials: opt.Trials, Seed: opt.Seed})
	if err != nil {
		return math.NaN(), err
	}
	return res.G[task][score], nil
}

// groupTests fills the p-values of a held-out score's groups: for a row
// tested against a baseline, each metadata group's value (a column of
// Table 3) against the baseline's on the group's cases; for a trained row,
// each gap (its seen run against its held-out folds on the same cases) and
// the gap of the whole column.
func groupTests(t *Table, data map[*Row]*rowData, row *Row, opt Options) error {
	d := data[row]
	trained := row.Configuration != experiments.ConfigIID && !row.Reference
	for _, task := range t.Tasks {
		names := funcNames(t, task)
		for _, score := range t.Scores {
			if _, heldOut := experiments.FoldKindOf(score); !heldOut {
				continue
			}
			for _, g := range append([]string{""}, t.Groups[task][score]...) {
				cs := t.set(task, score, g)
				if g != "" && experiments.IsMetaScore(score) && t.base >= 0 && row != t.Rows[t.base] && !math.IsNaN(row.Cell(SuiteKey(task, score, g)).Value) {
					p, err := suiteTest(names, data[t.Rows[t.base]].alignedTo(d.reps).hits[task][score], d.hits[task][score], d.reps, cs, opt)
					if err != nil {
						return fmt.Errorf("task %s %s group %s: %w", task, score, g, err)
					}
					row.cell(SuiteKey(task, score, g)).P = p
				}
				if !trained || math.IsNaN(row.Cell(GapKey(task, score, g)).Value) {
					continue
				}
				p, err := suiteTest(names, d.seen[task], d.hits[task][score], d.reps, cs, opt)
				if err != nil {
					return fmt.Errorf("task %s %s group %q gap: %w", task, score, g, err)
				}
				row.cell(GapKey(task, score, g)).P = p
			}
		}
	}
	return nil
}

func funcNames(t *Table, task string) []string {
	fs := t.Functionalities[task]
	names := make([]string, len(fs))
	for k, f := range fs {
		names[k] = f.Name
	}
	return names
}

// compareFunctionalities tests every functionality's pass rate against the
// baseline's with McNemar's exact test over the cases both scored (paired by
// case and replicate), and controls the false discovery rate over the
// functionalities of each task and score with Benjamini–Hochberg.
func compareFunctionalities(t *Table, base, d *rowData, row *Row) {
	for _, task := range t.Tasks {
		for _, score := range t.Scores {
			ps := make([]float64, len(t.Functionalities[task]))
			for k := range ps {
				var x, y []float64
				for _, rep := range d.reps {
					bv, rv := base.hits[task][score][rep], d.hits[task][score][rep]
					if bv == nil || rv == nil || bv[k] == nil || rv[k] == nil || len(bv[k]) != len(rv[k]) {
						continue
					}
					for i := range bv[k] {
						if bv[k][i] != experiments.Filtered && rv[k][i] != experiments.Filtered {
							x = append(x, verdictHits(bv[k][i : i+1])[0])
							y = append(y, verdictHits(rv[k][i : i+1])[0])
						}
					}
				}
				ps[k] = math.NaN()
				if len(x) > 0 {
					ps[k], _ = metrics.McNemarExact(x, y)
				}
			}
			for k, q := range metrics.BenjaminiHochberg(ps) {
				c := row.cell(PassKey(task, score, "", k))
				c.P, c.Q = ps[k], q
			}
		}
	}
}

// overSeeds tests each of the row's cells that has replicates against the
// baseline's over them: a paired t-test of the per-replicate values, each
// replicate paired with the baseline's of the same replicate.
func overSeeds(t *Table, base, row *Row) {
	for k, c := range row.cells {
		b := base.cells[k]
		if c.Reps == nil || b == nil {
			continue
		}
		var x, y []float64
		for _, rep := range t.Replicates {
			u, ok1 := atRep(b.Reps, rep)
			v, ok2 := atRep(c.Reps, rep)
			if ok1 && ok2 {
				x, y = append(x, u), append(y, v)
			}
		}
		c.PSeeds, _ = metrics.PairedTTest(x, y)
	}
}

// intervals fills the row's bootstrap intervals. One resample of every
// group per bootstrap replicate serves every statistic of the row: the
// i.i.d. examples of each task and replicate, and the cases of each
// functionality per score and replicate; a statistic over several
// replicates is the mean of theirs, as the table's value is. A
// hierarchical bootstrap makes each task's functionalities one cluster:
// one draw of functionalities per replicate serves every score and seed of
// the row. A pass rate's interval is about one functionality, so it is
// always over its cases (the same draws in either kind).
func intervals(t *Table, d *rowData, row *Row, opt Options) error {
	var groups [][]float64
	iidGroup := map[string]map[string]int{}              // task → rep → group
	funcGroups := map[string]map[string]map[string]int{} // task → score → rep → first group
	for _, task := range t.Tasks {
		iidGroup[task] = map[string]int{}
		funcGroups[task] = map[string]map[string]int{}
		for _, rep := range d.reps {
			if c, ok := d.iid[task][rep]; ok {
				iidGroup[task][rep] = len(groups)
				groups = append(groups, boolHits(c))
			}
		}
		for si, score := range t.Scores {
			funcGroups[task][score] = map[string]int{}
			if si > 0 && (row.Configuration == experiments.ConfigIID || row.Reference) && t.set(task, score, "") == wholeSuite && t.set(task, t.Scores[0], "") == wholeSuite {
				// The baseline's verdicts stand in for every score on the
				// whole suite: one resample of them serves them all.
				funcGroups[task][score] = funcGroups[task][t.Scores[0]]
				continue
			}
			for _, rep := range d.reps {
				v := d.hits[task][score][rep]
				if v == nil || slices.ContainsFunc(v, func(f []byte) bool { return f == nil }) {
					continue
				}
				funcGroups[task][score][rep] = len(groups)
				for _, f := range v {
					groups = append(groups, verdictHits(f))
				}
			}
		}
	}
	// The evaluation sets' examples, after every other group, so that a
	// table without them resamples as before.
	evalGroup := map[string]map[string]map[string]int{} // task → set → rep → group
	for _, task := range t.Tasks {
		evalGroup[task] = map[string]map[string]int{}
		for _, set := range t.EvalSets[task] {
			evalGroup[task][set] = map[string]int{}
			for _, rep := range d.reps {
				if c, ok := d.eval[task][set][rep]; ok {
					evalGroup[task][set][rep] = len(groups)
					groups = append(groups, boolHits(c))
				}
			}
		}
	}
	type stat struct {
		set func(metrics.Interval)
		f   func([][]float64) float64
		// perFunc marks a pass rate's statistic.
		perFunc bool
	}
	var stats []stat
	meanOver := func(reps []string, one func(g [][]float64, rep string) float64) func([][]float64) float64 {
		return func(g [][]float64) float64 {
			s := 0.0
			for _, rep := range reps {
				s += one(g, rep)
			}
			return s / float64(len(reps))
		}
	}
	var allG []func([][]float64) float64
	for _, task := range t.Tasks {
		n := len(t.Functionalities[task])
		var iidReps []string
		for _, rep := range d.reps {
			if _, ok := iidGroup[task][rep]; ok {
				iidReps = append(iidReps, rep)
			}
		}
		if len(iidReps) > 0 {
			stats = append(stats, stat{set: func(iv metrics.Interval) { row.cell(IIDKey(task)).CI = iv },
				f: meanOver(iidReps, func(g [][]float64, rep string) float64 { return 100 * metrics.Mean(g[iidGroup[task][rep]]) })})
		}
		for _, score := range t.Scores {
			var reps, greps []string
			for _, rep := range d.reps {
				if _, ok := funcGroups[task][score][rep]; ok {
					reps = append(reps, rep)
					if _, ok := iidGroup[task][rep]; ok {
						greps = append(greps, rep)
					}
				}
			}
			if len(reps) == 0 {
				continue
			}
			first := funcGroups[task][score]
			suite := func(g [][]float64, rep string) float64 {
				return metrics.SuiteScoreStat(g[first[rep] : first[rep]+n])
			}
			stats = append(stats, stat{set: func(iv metrics.Interval) { row.cell(SuiteKey(task, score, "")).CI = iv }, f: meanOver(reps, suite)})
			for k := range n {
				stats = append(stats, stat{func(iv metrics.Interval) { row.cell(PassKey(task, score, "", k)).CI = iv },
					func(g [][]float64) float64 {
						var per []float64
						for _, rep := range reps {
							per = append(per, metrics.PassRateStat(g[first[rep]+k:]))
						}
						return metrics.NanMean(per)
					}, true})
			}
			if len(greps) > 0 {
				gf := meanOver(greps, func(g [][]float64, rep string) float64 {
					return g100(100*metrics.Mean(g[iidGroup[task][rep]]), suite(g, rep))
				})
				stats = append(stats, stat{set: func(iv metrics.Interval) { row.cell(GKey(task, score)).CI = iv }, f: gf})
				allG = append(allG, gf)
			}
		}
	}
	for _, task := range t.Tasks {
		for _, set := range t.EvalSets[task] {
			at := evalGroup[task][set]
			if len(at) == 0 {
				continue
			}
			reps := slices.Sorted(maps.Keys(at))
			stats = append(stats, stat{set: func(iv metrics.Interval) { row.cell(EvalSetKey(task, set)).CI = iv },
				f: meanOver(reps, func(g [][]float64, rep string) float64 { return 100 * metrics.Mean(g[at[rep]]) })})
		}
	}
	if !math.IsNaN(row.Cell(AvgKey).Value) && len(allG) == len(t.Tasks)*len(t.Scores) {
		stats = append(stats, stat{set: func(iv metrics.Interval) { row.cell(AvgKey).CI = iv }, f: func(g [][]float64) float64 {
			s := 0.0
			for _, f := range allG {
				s += f(g)
			}
			return s / float64(len(allG))
		}})
	}
	bo := metrics.BootstrapOptions{Resamples: opt.Resamples, Level: opt.CI / 100, Seed: opt.Seed}
	run := func(stats []stat, bo metrics.BootstrapOptions) error {
		fs := make([]func([][]float64) float64, len(stats))
		for i, s := range stats {
			fs[i] = s.f
		}
		ivs, err := metrics.BootstrapAll(groups, fs, bo)
		if err != nil {
			return err
		}
		for i, s := range stats {
			s.set(ivs[i])
		}
		return nil
	}
	if opt.Bootstrap == BootstrapCases {
		return run(stats, bo)
	}
	var perFunc, rest []stat
	for _, s := range stats {
		if s.perFunc {
			perFunc = append(perFunc, s)
		} else {
			rest = append(rest, s)
		}
	}
	if err := run(perFunc, bo); err != nil {
		return err
	}
	bo.Clusters = funcClusters(t, d, funcGroups)
	return run(rest, bo)
}

// groupIntervals fills the bootstrap intervals of a held-out score's
// groups: each group's value (every row), the seen run's value on the same
// cases and, for a trained row, the gap (seen − held out) of the column
// and of each group. It is a bootstrap of its own (the table's cells keep
// the draws they had): each task's functionalities are one cluster, as in
// the table's hierarchical intervals, and the gap resamples each case of a
// group once for both models, so that it stays paired.
func groupIntervals(t *Table, data map[*Row]*rowData, row *Row, opt Options) error {
	d := data[row]
	trained := row.Configuration != experiments.ConfigIID && !row.Reference
	var groups [][]float64
	type stat struct {
		set func(metrics.Interval)
		f   func([][]float64) float64
	}
	var stats []stat
	var clusters []metrics.Cluster
	// block appends one group per functionality, returning the first.
	block := func(v [][]byte, enc func(k int) []float64) int {
		first := len(groups)
		for k := range v {
			groups = append(groups, enc(k))
		}
		return first
	}
	for _, task := range t.Tasks {
		n := len(t.Functionalities[task])
		var cl metrics.Cluster
		addBlock := func(first int) {
			blk := make([]int, n)
			for k := range blk {
				blk[k] = first + k
			}
			cl.Blocks = append(cl.Blocks, blk)
		}
		for _, score := range t.Scores {
			if _, heldOut := experiments.FoldKindOf(score); !heldOut {
				continue
			}
			for _, g := range append([]string{""}, t.Groups[task][score]...) {
				cs := t.set(task, score, g)
				held, seen, pairs := map[string]int{}, map[string]int{}, map[string]int{}
				for _, rep := range d.reps {
					h, okh := d.hits[task][score][rep]
					if okh {
						h = cs.restrict(h)
						okh = !slices.ContainsFunc(h, func(f []byte) bool { return f == nil })
					}
					s, oks := d.seen[task][rep]
					if oks {
						s = cs.restrict(s)
						oks = !slices.ContainsFunc(s, func(f []byte) bool { return f == nil })
					}
					if okh && g != "" {
						held[rep] = block(h, func(k int) []float64 { return verdictHits(h[k]) })
						addBlock(held[rep])
					}
					if oks {
						seen[rep] = block(s, func(k int) []float64 { return verdictHits(s[k]) })
						addBlock(seen[rep])
					}
					if okh && oks && trained && len(h) == len(s) {
						pairs[rep] = block(s, func(k int) []float64 { return pairCodes(s[k], h[k]) })
						addBlock(pairs[rep])
					}
				}
				mean := func(at map[string]int, one func(g [][]float64) float64) func([][]float64) float64 {
					return func(gs [][]float64) float64 {
						sum := 0.0
						for _, rep := range d.reps { // in order: sums are deterministic
							if first, ok := at[rep]; ok {
								sum += one(gs[first : first+n])
							}
						}
						return sum / float64(len(at))
					}
				}
				if len(held) > 0 {
					stats = append(stats, stat{func(iv metrics.Interval) { row.cell(SuiteKey(task, score, g)).CI = iv }, mean(held, metrics.SuiteScoreStat)})
				}
				if len(seen) > 0 {
					stats = append(stats, stat{func(iv metrics.Interval) { row.cell(SeenKey(task, score, g)).CI = iv }, mean(seen, metrics.SuiteScoreStat)})
				}
				if len(pairs) > 0 {
					stats = append(stats, stat{func(iv metrics.Interval) { row.cell(GapKey(task, score, g)).CI = iv }, mean(pairs, pairedGap)})
				}
			}
		}
		if len(cl.Blocks) > 0 {
			clusters = append(clusters, cl)
		}
	}
	if len(stats) == 0 {
		return nil
	}
	bo := metrics.BootstrapOptions{Resamples: opt.Resamples, Level: opt.CI / 100, Seed: opt.Seed}
	if opt.Bootstrap == BootstrapHierarchical {
		bo.Clusters = clusters
	}
	fs := make([]func([][]float64) float64, len(stats))
	for i, s := range stats {
		fs[i] = s.f
	}
	ivs, err := metrics.BootstrapAll(groups, fs, bo)
	if err != nil {
		return err
	}
	for i, s := range stats {
		s.set(ivs[i])
	}
	return nil
}

// pairCodes codes each case's two verdicts, a's and b's, as one number, so
// that a bootstrap draws the case once for both: 3·v(a) + v(b), v = 0
// fail, 1 pass, 2 filtered.
func pairCodes(a, b []byte) []float64 {
	v := func(x byte) int {
		switch x {
		case experiments.Pass:
			return 1
		case experiments.Fail:
			return 0
		}
		return 2
	}
	out := make([]float64, len(a))
	for i := range a {
		out[i] = float64(3*v(a[i]) + v(b[i]))
	}
	return out
}

// pairedGap is the suite score of the first model minus the second's over
// groups of pairCodes, one group per functionality.
func pairedGap(groups [][]float64) float64 {
	first, second := make([][]float64, len(groups)), make([][]float64, len(groups))
	for k, g := range groups {
		first[k], second[k] = make([]float64, len(g)), make([]float64, len(g))
		for i, c := range g {
			x, y := int(c)/3, int(c)%3
			first[k][i], second[k][i] = codeHit(x), codeHit(y)
		}
	}
	return metrics.SuiteScoreStat(first) - metrics.SuiteScoreStat(second)
}

func codeHit(v int) float64 {
	switch v {
	case 1:
		return 1
	case 0:
		return 0
	}
	return math.NaN()
}

// funcClusters makes each task's functionalities one cluster of the
// hierarchical bootstrap, with a block per score and replicate that has
// verdicts (the baseline's scores share one block).
func funcClusters(t *Table, d *rowData, funcGroups map[string]map[string]map[string]int) []metrics.Cluster {
	var out []metrics.Cluster
	for _, task := range t.Tasks {
		n := len(t.Functionalities[task])
		var c metrics.Cluster
		seen := map[int]bool{}
		for _, score := range t.Scores {
			for _, rep := range d.reps {
				first, ok := funcGroups[task][score][rep]
				if !ok || seen[first] {
					continue
				}
				seen[first] = true
				blk := make([]int, n)
				for k := range blk {
					blk[k] = first + k
				}
				c.Blocks = append(c.Blocks, blk)
			}
		}
		if len(c.Blocks) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// fillAccuracy sets c to the mean over replicates of the accuracy of each
// one's per-example correctness, keeping each replicate's.
func fillAccuracy(c *Cell, reps []string, correct map[string][]bool) {
	c.Reps = map[string]float64{}
	var accs []float64
	for _, rep := range reps {
		if v, ok := correct[rep]; ok {
			c.Reps[rep] = accuracy(v)
			accs = append(accs, c.Reps[rep])
		}
	}
	c.Value = metrics.Mean(accs)
}

// pairedHits concatenates, over the replicates both have, the baseline's
// and a row's per-example hits, for McNemar's test.
func pairedHits(reps []string, base, row map[string][]bool) (x, y []float64) {
	for _, rep := range reps {
		bc, ok1 := base[rep]
		rc, ok2 := row[rep]
		if ok1 && ok2 {
			x, y = append(x, boolHits(bc)...), append(y, boolHits(rc)...)
		}
	}
	return x, y
}

func boolHits(c []bool) []float64 {
	h := make([]float64, len(c))
	for i, v := range c {
		if v {
			h[i] = 1
		}
	}
	return h
}

func verdictHits(v []byte) []float64 {
	h := make([]float64, len(v))
	for i, b := range v {
		switch b {
		case experiments.Pass:
			h[i] = 1
		case experiments.Filtered:
			h[i] = math.NaN()
		}
	}
	return h
}

func experimentsMethodName(m string) string { return experiments.MethodNames[m] }

// methodColumn is the row's method as the CSV files name it: the method,
// then its axes' values when it has any ("irm irm_lambda=10").
func (r *Row) methodColumn() string {
	if r.Axes == "" {
		return r.Method
	}
	return r.Method + " " + r.Axes
}
