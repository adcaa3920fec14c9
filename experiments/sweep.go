package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SweepFile, in a store directory, lists the runs of every sweep executed
// into the store, so that commands given the directory alone (beluga status
// DIR) know the runs never launched as well as those with a directory.
const SweepFile = "sweep.json"

// RecordSweep adds runs to the store's SweepFile (keeping runs other sweeps
// recorded; each run once, in the order first recorded), atomically. A
// sweep records all of its runs, not only its shard's, so that concurrent
// shards write the same list.
func (s *Store) RecordSweep(runs []RunSpec) error {
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
func (s *Store) sweepRuns() ([]RunSpec, error) {
	path := filepath.Join(s.Dir, SweepFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []RunSpec
	if err := json.Unmarshal(b, &runs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return runs, nil
}
