package experiments

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/beluga-nlp/beluga/train"
)

// Runner executes one run: it trains and evaluates the model the spec
// describes and writes the run's outputs into dir (at least ResultFile via
// WriteResult; predictions, curves and logs as it likes). It must honour ctx
// cancellation. The store writes the spec before and timing and done after.
type Runner interface {
	Run(ctx context.Context, spec Run, dir string) error
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, spec Run, dir string) error

// Run implements Runner.
func (f RunnerFunc) Run(ctx context.Context, spec Run, dir string) error {
	return f(ctx, spec, dir)
}

// Shard selects the I-th of N disjoint slices of a sweep (0 ≤ I < N). A run
// belongs to the slice of its ID's first 64 bits modulo N, so the assignment
// depends on nothing but the run itself.
type Shard struct{ I, N int }

// ParseShard reads "I/N".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want I/N with 0 <= I < N (e.g. 0/4)", s)
	}
	return Shard{I: i, N: n}, nil
}

// Contains reports whether the run with this ID belongs to the shard.
func (s Shard) Contains(id string) bool {
	if s.N <= 1 {
		return true
	}
	v, err := strconv.ParseUint(id[:min(len(id), 16)], 16, 64)
	if err != nil {
		// Not a run ID: hash its bytes so that the assignment stays stable.
		sum := sha256.Sum256([]byte(id))
		v = binary.BigEndian.Uint64(sum[:8])
	}
	return v%uint64(s.N) == uint64(s.I)
}

// Select returns the runs of the shard, in their original order.
func (s Shard) Select(runs []Run) []Run {
	var out []Run
	for _, r := range runs {
		if s.Contains(r.ID()) {
			out = append(out, r)
		}
	}
	return out
}

// Options controls Execute.
type Options struct {
	// Jobs is the number of runs executed at once (default 1).
	Jobs int
	// Progress, when not nil, is told about every finished run.
	Progress Progress
	// Logger receives one line per finished run; nil means slog.Default().
	Logger *slog.Logger
	// WaitDeps bounds the wait for dependencies other processes are running
	// (0: DefaultWaitDeps).
	WaitDeps time.Duration
	// Sweep is the whole sweep the runs are part of (a shard's runs are
	// part of all of the sweep's): where the runs they need (Run.Needs)
	// are looked up. Nil: the runs themselves.
	Sweep []Run
}

// Progress follows a sweep.
type Progress interface {
	// Start is called once with the number of runs to execute.
	Start(total int)
	// Finished is called after every run, successful or not.
	Finished(spec Run, err error)
	// Stop is called at the end.
	Stop()
}

// Summary tells what Execute did.
type Summary struct {
	Total   int         // runs considered
	Skipped int         // already done
	Busy    int         // claimed by another live process
	Ran     int         // executed successfully now
	Failed  []FailedRun // executed and failed now
	Elapsed time.Duration
}

// FailedRun is a run that failed, with why.
type FailedRun struct {
	ID    string
	Spec  Run
	Error error
}

// Err summarises the failures as one error, nil if none failed.
func (s Summary) Err() error {
	if len(s.Failed) == 0 {
		return nil
	}
	var b strings.Builder
	runs := "runs"
	if s.Total == 1 {
		runs = "run"
	}
	fmt.Fprintf(&b, "%d of %d %s failed:", len(s.Failed), s.Total, runs)
	for _, f := range s.Failed {
		// An error of several lines stays indented under its run.
		fmt.Fprintf(&b, "\n  %s (%s): %s", f.ID, f.Spec.Label(), strings.ReplaceAll(f.Error.Error(), "\n", "\n    "))
	}
	return errors.New(b.String())
}

// DefaultWaitDeps bounds how long a sweep waits for a dependency that
// another process is running.
const DefaultWaitDeps = 24 * time.Hour

// depPoll is how often a sweep looks whether a dependency that another
// process holds is done.
var depPoll = 2 * time.Second

// Execute runs the runs of the store that are not done with a pool of
// opts.Jobs workers. A run already done is skipped; a run without done, or
// damaged, is redone from scratch; a run another live process has claimed
// is left to it. Dependencies (Run.Needs) are scheduled, never failed: a
// run starts once the runs it needs are done — a missing dependency, even
// one outside the given runs (another shard's, found in opts.Sweep), is run
// here first; one that another process is running is waited for (up to
// opts.WaitDeps). One failing run
// does not stop the others, only the runs that need it: failures are
// recorded in their directories and listed in the summary. Execute returns
// an error only when the context is cancelled or the store cannot be
// written.
func Execute(ctx context.Context, store *Store, runs []Run, runner Runner, opts Options) (Summary, error) {
	start := time.Now()
	if err := os.MkdirAll(store.Dir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("run store: %w", err)
	}
	s := newScheduler(store, runner, opts, runs)
	for _, r := range runs {
		s.add(r, true)
	}
	if s.missingDep != nil {
		return s.sum, s.missingDep
	}
	if opts.Progress != nil {
		opts.Progress.Start(len(s.todo))
		defer opts.Progress.Stop()
	}
	s.loop(ctx)
	s.sum.Elapsed = time.Since(start)
	if s.fatal != nil {
		return s.sum, s.fatal
	}
	if err := ctx.Err(); err != nil {
		return s.sum, err
	}
	return s.sum, nil
}

// job is a run Execute executes, with its ID: a hash of its spec, computed
// once.
type job struct {
	r  Run
	id string
}

// outcome is how a job's execution ended; ran says whether the runner was
// called (executeOne).
type outcome struct {
	job
	ran bool
	err error
	dt  time.Duration
}

// scheduler is one Execute: the runs to do, each after the missing runs
// it needs, and the pool of workers that executes them.
type scheduler struct {
	store    *Store
	runner   Runner
	opts     Options
	log      *slog.Logger
	jobs     int
	waitDeps time.Duration

	byID     map[string]Run    // every run of the sweep, by ID
	searchOf map[string]string // a trial's search
	sum      Summary

	// The plan (add).
	todo       []job
	deps       map[string][]string
	queued     map[string]bool
	missingDep error
	// done remembers the runs found done, so that a dependency is checked
	// against its files once, not every time the queue is looked at.
	done map[string]bool

	// The execution (loop).
	cancel    context.CancelFunc
	ctx       context.Context
	fatal     error
	results   chan outcome
	failed    map[string]string // run ID → why, for its dependents
	elsewhere map[string]bool   // runs another process held when we tried them
	pending   []job
	running   int
}

func newScheduler(store *Store, runner Runner, opts Options, runs []Run) *scheduler {
	s := &scheduler{store: store, runner: runner, opts: opts, log: opts.Logger, jobs: max(opts.Jobs, 1), waitDeps: opts.WaitDeps,
		byID: map[string]Run{}, searchOf: map[string]string{}, sum: Summary{Total: len(runs)},
		deps: map[string][]string{}, queued: map[string]bool{}, done: map[string]bool{},
		results: make(chan outcome), failed: map[string]string{}, elsewhere: map[string]bool{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.waitDeps <= 0 {
		s.waitDeps = DefaultWaitDeps
	}
	for _, r := range append(slices.Clone(opts.Sweep), runs...) {
		s.byID[r.ID()] = r
		for _, t := range r.Trials {
			s.searchOf[t] = r.ID()
		}
	}
	return s
}

// add plans r, after the runs it needs that are not done; wanted says r
// is one of the runs Execute was given (a dependency is counted in the
// total when it is planned).
func (s *scheduler) add(r Run, wanted bool) {
	id := r.ID()
	if s.queued[id] {
		if wanted {
			s.sum.Total--
		}
		return
	}
	s.queued[id] = true
	// A trial of a done search is not needed: a store whose searches ran
	// their trials in one run (before trials were runs) keeps them in the
	// search's SearchFile.
	if s.store.State(id) == Done || (r.Score == ScoreTrial && s.searchOf[id] != "" && s.store.State(s.searchOf[id]) == Done) {
		s.done[id] = true
		if wanted {
			s.sum.Skipped++
		}
		return
	}
	for _, d := range r.Needs() {
		s.deps[id] = append(s.deps[id], d)
		dr, ok := s.byID[d]
		if !ok {
			if s.store.State(d) != Done {
				s.missingDep = errors.Join(s.missingDep, fmt.Errorf("run %s (%s) needs run %s, which is not in the sweep", id, r.Label(), d))
			}
			continue
		}
		s.add(dr, false)
	}
	if !wanted {
		s.sum.Total++
	}
	s.todo = append(s.todo, job{r, id})
}

// loop starts every job as soon as a worker is free and the runs it needs
// are done, until none is left, the context is cancelled or a job failed
// for the store's sake.
func (s *scheduler) loop(ctx context.Context) {
	s.ctx, s.cancel = context.WithCancel(ctx)
	defer s.cancel()
	s.pending = s.todo
	var waiting time.Time
	for {
		if s.ctx.Err() == nil {
			s.startReady()
		}
		if s.running == 0 && (len(s.pending) == 0 || s.ctx.Err() != nil) {
			return
		}
		if s.running == 0 {
			// Everything left waits on runs other processes hold.
			if waiting.IsZero() {
				waiting = time.Now()
			}
			if time.Since(waiting) > s.waitDeps {
				for _, j := range s.pending {
					s.finish(outcome{job: j, ran: true, err: fmt.Errorf("waited %s for its dependencies, held by other processes", s.waitDeps)})
				}
				return
			}
			select {
			case <-time.After(depPoll):
			case <-s.ctx.Done():
			}
			continue
		}
		waiting = time.Time{}
		o := <-s.results
		s.running--
		s.finish(o)
	}
}

// startReady starts the pending jobs that can start, as many as there are
// free workers, and fails those that never will.
func (s *scheduler) startReady() {
	var still []job
	for i := 0; i < len(s.pending); i++ { // ready may append to pending
		j := s.pending[i]
		if s.running == s.jobs {
			still = append(still, j)
			continue
		}
		ok, err := s.ready(j)
		switch {
		case err != nil:
			s.finish(outcome{job: j, ran: true, err: err})
		case ok:
			s.running++
			go func(j job) {
				t0 := time.Now()
				ran, err := executeOne(s.ctx, s.store, j.r, s.runner, s.opts.Progress)
				s.results <- outcome{j, ran, err, time.Since(t0)}
			}(j)
		default:
			still = append(still, j)
		}
	}
	s.pending = still
}

// ready says whether a run can start now, or why it never will. A
// dependency this sweep queued is waited for until it is done or fails
// here; one another process held is followed in the store, and taken back
// when that process gave it up.
func (s *scheduler) ready(j job) (bool, error) {
	for _, d := range s.deps[j.id] {
		if why, ok := s.failed[d]; ok {
			return false, fmt.Errorf("needs run %s, which failed: %s", d, why)
		}
		if s.done[d] {
			continue
		}
		switch s.store.State(d) {
		case Done:
			s.done[d] = true
			continue
		case Failed:
			if s.elsewhere[d] {
				return false, fmt.Errorf("needs run %s, which failed: %s", d, s.store.FailureReason(d))
			}
		case Incomplete, Missing, Damaged:
			if s.elsewhere[d] {
				// Its process died or let it go: run it here.
				delete(s.elsewhere, d)
				for _, q := range s.todo {
					if q.id == d {
						s.pending = append(s.pending, q)
					}
				}
			}
		}
		return false, nil
	}
	return true, nil
}

// finish records how a job ended: in the summary, the log and the
// progress display.
func (s *scheduler) finish(o outcome) {
	id, err := o.id, o.err
	switch {
	case errors.Is(err, errAlreadyDone):
		s.sum.Skipped++
	case errors.Is(err, errClaimed):
		s.sum.Busy++
		s.elsewhere[id] = true
		s.log.Info("run busy elsewhere", "id", id, "run", o.r.Label())
	case err != nil && s.ctx.Err() != nil:
		// Cancelled: the run stays incomplete and is redone next time.
	case err != nil && !o.ran:
		s.fatal = errors.Join(s.fatal, err)
		s.cancel()
	case err != nil:
		s.failed[id] = err.Error()
		s.sum.Failed = append(s.sum.Failed, FailedRun{ID: id, Spec: o.r, Error: err})
		s.log.Error("run failed", "id", id, "run", o.r.Label(), "err", err)
	default:
		s.sum.Ran++
		s.done[id] = true
		s.log.Info("run done", "id", id, "run", o.r.Label(), "seconds", o.dt.Round(time.Millisecond).Seconds())
	}
	if s.opts.Progress != nil && !errors.Is(err, errClaimed) && !errors.Is(err, errAlreadyDone) {
		s.opts.Progress.Finished(o.r, err)
	}
}

// errAlreadyDone is returned by executeOne when another process finished the
// run between the sweep's listing and the claim.
var errAlreadyDone = errors.New("already done")

// executeOne claims, resets and executes one run of the store. ran reports
// whether the runner was called: an error with ran false is the store's,
// not the run's.
func executeOne(ctx context.Context, store *Store, r Run, runner Runner, p Progress) (ran bool, err error) {
	return store.runInDir(ctx, store.RunDir(r.ID()), r, func(ctx context.Context, dir string) error {
		// Claimed: the run is this process's to train, and a display that
		// follows runs step by step is told of each of its updates.
		if sp, ok := p.(StepProgress); ok {
			sp.Began(r)
			ctx = train.WithSteps(ctx, func(step, total int) { sp.Step(r, step, total) })
		}
		if err := safeRun(ctx, runner, r, dir); err != nil {
			return err
		}
		out := ResultFile
		switch r.Score {
		case ScoreSearch:
			out = SearchFile
		case ScoreTrial:
			out = TrialFile
		}
		if _, err := os.Stat(filepath.Join(dir, out)); err != nil {
			return fmt.Errorf("runner wrote no %s", out)
		}
		return nil
	})
}

// RunOne executes one run in dir itself with the run-directory protocol of
// a store (beluga train --out DIR): claim, reset, SpecFile, fn, then
// TimingFile and DoneFile — or FailedFile with the reason. A cancelled run
// is left incomplete. A run already done is not redone (ErrAlreadyDone).
func RunOne(ctx context.Context, dir string, spec any, fn func(ctx context.Context, dir string) error) error {
	s := &Store{Dir: dir}
	if exists(filepath.Join(dir, DoneFile)) && verifyRun(dir, false) == nil {
		return ErrAlreadyDone
	}
	_, err := s.runInDir(ctx, dir, spec, fn)
	if errors.Is(err, errClaimed) {
		return fmt.Errorf("run directory %s: %w", dir, err)
	}
	return err
}

// ErrAlreadyDone says a run directory holds a finished run.
var ErrAlreadyDone = errAlreadyDone

// runInDir is the run-directory protocol every run goes through.
func (s *Store) runInDir(ctx context.Context, dir string, spec any, fn func(ctx context.Context, dir string) error) (ran bool, err error) {
	release, err := s.claimDir(dir)
	if err != nil {
		return false, err
	}
	defer release()
	// Another process may have finished it between our check and our
	// claim; a damaged run is redone.
	if exists(filepath.Join(dir, DoneFile)) && verifyRun(dir, false) == nil {
		return false, errAlreadyDone
	}
	if err := resetDir(dir); err != nil {
		return false, err
	}
	if err := writeJSON(filepath.Join(dir, SpecFile), spec); err != nil {
		return false, err
	}
	start := time.Now()
	if err := fn(ctx, dir); err != nil {
		if ctx.Err() == nil {
			if werr := writeJSON(filepath.Join(dir, FailedFile), map[string]string{"error": err.Error(), "time": time.Now().UTC().Format(time.RFC3339)}); werr != nil {
				err = errors.Join(err, werr)
			}
		}
		return true, err
	}
	host, _ := os.Hostname()
	end := time.Now()
	if err := writeJSON(filepath.Join(dir, TimingFile), Timing{Start: start.UTC(), End: end.UTC(), Seconds: end.Sub(start).Seconds(), Host: host, Kernels: kernels(), Precision: precision(spec), Threads: runtime.GOMAXPROCS(0)}); err != nil {
		return false, err
	}
	if err := writeDone(dir); err != nil {
		return false, err
	}
	tidyClaims(dir)
	return true, nil
}

// tidyClaims removes, from a run just done, the takeover tokens of the
// stale claims this process took over, and claims a killed process left
// half-made (older than a heartbeat: one in the making lives for an
// instant). Removing a token cannot let a late process remove a live claim:
// takeOver removes only the very claim it judged stale, and that claim is
// gone.
func tidyClaims(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ClaimFile+".takeover."):
		case strings.HasPrefix(name, pendingClaim):
			if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < heartbeat {
				continue
			}
		default:
			continue
		}
		os.Remove(filepath.Join(dir, name))
	}
}

// safeRun turns a runner's panic into the run's error so that one broken run
// does not take the sweep down.
func safeRun(ctx context.Context, runner Runner, r Run, dir string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("runner panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return runner.Run(ctx, r, dir)
}
