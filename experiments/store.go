package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/train"
)

// Files of a run directory. A run writes its outputs (ResultFile and whatever
// else the runner records: predictions, curve, log), then the store writes
// TimingFile and DoneFile last: DoneFile records the size and SHA-256 of
// every other file of the run (Manifest), so that a run proves its results.
// ClaimFile exists while a process works on the run; FailedFile records why
// the last attempt failed.
const (
	SpecFile   = "spec.json"
	TimingFile = "timing.json"
	DoneFile   = "done"
	ClaimFile  = "claim"
	FailedFile = "failed.json"
	LogFile    = "log.txt"
)

// State is a run's state as read from its directory.
type State int

// The states of a run.
const (
	Missing    State = iota // no directory: not launched
	Incomplete              // directory without done, no live claim: interrupted
	Running                 // a live claim: a process is working on it
	Failed                  // the last attempt recorded a failure
	// Damaged: done written, but a file it vouches for is missing, of
	// another size or (for the files reports read, and for every file
	// under Verify) of other content, or done itself is no record of
	// them. A damaged run is never done: beluga run redoes it.
	Damaged
	// Stale: not done, but a finished run of its slot (Run.Slot) read
	// other inputs: its results are of what the inputs were (StatusOf).
	Stale
	Done // done written, and the files it vouches for are there
	// NotFetched: not done, and an input it starts from is not on this
	// machine yet (Input.Absent: a hub checkpoint not in the cache; its ID
	// is provisional when the commit is not known either, Input.Pending)
	// (StatusOf).
	NotFetched
)

func (s State) String() string {
	return [...]string{"missing", "incomplete", "running", "failed", "damaged", "stale", "done", "checkpoint not fetched"}[s]
}

// Store is a directory of runs, one sub-directory per run named by its ID
// (DomainBed's sweep layout). All state lives on disk, so any number of
// processes on any number of hosts sharing the filesystem can work on one
// store.
type Store struct {
	Dir string
	// StaleAfter is how old a claim's heartbeat may get before the claim is
	// considered abandoned (its process died on another host). Zero means
	// DefaultStaleAfter. Claims by dead processes on this host are stale at once.
	StaleAfter time.Duration
}

// DefaultStaleAfter is the default heartbeat age of an abandoned claim.
const DefaultStaleAfter = 10 * time.Minute

// heartbeat is how often a worker refreshes its claim's modification time.
const heartbeat = 30 * time.Second

// RunDir is the directory of a run.
func (s *Store) RunDir(id string) string { return filepath.Join(s.Dir, id) }

// State reads a run's state from its directory, checking a finished run's
// files as Check does.
func (s *Store) State(id string) State {
	st, _ := s.Check(id, false)
	return st
}

// Check reads a run's state from its directory, and for a damaged run
// why. A run with done is checked against the record done holds
// (Manifest): every file it vouches for must be there with its size, and
// the files reports read (QuickFiles) with their content; full checks the
// content of every file (beluga verify).
func (s *Store) Check(id string, full bool) (State, string) {
	dir := s.RunDir(id)
	if _, err := os.Stat(dir); err != nil {
		return Missing, ""
	}
	if exists(filepath.Join(dir, DoneFile)) {
		if err := verifyRun(dir, full); err != nil {
			return Damaged, err.Error()
		}
		return Done, ""
	}
	if c, err := readClaim(filepath.Join(dir, ClaimFile)); err == nil && !s.stale(c) {
		return Running, ""
	}
	if exists(filepath.Join(dir, FailedFile)) {
		return Failed, ""
	}
	return Incomplete, ""
}

// FailureReason returns the recorded reason of a failed run, if any.
func (s *Store) FailureReason(id string) string {
	b, err := os.ReadFile(filepath.Join(s.RunDir(id), FailedFile))
	if err != nil {
		return ""
	}
	var f struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &f) != nil {
		return strings.TrimSpace(string(b))
	}
	return f.Error
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// claim is the content of a claim file: who works on the run.
type claim struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	beat    time.Time // modification time of the file: the last heartbeat
}

func readClaim(path string) (claim, error) {
	var c claim
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		// A claim is written in one small write; a torn one belongs to a
		// process killed in between and is judged by its age alone.
		c = claim{}
	}
	c.beat = fi.ModTime()
	return c, nil
}

// stale reports whether a claim's process is gone: a dead process on this
// host, or a heartbeat older than StaleAfter.
func (s *Store) stale(c claim) bool {
	host, _ := os.Hostname()
	if c.Host == host && c.PID > 0 && !processAlive(c.PID) {
		return true
	}
	after := s.StaleAfter
	if after <= 0 {
		after = DefaultStaleAfter
	}
	return time.Since(c.beat) > after
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// errClaimed is returned by tryClaim when another live process holds the run.
var errClaimed = errors.New("claimed by another process")

// tryClaim atomically claims a run for this process: the claim file is
// created with O_EXCL, so of two processes only one succeeds. A stale claim
// is removed and the claim retried once; the removal is itself a rename race
// that only one process wins.
func (s *Store) tryClaim(id string) (release func(), err error) {
	return s.claimDir(s.RunDir(id))
}

func (s *Store) claimDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ClaimFile)
	host, _ := os.Hostname()
	for attempt := 0; attempt < 2; attempt++ {
		err := newClaim(path, claim{Host: host, PID: os.Getpid(), Started: time.Now().UTC()})
		if err == nil {
			stop := make(chan struct{})
			go func() {
				t := time.NewTicker(heartbeat)
				defer t.Stop()
				for {
					select {
					case <-stop:
						return
					case now := <-t.C:
						os.Chtimes(path, now, now)
					}
				}
			}()
			return func() { close(stop); os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("claim %s: %w", path, err)
		}
		c, rerr := readClaim(path)
		if rerr != nil {
			continue // released in between: try again
		}
		if !s.stale(c) {
			return nil, errClaimed
		}
		if !s.takeOver(path, c) {
			return nil, errClaimed
		}
	}
	return nil, errClaimed
}

// midClaim runs between writing a claim's content and putting the claim in
// place; tests kill the process there.
var midClaim = func() {}

// pendingClaim prefixes the private file a claim is written to before it is
// put in place. It starts with ClaimFile so that another process's reset
// of the run directory keeps it (it removed it between write and link);
// like takeover tokens, one a process killed in that instant left stays.
const pendingClaim = ClaimFile + ".pending-"

// newClaim creates the claim file at path, content and all, in one step:
// the content goes to a private file that is then hard-linked into place,
// which fails if a claim exists (as O_EXCL would). A process killed at any
// moment leaves no claim or a whole one — never an empty claim, which only
// its age could judge, so that the run looked running for StaleAfter after
// its process had died.
func newClaim(path string, c claim) error {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("%s%d-%d", pendingClaim, c.PID, time.Now().UnixNano()))
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write claim %s: %w", path, err)
	}
	defer os.Remove(tmp)
	midClaim()
	return os.Link(tmp, path)
}

// identity names one claim: its process and start, or for a torn claim its
// last heartbeat.
func (c claim) identity() string {
	return fmt.Sprintf("%s.%d.%d.%d", c.Host, c.PID, c.Started.UnixNano(), c.beat.UnixNano())
}

// takeOver removes the stale claim c at path for this process. Of several
// processes that judged c stale, only the one that creates c's takeover
// token (O_EXCL) may remove it, and only while the claim at path is still
// c: a process that read c long ago can no longer remove the fresh claim of
// the process that recovered it first. The tokens stay in the directory
// while the run is redone (reset keeps them), so that a late process cannot
// take c over again; a run done removes them (tidyClaims).
func (s *Store) takeOver(path string, c claim) bool {
	f, err := os.OpenFile(path+".takeover."+c.identity(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false
	}
	f.Close()
	now, err := readClaim(path)
	if err != nil || now.identity() != c.identity() {
		return false
	}
	return os.Remove(path) == nil
}

// reset empties a run directory except its claim: a run without done is
// redone from scratch.
func (s *Store) reset(id string) error { return resetDir(s.RunDir(id)) }

func resetDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ClaimFile) {
			continue // the claim and the takeover tokens of stale claims
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("reset run %s: %w", dir, err)
		}
	}
	return nil
}

// Timing records when and how a run ran: the compute backend and vector
// kernel path ("go/avx512": models.KernelPath) and GOMAXPROCS are
// execution details, like the host, outside the run's identity.
type Timing struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
	Host    string    `json:"host"`
	Kernels string    `json:"kernels,omitempty"`
	// Precision is the model's, with the kernel its products ran on, for
	// a run not in fp32 ("bf16/avx512_bf16", "bf16/go"): the precision is
	// part of the run's identity, the kernel an execution detail.
	Precision string `json:"precision,omitempty"`
	Threads   int    `json:"threads,omitempty"`
}

// precision names a run spec's precision and the kernel of its products,
// "" for fp32.
func precision(spec any) string {
	var p models.Precision
	switch s := spec.(type) {
	case Run:
		p = s.Train.Model.Precision
	case train.RunSpec:
		p = s.Model.Precision
	case *train.RunSpec:
		p = s.Model.Precision
	}
	if p == models.PrecisionBF16 {
		return string(p) + "/" + models.BF16Kernel()
	}
	return ""
}

// kernels names the backend and kernel path computations run on.
func kernels() string {
	b, _ := models.DefaultBackend()
	return b.Name() + "/" + b.Kernels()
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'))
}

// Clean removes the directories of the given runs whose state is one of
// states (never those done or held by a live claim) and returns how many
// it removed.
func (s *Store) Clean(ids []string, states ...State) (int, error) {
	n := 0
	for _, id := range ids {
		st := s.State(id)
		if st == Done || st == Running || !slices.Contains(states, st) {
			continue
		}
		if err := os.RemoveAll(s.RunDir(id)); err != nil {
			return n, fmt.Errorf("clean run %s: %w", id, err)
		}
		n++
	}
	return n, nil
}

// Dirs lists the run IDs present in the store directory: its
// sub-directories, and its symbolic links to directories (a run moved to
// another disk and linked back is still the store's, for verify as for
// status).
func (s *Store) Dirs() ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(s.Dir, e.Name())); err == nil && st.IsDir() {
				ids = append(ids, e.Name())
			}
			continue
		}
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}
