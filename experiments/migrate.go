package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/train"
)

// Stores written before runs were identified by what they compute named
// each run by the hash of its spec as written: grid keys as spelt, paths
// as given, no input content. Migrate re-keys such a store without
// retraining: it reads each finished run's recorded spec, resolves it as
// Expand resolves a spec today (the same defaults, the same field paths),
// digests the files it names as they are today, and moves the run to the
// directory of its new ID with a new spec.json and a done marker that
// records its files. Those runs' inputs were never recorded, so today's
// are assumed to be the ones they read: Migration says which, so that a
// user who changed a file since can remove its runs.

// legacyRun is a run's spec.json (and SweepFile entry) as an older beluga
// wrote it.
type legacyRun struct {
	Task          string          `json:"task"`
	TaskDef       *legacyTaskDecl `json:"task_def,omitempty"`
	Data          string          `json:"data"`
	Suite         string          `json:"suite"`
	Model         string          `json:"model"`
	Checkpoint    string          `json:"checkpoint,omitempty"`
	ModelOptions  map[string]any  `json:"model_options,omitempty"`
	Configuration string          `json:"configuration"`
	Method        string          `json:"method"`
	Score         string          `json:"score"`
	Fold          string          `json:"fold,omitempty"`
	Seed          int64           `json:"seed"`
	Budget        Budget          `json:"budget"`
	Hyper         map[string]any  `json:"hyper,omitempty"`
	IIDEval       []train.EvalSet `json:"iid_eval,omitempty"`
	Corrections   []string        `json:"corrections,omitempty"`
	Search        *SearchGrid     `json:"search,omitempty"`
}

// legacyTaskDecl is a declared task as an older run recorded it.
type legacyTaskDecl struct {
	train.Task
	Train *datasets.FileSpec `json:"train,omitempty"`
	Dev   *datasets.FileSpec `json:"dev,omitempty"`
}

// spec is the experiment spec of one legacy run: its task, model, budget
// and corrections, its search grid, and its grid point as one-valued keys.
func (l legacyRun) spec() *Spec {
	t := Task{Name: l.Task, Data: l.Data, Suite: l.Suite, Eval: l.IIDEval}
	if d := l.TaskDef; d != nil {
		t.Labels, t.MFTLoss, t.Metrics, t.ClassWeights, t.Train, t.Dev = d.Labels, d.MFTLoss, d.Metrics, d.ClassWeights, d.Train, d.Dev
		if d.Pair {
			t.Input = "pair"
		}
		if len(d.SuiteLabels) > 0 {
			t.SuiteLabels = datasets.LabelMap{}
			for k, y := range d.SuiteLabels {
				t.SuiteLabels[k] = datasets.Target{Probs: y}
			}
		}
	}
	s := &Spec{Tasks: []Task{t}, Model: Model{Name: l.Model, Checkpoint: l.Checkpoint, Options: l.ModelOptions},
		Seeds: []int64{l.Seed}, Budget: l.Budget, Corrections: l.Corrections, Search: l.Search, Grid: map[string][]any{}}
	for k, v := range l.Hyper {
		s.Grid[k] = []any{v}
	}
	return s
}

// run resolves the legacy run as Expand resolves its spec today, its
// inputs found (relative paths against the working directory, as the
// older beluga read them) and digested through in.
func (l legacyRun) run(ctx context.Context, in *Inputs) (Run, error) {
	s := l.spec()
	t := s.Tasks[0]
	if _, err := t.declaration("task"); err != nil {
		return Run{}, err
	}
	b, err := s.taskRun(ctx, in, 0, t)
	if err != nil {
		return Run{}, err
	}
	var point []setting
	for _, k := range slices.Sorted(maps.Keys(l.Hyper)) {
		point = append(point, setting{k, l.Hyper[k]})
	}
	if s.Search != nil && s.Search.BatchSize == nil {
		return Run{}, errors.New("search grid without batch sizes")
	}
	c := cell{s: s, bad: &badValues{seen: map[string]bool{}}, base: b, point: point, seed: l.Seed, search: s.Search, ids: map[string]string{}, swept: map[string][]string{}}
	if l.Score == ScoreSearch {
		return c.searchRun(l.Configuration, l.Method)
	}
	return c.run(l.Configuration, l.Method, l.Score, l.Fold)
}

// Migration is what Migrate did.
type Migration struct {
	// Moved maps each re-keyed run's old ID to its new one.
	Moved map[string]string
	// Order lists the old IDs in the store's sweep order.
	Order []string
	// Labels are the new runs' labels, by new ID.
	Labels map[string]string
	// Merged lists old IDs whose run another old run already is (two
	// spellings of one computation): removed, by old ID, with the new ID
	// they are.
	Merged map[string]string
	// Removed lists the old runs without done (redone by beluga run).
	Removed []string
	// Assumed are the inputs of the migrated runs, by field and path:
	// their digests are today's, assumed to be what the runs read
	// (AssumedLines).
	Assumed []Input
	// Failed maps old IDs that could not be migrated to why; they stay.
	Failed map[string]string
	// Damaged maps old IDs whose files are not what their done recorded
	// (a truncated result or model) to why: they are moved to their new
	// IDs without done, never vouched for, and beluga run redoes them.
	Damaged map[string]string
}

// Migrate re-keys a store an older beluga wrote (see above) without
// retraining anything, through in (its data cache and digests). It is
// safe to run again after an interruption: a run already moved is left as
// it is.
func Migrate(ctx context.Context, s *Store, in *Inputs) (*Migration, error) {
	m := &Migration{Moved: map[string]string{}, Labels: map[string]string{}, Merged: map[string]string{}, Failed: map[string]string{},
		Damaged: map[string]string{}}
	if !s.legacyForm() {
		return m, rekeyStore(ctx, s, in, m)
	}
	ids, err := s.Dirs()
	if err != nil {
		return nil, err
	}
	sweep, err := legacySweep(ctx, s, in)
	if err != nil {
		return nil, err
	}
	resolved, err := resolveLegacyRuns(ctx, s, in, ids, m)
	if err != nil {
		return m, err
	}
	assumed := map[string]Input{}
	for _, old := range legacyOrder(resolved, sweep.runs) {
		r := resolved[old]
		moved, err := moveLegacyRun(s, m, old, r)
		if err != nil {
			return m, err
		}
		if !moved {
			continue
		}
		for _, x := range r.Inputs {
			assumed[x.Field+"\x00"+x.Path] = x
		}
		sweep.add(r)
	}
	for _, k := range slices.Sorted(maps.Keys(assumed)) {
		m.Assumed = append(m.Assumed, assumed[k])
	}
	if len(m.Failed) == 0 {
		if err := writeJSON(filepath.Join(s.Dir, SweepFile), sweep.runs); err != nil {
			return m, err
		}
	}
	return m, nil
}

// migratedSweep is the store's sweep as Migrate rewrites it: each run once,
// in the order first added.
type migratedSweep struct {
	runs []Run
	in   map[string]bool
}

func (w *migratedSweep) add(r Run) {
	if !w.in[r.ID()] {
		w.in[r.ID()] = true
		w.runs = append(w.runs, r)
	}
}

// legacySweep is the store's legacy SweepFile, its runs resolved as today's
// (none when the store has no SweepFile of the legacy form).
func legacySweep(ctx context.Context, s *Store, in *Inputs) (*migratedSweep, error) {
	w := &migratedSweep{runs: []Run{}, in: map[string]bool{}}
	var sweep []legacyRun
	if b, err := os.ReadFile(filepath.Join(s.Dir, SweepFile)); err == nil && legacyRecord(b) {
		if err := json.Unmarshal(b, &sweep); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(s.Dir, SweepFile), err)
		}
	}
	for _, l := range sweep {
		r, err := l.run(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("%s: run %s %s %s %s %s: %w", SweepFile, l.Task, l.Configuration, l.Method, l.Score, l.Fold, err)
		}
		w.add(r)
	}
	return w, nil
}

// resolveLegacyRuns is today's run of every finished legacy run directory
// among ids, by its old ID. An unfinished one is removed (m.Removed) unless
// a live process holds it; one that cannot be resolved is said (m.Failed).
func resolveLegacyRuns(ctx context.Context, s *Store, in *Inputs, ids []string, m *Migration) (map[string]Run, error) {
	resolved := map[string]Run{} // old ID → new run
	for _, id := range ids {
		dir := s.RunDir(id)
		b, err := os.ReadFile(filepath.Join(dir, SpecFile))
		if err != nil {
			continue // no spec: not a run directory
		}
		if !legacyRecord(b) {
			continue // today's form: rekeyStore's
		}
		if !exists(filepath.Join(dir, DoneFile)) {
			if c, err := readClaim(filepath.Join(dir, ClaimFile)); err == nil && !s.stale(c) {
				m.Failed[id] = "a live process is running it: migrate once it is done"
				continue
			}
			if err := os.RemoveAll(dir); err != nil {
				return nil, err
			}
			m.Removed = append(m.Removed, id)
			continue
		}
		var l legacyRun
		if err := json.Unmarshal(b, &l); err != nil {
			m.Failed[id] = fmt.Sprintf("%s: %v", SpecFile, err)
			continue
		}
		r, err := l.run(ctx, in)
		if err != nil {
			m.Failed[id] = err.Error()
			continue
		}
		resolved[id] = r
	}
	return resolved, nil
}

// legacyOrder is the old IDs of resolved in the order they are moved: the
// runs of the sweep in its order, then the others by directory.
func legacyOrder(resolved map[string]Run, sweep []Run) []string {
	order := map[string]int{}
	for i, r := range sweep {
		order[r.ID()] = i
	}
	olds := slices.Sorted(maps.Keys(resolved))
	slices.SortStableFunc(olds, func(a, b string) int {
		oa, okA := order[resolved[a].ID()]
		ob, okB := order[resolved[b].ID()]
		switch {
		case okA && okB:
			return oa - ob
		case okA:
			return -1
		case okB:
			return 1
		}
		return 0
	})
	return olds
}

// moveLegacyRun moves the old run to r's ID (rekey), or merges it into the
// run that already computes the same; moved says it was moved now. A run
// that cannot be re-keyed is said (m.Failed); the error is the store's.
func moveLegacyRun(s *Store, m *Migration, old string, r Run) (moved bool, err error) {
	id := r.ID()
	m.Order = append(m.Order, old)
	if prev, ok := m.Moved[old]; ok && prev == id {
		return false, nil
	}
	if taken := slices.ContainsFunc(slices.Collect(maps.Values(m.Moved)), func(x string) bool { return x == id }); taken || (id != old && exists(s.RunDir(id))) {
		// Another old run computed the same: keep the first.
		if err := os.RemoveAll(s.RunDir(old)); err != nil {
			return false, err
		}
		m.Merged[old] = id
		return false, nil
	}
	if err := rekey(s, old, r); err != nil {
		m.Failed[old] = err.Error()
		return false, nil
	}
	m.Moved[old], m.Labels[id] = id, r.Label()
	return true, nil
}

// rekey rewrites a finished legacy run's records for r — spec.json, the
// train spec's path of the IID model it started from, and a done marker
// that records its files — then moves its directory to r's ID.
func rekey(s *Store, old string, r Run) error {
	dir := s.RunDir(old)
	if err := writeJSON(filepath.Join(dir, SpecFile), r); err != nil {
		return err
	}
	if r.From != "" {
		path := filepath.Join(dir, TrainSpecFile)
		if b, err := os.ReadFile(path); err == nil {
			var ts train.RunSpec
			if err := json.Unmarshal(b, &ts); err == nil && ts.FromIID != "" {
				ts.FromIID = filepath.Join(s.RunDir(r.From), "train", "model")
				if err := writeJSON(path, ts); err != nil {
					return err
				}
			}
		}
	}
	if err := writeDone(dir); err != nil {
		return err
	}
	return moveRun(s, old, r.ID())
}

// moveRun renames a run directory to its new ID, rewriting the ID its done
// marker records.
func moveRun(s *Store, old, id string) error {
	if old == id {
		return nil
	}
	if err := os.Rename(s.RunDir(old), s.RunDir(id)); err != nil {
		return err
	}
	man, err := manifestOf(s.RunDir(id))
	if err != nil {
		return err
	}
	return writeJSON(filepath.Join(s.RunDir(id), DoneFile), man)
}

// Summary says what a migration did, in lines.
func (m *Migration) Summary() []string {
	var out []string
	for _, old := range m.Order {
		if id, ok := m.Moved[old]; ok && m.Damaged[old] == "" {
			out = append(out, fmt.Sprintf("moved %s -> %s  %s", old, id, m.Labels[id]))
		}
	}
	for _, old := range slices.Sorted(maps.Keys(m.Merged)) {
		out = append(out, fmt.Sprintf("removed %s: the same run as %s (one computation under two spellings)", old, m.Merged[old]))
	}
	for _, old := range m.Removed {
		out = append(out, fmt.Sprintf("removed %s: not done (beluga run redoes it)", old))
	}
	for _, old := range slices.Sorted(maps.Keys(m.Damaged)) {
		out = append(out, fmt.Sprintf("damaged %s: %s: moved to %s without done (not vouched for: beluga run redoes it)", old, m.Damaged[old], m.Moved[old]))
	}
	for _, old := range slices.Sorted(maps.Keys(m.Failed)) {
		out = append(out, fmt.Sprintf("not migrated %s: %s", old, m.Failed[old]))
	}
	return out
}

// AssumedLines say which inputs' digests of today the migrated runs
// record: their files and directories (a dataset is identified by its
// registered checksum, which the data cache verified when it fetched it).
func (m *Migration) AssumedLines() []string {
	var out []string
	for _, in := range m.Assumed {
		if in.File != "" {
			continue
		}
		what := in.Path
		if in.Name != "" {
			what = in.Name + " (" + in.Path + ")"
		}
		out = append(out, fmt.Sprintf("%s %s: sha256 %s", in.Field, what, in.SHA256))
	}
	return out
}

// rekeyStore re-keys a store of today's records whose IDs an earlier rule
// computed (ErrRekey), or whose hub checkpoints an older beluga identified
// by their files' digest (olderHubInput: given their commit through the hub
// cache, hubIdentityOf): every record — sweep.json's and each run
// directory's spec.json — gets the ID of what it computes, the runs it
// needs (its IID baseline, its searches) by their new IDs; nothing else is
// digested again, as the records hold their inputs' digests. A finished
// run is checked against its done marker first: one whose files are what
// done recorded is moved to its new ID with a new done; a damaged one is
// moved without done (Migration.Damaged); two old runs that are one
// computation are one run (the first kept, Migration.Merged); a run not
// finished is removed (beluga run redoes it). It is safe to run again.
func rekeyStore(ctx context.Context, s *Store, in *Inputs, m *Migration) error {
	records, sweepOrder, err := s.currentRecords(m)
	if err != nil {
		return err
	}
	if err := in.rehubRecords(ctx, records, m); err != nil {
		return err
	}
	resolved, err := resolveRecords(records)
	if err != nil {
		return err
	}
	// Run directories: sweep order first, then by old ID.
	var dirs []string
	for _, old := range sweepOrder {
		if records[old].dir {
			dirs = append(dirs, old)
		}
	}
	for _, old := range slices.Sorted(maps.Keys(records)) {
		if records[old].dir && !slices.Contains(sweepOrder, old) {
			dirs = append(dirs, old)
		}
	}
	taken := map[string]string{} // new ID → the old run moved there
	for _, old := range dirs {
		if _, failed := m.Failed[old]; failed {
			continue // its hub checkpoint's commit is not known: left as it is
		}
		rec, r := records[old], resolved[old]
		id := r.ID()
		dir := s.RunDir(old)
		if !rec.done {
			if c, err := readClaim(filepath.Join(dir, ClaimFile)); err == nil && !s.stale(c) {
				m.Failed[old] = "a live process is running it: migrate once it is done"
				continue
			}
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			m.Removed = append(m.Removed, old)
			continue
		}
		m.Order = append(m.Order, old)
		if _, ok := taken[id]; ok || (id != old && exists(s.RunDir(id))) {
			// Another old run is this computation: keep the first.
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			m.Merged[old] = id
			continue
		}
		taken[id] = old
		if err := verifyRun(dir, true); err != nil {
			// Never vouched for: moved without done, redone by beluga run.
			if err := os.Remove(filepath.Join(dir, DoneFile)); err != nil {
				return err
			}
			if err := writeJSON(filepath.Join(dir, SpecFile), r); err != nil {
				return err
			}
			if err := os.Rename(dir, s.RunDir(id)); err != nil {
				return err
			}
			m.Damaged[old], m.Moved[old], m.Labels[id] = err.Error(), id, r.Label()
			continue
		}
		if id == old {
			continue
		}
		if err := rekey(s, old, r); err != nil {
			m.Failed[old] = err.Error()
			continue
		}
		m.Moved[old], m.Labels[id] = id, r.Label()
	}
	if len(m.Failed) > 0 {
		return nil // sweep.json stays until every run is migrated
	}
	var sweep []Run
	seen := map[string]bool{}
	for _, old := range sweepOrder {
		if r := resolved[old]; !seen[r.ID()] {
			seen[r.ID()] = true
			sweep = append(sweep, r)
		}
	}
	if len(sweepOrder) == 0 {
		return nil
	}
	return writeJSON(filepath.Join(s.Dir, SweepFile), sweep)
}

// currentRecord is a run record of today's form in a store to re-key:
// sweep.json's, or a run directory's (dir) with done or not.
type currentRecord struct {
	run       Run
	dir, done bool
}

// currentRecords reads the records of a store to re-key, by the ID they
// record (a directory's name), and sweep.json's order; a directory whose
// spec.json cannot be read is said in m.Failed.
func (s *Store) currentRecords(m *Migration) (records map[string]*currentRecord, sweepOrder []string, err error) {
	records = map[string]*currentRecord{}
	if b, err := os.ReadFile(filepath.Join(s.Dir, SweepFile)); err == nil {
		var list []json.RawMessage
		if err := json.Unmarshal(b, &list); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(s.Dir, SweepFile), err)
		}
		for i, one := range list {
			r, recorded, err := readRecord(one)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: run %d: %w", filepath.Join(s.Dir, SweepFile), i+1, err)
			}
			if recorded == "" {
				recorded = r.ID()
			}
			if records[recorded] == nil {
				records[recorded] = &currentRecord{run: r}
				sweepOrder = append(sweepOrder, recorded)
			}
		}
	}
	ids, err := s.Dirs()
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		dir := s.RunDir(id)
		b, err := os.ReadFile(filepath.Join(dir, SpecFile))
		if errors.Is(err, os.ErrNotExist) {
			continue // no spec: not a run directory
		}
		if err != nil {
			m.Failed[id] = err.Error()
			continue
		}
		r, _, err := readRecord(b)
		if err != nil {
			// Said, never left silently: its directory stays as it is.
			m.Failed[id] = fmt.Sprintf("%s: %v", SpecFile, err)
			continue
		}
		records[id] = &currentRecord{run: r, dir: true, done: exists(filepath.Join(dir, DoneFile))}
	}
	return records, sweepOrder, nil
}

// resolveRecords gives each record its ID today, the runs it needs first
// (their new IDs in its From, HyperFrom and ProbeFrom, their swept
// settings among its own), by the ID it recorded.
func resolveRecords(records map[string]*currentRecord) (map[string]Run, error) {
	// Each record's new ID, the runs it needs first.
	resolvedRuns := map[string]Run{}
	var resolve func(old string, depth int) (Run, error)
	resolve = func(old string, depth int) (Run, error) {
		rec := records[old]
		r := rec.run
		if depth > len(records) {
			return r, fmt.Errorf("run %s needs itself", old)
		}
		var needed []string
		for _, need := range []*string{&r.From, &r.HyperFrom, &r.ProbeFrom} {
			if *need == "" || records[*need] == nil {
				continue
			}
			dep, ok := resolvedRuns[*need]
			if !ok {
				var err error
				if dep, err = resolve(*need, depth+1); err != nil {
					return r, err
				}
			}
			*need = dep.ID()
			needed = append(needed, dep.Swept...)
		}
		r.sortSwept(needed)
		if err := r.seal(); err != nil {
			return r, err
		}
		resolvedRuns[old] = r
		return r, nil
	}
	for _, old := range slices.Sorted(maps.Keys(records)) {
		if _, err := resolve(old, 0); err != nil {
			return nil, fmt.Errorf("run %s: %w", old, err)
		}
	}
	return resolvedRuns, nil
}

// legacyForm says whether the store's records are of the older form
// (legacyRecord): its sweep.json's, else its first run directory's.
func (s *Store) legacyForm() bool {
	if b, err := os.ReadFile(filepath.Join(s.Dir, SweepFile)); err == nil {
		return legacyRecord(b)
	}
	ids, _ := s.Dirs()
	for _, id := range ids {
		if b, err := os.ReadFile(filepath.Join(s.RunDir(id), SpecFile)); err == nil {
			return legacyRecord(b)
		}
	}
	return false
}
