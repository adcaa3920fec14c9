package experiments

import (
	"fmt"
	"os"
	"path/filepath"
)

// Before a search's trials were runs of their own, a search run trained
// every trial itself and recorded each one's point and scores in its
// SearchFile. Those records are what the trials compute (a trial's
// TrialFile is its train.Trial), so SplitSearches writes them out as the
// search's trial runs: a store of such searches then holds every run of
// today's sweep, and nothing is trained again.

// SplitSearches gives each done search run of the store that lacks its
// trial runs those runs, from its SearchFile: a trial's spec.json, its
// TrialFile and a done that records them. It returns how many searches it
// split and how many trial runs it wrote; a search whose record does not
// list its grid's points, in its grid's order, is left alone and said in
// the error (its dependants still read its choice).
func (s *Store) SplitSearches() (searches, trials int, err error) {
	ids, err := s.Dirs()
	if err != nil {
		return 0, 0, err
	}
	var bad []error
	for _, id := range ids {
		if s.State(id) != Done {
			continue
		}
		r, rerr := ReadRun(s.RunDir(id))
		if rerr != nil || r.Score != ScoreSearch || r.Search == nil {
			continue // not a search of today's form: Migrate's
		}
		n, serr := s.splitSearch(id, r)
		if serr != nil {
			bad = append(bad, fmt.Errorf("search %s: %w", id, serr))
			continue
		}
		if n > 0 {
			searches++
			trials += n
		}
	}
	if len(bad) > 0 {
		return searches, trials, fmt.Errorf("%d searches not split into trial runs: %v", len(bad), bad)
	}
	return searches, trials, nil
}

// splitSearch writes the missing trial runs of the done search r (run
// directory id) from its SearchFile and returns how many.
func (s *Store) splitSearch(id string, r Run) (int, error) {
	runs, err := r.trialRuns()
	if err != nil {
		return 0, err
	}
	rec, err := readSearch(s.RunDir(id))
	if err != nil {
		return 0, err
	}
	path := filepath.Join(s.RunDir(id), SearchFile)
	if len(rec.Trials) != len(runs) {
		return 0, fmt.Errorf("%s: %d trials, its grid has %d points", path, len(rec.Trials), len(runs))
	}
	n := 0
	for i, t := range runs {
		h, p := rec.Trials[i].Hyper, t.Train.Hyper
		if !samePoint(h, p) {
			return n, fmt.Errorf("%s: trial %d is of lr %g, batch %d, epochs %g, the grid's point %d of lr %g, batch %d, epochs %g",
				path, i+1, h.LR, h.BatchSize, h.Epochs, i+1, p.LR, p.BatchSize, p.Epochs)
		}
		if s.State(t.ID()) == Done {
			continue
		}
		dir := s.RunDir(t.ID())
		if c, err := readClaim(filepath.Join(dir, ClaimFile)); err == nil && !s.stale(c) {
			continue // a live process trains it
		}
		if err := os.RemoveAll(dir); err != nil {
			return n, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return n, err
		}
		if err := writeJSON(filepath.Join(dir, SpecFile), t); err != nil {
			return n, err
		}
		if err := writeJSON(filepath.Join(dir, TrialFile), rec.Trials[i]); err != nil {
			return n, err
		}
		if err := writeDone(dir); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
