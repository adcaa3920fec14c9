package experiments

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CasesFile is where, in a run directory, package train writes the run's
// per-case verdicts with each input's text, expectation and prediction.
const CasesFile = "train/cases.jsonl"

// RunCases finds a run's case file: run is a case file, a run directory,
// a folder beluga test wrote (its cases.jsonl), or a run ID in the store
// directory store. A case file of a finished run is checked against the
// run's done first (VerifyPart): verdicts edited since the run finished
// are an error, not a list of failures.
func RunCases(run, store string) (string, error) {
	path, err := runCases(run, store)
	if err != nil {
		return "", err
	}
	if dir, rel, ok := finishedRunOf(path); ok {
		if err := VerifyPart(dir, rel, nil); err != nil {
			return "", err
		}
	}
	return path, nil
}

// finishedRunOf returns the finished run directory (one with done) the
// file at path lies in, within the depth of a run's files, and the file's
// slash-separated path in it.
func finishedRunOf(path string) (dir, rel string, ok bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", false
	}
	dir = filepath.Dir(abs)
	for range strings.Count(CasesFile, "/") + 1 {
		if exists(filepath.Join(dir, DoneFile)) {
			rel, err := filepath.Rel(dir, abs)
			return dir, filepath.ToSlash(rel), err == nil
		}
		dir = filepath.Dir(dir)
	}
	return "", "", false
}

func runCases(run, store string) (string, error) {
	st, err := os.Stat(run)
	switch {
	case err == nil && !st.IsDir():
		return run, nil
	case err == nil:
	case store != "":
		run = filepath.Join(store, run)
		if _, err := os.Stat(run); err != nil {
			return "", fmt.Errorf("run %s: no such run in store %s", filepath.Base(run), store)
		}
	default:
		return "", fmt.Errorf("run %s: not a run directory or case file (for a run ID, name its store: --store DIR)", run)
	}
	// A folder beluga test wrote has its case file at the top.
	if p := filepath.Join(run, filepath.Base(CasesFile)); exists(p) && !exists(filepath.Join(run, DoneFile)) {
		return p, nil
	}
	path := filepath.Join(run, CasesFile)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			why := "not done"
			if exists(filepath.Join(run, DoneFile)) {
				why = "a search or search trial run, or scored on no suite"
			}
			return "", fmt.Errorf("run %s has no %s (%s)", run, CasesFile, why)
		}
		return "", err
	}
	return path, nil
}
