package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
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
	// Note says which of a store's sweeps a sweep read from the store is
	// (its latest: SweepsFile); empty otherwise.
	Note   string
	Store  *Store
	Runs   []Run
	Inputs *Inputs
}

// OpenSweep reads the sweep arg names: a store directory (the runs it
// records, RecordSweep's and every run with a spec) or an experiment spec,
// expanded with its inputs found and digested through in; store, when
// set, is the spec's run store instead of its out. A store an older beluga
// wrote is refused (ErrLegacy) until beluga migrate has re-keyed it.
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
	s := &Store{Dir: spec.OutDir()}
	if s.Legacy() {
		return nil, fmt.Errorf("run store %s: %w", s.Dir, ErrLegacy)
	}
	runs, err := Expand(ctx, spec, in)
	if err != nil {
		return nil, fmt.Errorf("experiment spec %s: %w", arg, err)
	}
	return &Sweep{Spec: spec, Store: s, Runs: runs, Inputs: in}, nil
}
