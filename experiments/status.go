package experiments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/metrics"
)

// Status counts a sweep's runs by state.
type Status struct {
	Counts map[State]int
	// Flagged counts the done runs with failed sanity checks.
	Flagged int
	Runs    []RunStatus
}

// RunStatus is one run's state.
type RunStatus struct {
	ID    string
	Spec  Run
	State State
	// Reason says why a run failed (Failed), what is wrong with its files
	// (Damaged) or which of its inputs changed (Stale).
	Reason string
	// Was is, for a Stale run, the finished run of its slot whose inputs
	// changed: a run of the store not done now, or the run itself when
	// its own inputs changed on disk.
	Was string
	// Flags are a done run's failed sanity checks (metrics.Sanity).
	Flags []metrics.Flag
}

// StatusOf reads the state of every run from the store. A run not done
// whose slot (Run.Slot) a finished run of the store holds is Stale — its
// inputs changed since that run — and so is a done run one of whose files
// is not what the run read any more (checked through in's digests when in
// is not nil; a file that is gone cannot be checked and leaves the run
// done). The reason says what changed ("suite mhc.jsonl changed since run
// 3f…: 2,447 cases, was 3,378").
func StatusOf(store *Store, runs []Run, in *Inputs) Status {
	st := Status{Counts: map[State]int{}}
	var bySlot map[string][]Run // the store's finished runs, read once when needed
	for _, r := range runs {
		id := r.ID()
		s, why := store.Check(id, false)
		rs := RunStatus{ID: id, Spec: r, State: s, Reason: why}
		switch s {
		case Failed:
			rs.Reason = store.FailureReason(id)
		case Done:
			if in != nil {
				if changed := in.changedOnDisk(r, id); len(changed) > 0 {
					rs.State, rs.Reason, rs.Was = Stale, strings.Join(changed, "; "), id
					break
				}
			}
			rs.Flags = store.Flags(id)
			if len(rs.Flags) > 0 {
				st.Flagged++
			}
		case Missing, Incomplete:
			if why := r.Absent(); why != "" {
				rs.State, rs.Reason = NotFetched, why
				break
			}
			if bySlot == nil {
				bySlot = store.finishedBySlot()
			}
			for _, old := range bySlot[r.Slot()] {
				if old.ID() == id {
					continue
				}
				changed := changed(old.Inputs, r.Inputs, old.ID())
				if len(changed) == 0 {
					continue
				}
				rs.State, rs.Reason, rs.Was = Stale, strings.Join(changed, "; "), old.ID()
				break
			}
		}
		st.Counts[rs.State]++
		st.Runs = append(st.Runs, rs)
	}
	return st
}

// finishedBySlot reads the specs of the store's done runs, by slot.
func (s *Store) finishedBySlot() map[string][]Run {
	out := map[string][]Run{}
	ids, _ := s.Dirs()
	for _, id := range ids {
		dir := s.RunDir(id)
		if !exists(filepath.Join(dir, DoneFile)) {
			continue
		}
		r, err := ReadRun(dir)
		if err != nil {
			continue
		}
		out[r.Slot()] = append(out[r.Slot()], r)
	}
	return out
}

// Pending says why the run's identity is not known yet ("" when it is):
// an input whose identity needs what is not local (Input.Pending).
func (r Run) Pending() string {
	for _, in := range r.Inputs {
		if in.Pending != "" {
			return in.Pending
		}
	}
	return ""
}

// Absent says why an input of the run is not on this machine yet ("" when
// none is known to be missing: Input.Absent).
func (r Run) Absent() string {
	for _, in := range r.Inputs {
		if in.Absent != "" {
			return in.Absent
		}
	}
	return ""
}

// changed says how the inputs now differ from those a finished run (id)
// read: for each field whose content differs, what it was and is.
func changed(was, now []Input, id string) []string {
	var out []string
	for _, w := range was {
		for _, n := range now {
			if n.Field == w.Field && n.SHA256 != w.SHA256 {
				out = append(out, describeChange(w, n, id))
			}
		}
	}
	return out
}

// changedOnDisk says which of a done run's inputs its recorded paths no
// longer hold (datasets, identified by their registered checksums, never
// change; a file that is gone is not judged).
func (in *Inputs) changedOnDisk(r Run, id string) []string {
	var now []Input
	for _, w := range r.Inputs {
		// A dataset's file is its registered checksum, a hub checkpoint its
		// commit: neither changes in place.
		if w.File != "" || w.Commit != "" || w.Pending != "" {
			continue
		}
		var cur Input
		var err error
		if w.Field == "suite" {
			cur, err = in.suite(w.Path)
		} else {
			cur, err = in.local(w.Field, w.Path)
		}
		if err == nil {
			cur.Field = w.Field
			now = append(now, cur)
		}
	}
	return changed(r.Inputs, now, id)
}

// describeChange says, in a line, how input n differs from w, which run
// id read.
func describeChange(w, n Input, id string) string {
	what := "input " + w.Field
	if w.Field == "suite" {
		what = "suite"
	}
	name := filepath.Base(n.Path)
	if n.Name != "" {
		name = n.Name
	}
	s := fmt.Sprintf("%s %s changed since run %.4s…", what, name, id)
	switch {
	case w.Cases > 0 && n.Cases > 0:
		s += fmt.Sprintf(": %s cases, was %s", thousands(n.Cases), thousands(w.Cases))
	case w.Size != n.Size:
		s += fmt.Sprintf(": %s bytes, was %s", thousands(int(n.Size)), thousands(int(w.Size)))
	default:
		s += fmt.Sprintf(": sha256 %.12s…, was %.12s…", n.SHA256, w.SHA256)
	}
	return s
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ReadRun reads the run a directory was made for (SpecFile); a record of
// an older beluga's is ErrLegacy.
func ReadRun(dir string) (Run, error) {
	var r Run
	path := filepath.Join(dir, SpecFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if legacyRecord(b) {
		return r, fmt.Errorf("%s: %w", path, ErrLegacy)
	}
	r, recorded, err := readRecord(b)
	if err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if recorded != "" && recorded != r.ID() {
		return r, fmt.Errorf("%s: run %s: %w", path, recorded, ErrRekey)
	}
	return r, nil
}

// readRecord reads a run record of today's form, sealed, and the ID it
// records ("" when it records none).
func readRecord(b []byte) (Run, string, error) {
	var r Run
	var head struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, "", err
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return r, "", err
	}
	err := r.seal()
	return r, head.ID, err
}

// ErrRekey marks a store, or a run of one, whose records are of today's
// form but whose IDs an earlier beluga computed by another rule (before
// IDs hashed a run's effective spec, train.RunSpec.Effective): beluga
// migrate re-keys it without retraining. It is a kind of ErrLegacy.
var ErrRekey = fmt.Errorf("its run IDs were computed before they hashed only what a run reads: %w", ErrLegacy)

// rekeyed says whether a record of today's form (or a list of them)
// records an ID other than the one it gives today.
func rekeyed(b []byte) bool {
	var list []json.RawMessage
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(t, &list) != nil {
			return false
		}
	} else {
		list = []json.RawMessage{b}
	}
	for _, one := range list {
		if r, recorded, err := readRecord(one); err == nil && recorded != "" && recorded != r.ID() {
			return true
		}
	}
	return false
}

// ErrLegacy marks a store, or a run of one, written by a beluga whose run
// IDs hashed the spec as written (paths included) rather than what the
// runs compute: beluga migrate re-keys it without retraining.
var ErrLegacy = errors.New("written by an older beluga, whose run IDs hash how the spec was written: run beluga migrate on the store (nothing is retrained)")

// legacyRecord says whether a run record (or a list of them, by its first)
// is of the older form: a task and configuration but no package train
// spec. A list is read no further than its first record.
func legacyRecord(b []byte) bool {
	var one map[string]json.RawMessage
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(t))
		if _, err := dec.Token(); err != nil || !dec.More() || dec.Decode(&one) != nil {
			return false
		}
	} else if json.Unmarshal(b, &one) != nil {
		return false
	}
	_, hasTrain := one["train"]
	_, hasTask := one["task"]
	_, hasConfig := one["configuration"]
	return hasTask && hasConfig && !hasTrain
}

// Legacy says whether the store was written by an older beluga (ErrLegacy):
// its SweepFile, or without one any run's SpecFile, is of the older form.
func (s *Store) Legacy() bool {
	if b, err := os.ReadFile(filepath.Join(s.Dir, SweepFile)); err == nil {
		return legacyRecord(b) || rekeyed(b)
	}
	ids, _ := s.Dirs()
	for _, id := range ids {
		if b, err := os.ReadFile(filepath.Join(s.RunDir(id), SpecFile)); err == nil {
			if legacyRecord(b) || rekeyed(b) {
				return true
			}
		}
	}
	return false
}

// Runs lists the runs of the store directory, for commands given a store
// instead of an experiment spec: those of the sweeps recorded in SweepFile
// (missing ones included), then every other run whose spec was written.
func (s *Store) Runs() ([]Run, error) {
	if s.Legacy() {
		return nil, fmt.Errorf("run store %s: %w", s.Dir, ErrLegacy)
	}
	ids, err := s.Dirs()
	if err != nil {
		return nil, fmt.Errorf("run store: %w", err)
	}
	runs, err := s.sweepRuns()
	if err != nil {
		return nil, fmt.Errorf("run store: %w", err)
	}
	if recs, err := s.Sweeps(); err != nil {
		return nil, fmt.Errorf("run store: %w", err)
	} else if len(recs) > 0 {
		// The latest sweep only: an older one's runs are not this one's.
		latest := map[string]bool{}
		for _, id := range recs[len(recs)-1].Runs {
			latest[id] = true
		}
		return slices.DeleteFunc(runs, func(r Run) bool { return !latest[r.ID()] }), nil
	}
	listed := map[string]bool{}
	for _, r := range runs {
		listed[r.ID()] = true
	}
	for _, id := range ids {
		dir := s.RunDir(id)
		if listed[id] || !exists(filepath.Join(dir, SpecFile)) {
			continue
		}
		r, err := ReadRun(dir)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}
