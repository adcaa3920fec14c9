package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/beluga-nlp/beluga/datasets"
)

// SweepFile, in a store directory, lists the runs of every sweep executed
// into the store, so that commands given the directory alone (beluga status
// DIR) know the runs never launched as well as those with a directory.
const SweepFile = "sweep.json"

// SweepsFile, in a store directory, lists the sweeps recorded into it,
// oldest first: the spec each expanded (its file), when, and its runs'
// IDs. A store named by its directory is its latest sweep (Runs): an older
// sweep, abandoned when its spec changed, never stands in a report of the
// store; beluga clean STORE --sweeps forgets those no spec names.
const SweepsFile = "sweeps.json"

// SweepRecord is one sweep of SweepsFile.
type SweepRecord struct {
	Spec string    `json:"spec"`
	At   time.Time `json:"at"`
	Runs []string  `json:"runs"`
}

// RecordSweep adds runs to the store's SweepFile (keeping runs other sweeps
// recorded; each run once, in the order first recorded), atomically, and
// the sweep, as the store's latest, to SweepsFile: spec names the spec
// file it expanded. A sweep records all of its runs, not only its
// shard's, so that concurrent shards write the same list.
func (s *Store) RecordSweep(runs []Run, spec string) error {
	if err := s.recordRuns(runs); err != nil {
		return err
	}
	recs, err := s.Sweeps()
	if err != nil {
		return err
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID()
	}
	if n := len(recs); n > 0 && recs[n-1].Spec == spec && slices.Equal(recs[n-1].Runs, ids) {
		recs[n-1].At = time.Now().UTC()
	} else {
		// The same sweep recorded before moves to the end: the latest.
		recs = slices.DeleteFunc(recs, func(x SweepRecord) bool { return x.Spec == spec && slices.Equal(x.Runs, ids) })
		recs = append(recs, SweepRecord{Spec: spec, At: time.Now().UTC(), Runs: ids})
	}
	return writeJSON(filepath.Join(s.Dir, SweepsFile), recs)
}

// Sweeps reads the store's SweepsFile, oldest first; none when it is
// absent (a store written before it was kept).
func (s *Store) Sweeps() ([]SweepRecord, error) {
	path := filepath.Join(s.Dir, SweepsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []SweepRecord
	if err := json.Unmarshal(b, &recs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

// ForgetSweeps forgets the sweeps no spec names any more — every sweep
// but the latest of each spec file still there, and the store's latest —
// from SweepsFile and their runs from SweepFile. No run directory is
// touched (beluga clean --incomplete and --damaged remove those).
func (s *Store) ForgetSweeps() (kept, forgot []SweepRecord, err error) {
	recs, err := s.Sweeps()
	if err != nil || len(recs) == 0 {
		return recs, nil, err
	}
	latest := map[string]int{}
	for i, r := range recs {
		latest[r.Spec] = i
	}
	for i, r := range recs {
		_, serr := os.Stat(r.Spec)
		if i == len(recs)-1 || (latest[r.Spec] == i && serr == nil) {
			kept = append(kept, r)
		} else {
			forgot = append(forgot, r)
		}
	}
	if len(forgot) == 0 {
		return kept, nil, nil
	}
	keep := map[string]bool{}
	for _, r := range kept {
		for _, id := range r.Runs {
			keep[id] = true
		}
	}
	runs, err := s.sweepRuns()
	if err != nil {
		return nil, nil, err
	}
	runs = slices.DeleteFunc(runs, func(r Run) bool { return !keep[r.ID()] })
	if err := writeJSON(filepath.Join(s.Dir, SweepFile), runs); err != nil {
		return nil, nil, err
	}
	return kept, forgot, writeJSON(filepath.Join(s.Dir, SweepsFile), kept)
}

// recordRuns adds runs to SweepFile (RecordSweep).
func (s *Store) recordRuns(runs []Run) error {
	known, err := s.sweepRuns()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, r := range known {
		seen[r.ID()] = true
	}
	added := false
	for _, r := range runs {
		if !seen[r.ID()] {
			seen[r.ID()] = true
			known = append(known, r)
			added = true
		}
	}
	if !added {
		return nil
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("run store: %w", err)
	}
	return writeJSON(filepath.Join(s.Dir, SweepFile), known)
}

// sweepRuns reads the store's SweepFile; none when it is absent.
func (s *Store) sweepRuns() ([]Run, error) {
	path := filepath.Join(s.Dir, SweepFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []Run
	if err := json.Unmarshal(b, &runs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range runs {
		if err := runs[i].seal(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return runs, nil
}

// Sweep is an experiment's runs and the store they live in: expanded from
// a spec, or read from a store directory.
type Sweep struct {
	// Spec is the experiment spec (nil for a sweep read from a store).
	Spec *Spec
	// File is the spec's file as it was named (empty for a spec made in
	// memory, or a sweep read from a store).
	File string
	// Note says which of a store's sweeps a sweep read from the store is
	// (its latest: SweepsFile); empty otherwise.
	Note   string
	Store  *Store
	Runs   []Run
	Inputs *Inputs
}

// OpenSweep reads the sweep arg names: a store directory (the runs it
// records, RecordSweep's and every run with a spec) or an experiment spec,
// expanded with its inputs found and digested through in (SweepOf);
// store, when set, is the spec's run store instead of its out. A store an
// older beluga wrote is refused (ErrLegacy) until beluga migrate has
// re-keyed it.
func OpenSweep(ctx context.Context, arg, store string, in *Inputs) (*Sweep, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		s := &Store{Dir: arg}
		runs, err := s.Runs()
		if err != nil {
			return nil, err
		}
		sw := &Sweep{Store: s, Runs: runs, Inputs: in}
		if recs, err := s.Sweeps(); err == nil && len(recs) > 0 {
			last := recs[len(recs)-1]
			sw.Note = fmt.Sprintf("run store %s: its latest sweep, %s of %s (%s)", ShortPath(s.Dir), fmt.Sprintf("%d runs", len(last.Runs)), ShortPath(last.Spec), last.At.Format("2006-01-02 15:04 UTC"))
			if n := len(recs) - 1; n > 0 {
				sw.Note += fmt.Sprintf("; %d older %s not shown (beluga clean %s --sweeps forgets those no spec names)", n, map[bool]string{true: "sweep", false: "sweeps"}[n == 1], ShortPath(s.Dir))
			}
		}
		return sw, nil
	}
	spec, err := LoadSpec(arg)
	if err != nil {
		return nil, err
	}
	if store != "" {
		if spec.Out, err = filepath.Abs(store); err != nil {
			return nil, err
		}
	}
	sw, err := SweepOf(ctx, spec, in)
	if err != nil {
		return nil, fmt.Errorf("experiment spec %s: %w", arg, err)
	}
	sw.File = arg
	return sw, nil
}

// SweepOf is the sweep of spec: its runs, expanded with their inputs found
// and digested through in, in the store of its out (Spec.OutDir). A store
// an older beluga wrote is refused (ErrLegacy).
func SweepOf(ctx context.Context, spec *Spec, in *Inputs) (*Sweep, error) {
	s := &Store{Dir: spec.OutDir()}
	if s.Legacy() {
		return nil, fmt.Errorf("run store %s: %w", s.Dir, ErrLegacy)
	}
	if in == nil {
		in = &Inputs{}
	}
	runs, err := Expand(ctx, spec, in)
	if err != nil {
		return nil, err
	}
	return &Sweep{Spec: spec, Store: s, Runs: runs, Inputs: in}, nil
}

// SweepOptions control Sweep.Execute: Execute's Options (Options.Sweep is
// the sweep's runs) and what comes before it.
type SweepOptions struct {
	Options
	// Shard, when set, executes only its slice of the runs; the sweep is
	// recorded whole, so that every shard records the same list.
	Shard *Shard
	// Record is what the store records as the sweep's spec (SweepsFile);
	// empty, the spec's file made absolute, or the name of a spec made in
	// memory. A command that made the spec names itself ("beluga
	// quickstart --task SENT").
	Record string
	// Runner executes each run (nil: a TrainRunner on the sweep's store
	// and inputs). The checks before any run starts are the trainer's
	// either way.
	Runner Runner
	// Warn receives what the checks of the inputs' contents found
	// (duplicates across parts, encodings, coverage) and a digest cache
	// that cannot be written; nil discards them.
	Warn io.Writer
}

// Check is what a sweep must pass before any of its runs starts, and all
// a dry run checks: the trainer's preflight (the model, the grid, every
// i.i.d. file's rows, the suites against their tasks, the listed folds),
// then the inputs' contents, whose findings are written to warn (nil:
// discarded) and stop nothing.
func (sw *Sweep) Check(ctx context.Context, warn io.Writer) error {
	if sw.Spec == nil {
		return fmt.Errorf("run store %s: a store's runs are executed from the spec that lists them", ShortPath(sw.Store.Dir))
	}
	if err := sw.trainer().Preflight(ctx, sw.Spec); err != nil {
		return sw.errorf(err)
	}
	checks, err := sw.Spec.CheckInputs()
	if err != nil {
		return sw.errorf(err)
	}
	if warn != nil {
		checks.Print(warn)
	}
	return nil
}

// Execute is the whole of a sweep's execution, as beluga run and beluga
// quickstart do it: Check; refuse, before any run starts, a run whose ID
// is provisional (its store directory would be named by what its
// checkpoint is not known to be) or, offline, whose checkpoint is not on
// this machine (said once, not as every run's failure); record the sweep
// in the store (RecordSweep); Execute the runs not done, of opts.Shard
// only when set. The inputs' digests are kept (Digests.SaveOrWarn) before
// the runs start and at the end. The error joins what stopped the sweep
// with the failed runs (Summary.Err): nil only when every run is done.
func (sw *Sweep) Execute(ctx context.Context, opts SweepOptions) (Summary, error) {
	warn := opts.Warn
	if warn == nil {
		warn = io.Discard
	}
	if err := sw.Check(ctx, warn); err != nil {
		return Summary{}, err
	}
	in := sw.Inputs
	if in == nil {
		in = &Inputs{}
	}
	defer in.digests().SaveOrWarn(warn)
	in.digests().SaveOrWarn(warn)
	runs := sw.Runs
	if opts.Shard != nil {
		runs = opts.Shard.Select(runs)
	}
	for _, r := range runs {
		why := r.Pending()
		if why == "" && in.Hub != nil && in.Hub.Offline {
			why = r.Absent()
		}
		if why != "" {
			return Summary{}, sw.errorf(fmt.Errorf("run %s: %s", r.Label(), why))
		}
	}
	record := opts.Record
	switch {
	case record != "":
	case sw.File != "":
		abs, err := filepath.Abs(sw.File)
		if err != nil {
			return Summary{}, err
		}
		record = abs
	default:
		record = sw.Spec.Name
	}
	if err := sw.Store.RecordSweep(sw.Runs, record); err != nil {
		return Summary{}, err
	}
	runner := opts.Runner
	if runner == nil {
		runner = sw.trainer()
	}
	o := opts.Options
	o.Sweep = sw.Runs
	sum, err := Execute(ctx, sw.Store, runs, runner, o)
	return sum, errors.Join(err, sum.Err())
}

// trainer is the TrainRunner of the sweep's store and inputs.
func (sw *Sweep) trainer() *TrainRunner {
	var data *datasets.Cache
	if sw.Inputs != nil {
		data = sw.Inputs.Data
	}
	return &TrainRunner{Cache: data, Store: sw.Store, Inputs: sw.Inputs}
}

// errorf says which spec an error is of.
func (sw *Sweep) errorf(err error) error {
	name := sw.File
	if name == "" {
		name = sw.Spec.Name
	}
	if name == "" {
		return fmt.Errorf("experiment spec: %w", err)
	}
	return fmt.Errorf("experiment spec %s: %w", name, err)
}
