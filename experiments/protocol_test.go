package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/train"
)

func TestParseSpecRefusesBadFields(t *testing.T) {
	base := "tasks: [{name: SENT, data: sst2, suite: sentiment}]\nmodel: {name: bert-tiny}\n"
	for _, tc := range []struct{ extra, want string }{
		{"seeds: []\n", "field seeds"},
		{"budget: {max_iid: -5}\n", "field budget.max_iid"},
		{"budget: {max_steps: -1}\n", "field budget.max_steps"},
		{"corrections: [fish]\n", "field corrections[0]"},
		{"budget: {time_limit: 10m}\n", "time_limit"},
	} {
		_, err := ParseSpec([]byte(base + tc.extra))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one naming %s", tc.extra, err, tc.want)
		}
	}
	if _, err := ParseSpec([]byte(base + "corrections: [fish-outer-step]\n")); err != nil {
		t.Errorf("a known correction: %v", err)
	}
}

// TestRunOneRetryLeavesNoStaleFailure: beluga train --out DIR goes through
// the store's protocol, so a failed attempt's failed.json is gone once a
// retry succeeds, and a finished run is not redone.
func TestRunOneRetryLeavesNoStaleFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	spec := map[string]string{"method": "vanilla"}
	boom := errors.New("boom")
	if err := RunOne(context.Background(), dir, spec, func(context.Context, string) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("first attempt: %v", err)
	}
	if !exists(filepath.Join(dir, FailedFile)) || exists(filepath.Join(dir, DoneFile)) {
		t.Fatal("a failed attempt must leave failed.json and no done")
	}
	if err := RunOne(context.Background(), dir, spec, func(_ context.Context, d string) error {
		return os.WriteFile(filepath.Join(d, "model.txt"), []byte("ok"), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{FailedFile: false, DoneFile: true, SpecFile: true, TimingFile: true, "model.txt": true, ClaimFile: false} {
		if exists(filepath.Join(dir, f)) != want {
			t.Errorf("after the retry, %s present = %v, want %v", f, !want, want)
		}
	}
	if err := RunOne(context.Background(), dir, spec, func(context.Context, string) error { return boom }); !errors.Is(err, ErrAlreadyDone) {
		t.Errorf("a done run was redone: %v", err)
	}
	// A cancelled run stays incomplete: no failed.json, no done.
	dir2 := filepath.Join(t.TempDir(), "cancelled")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	RunOne(ctx, dir2, spec, func(ctx context.Context, _ string) error { return ctx.Err() })
	if exists(filepath.Join(dir2, FailedFile)) || exists(filepath.Join(dir2, DoneFile)) || exists(filepath.Join(dir2, ClaimFile)) {
		t.Error("a cancelled run must be left incomplete, its claim released")
	}
}

// depRunner checks, when a run starts, that the runs it needs are done.
type depRunner struct {
	store *Store
	fail  bool // the baseline fails
}

func (d depRunner) Run(ctx context.Context, r Run, dir string) error {
	for _, n := range r.Needs() {
		if d.store.State(n) != Done {
			return errors.New("started before its dependency was done")
		}
	}
	if d.fail && r.Configuration == ConfigIID {
		return errors.New("baseline broke")
	}
	return WriteResult(dir, &Result{})
}

func TestDependenciesAreScheduled(t *testing.T) {
	base := Run{Task: "SENT", Configuration: ConfigIID, Method: "vanilla", Score: ScoreIID,
		Train: train.RunSpec{Task: "sentiment", Configuration: train.ConfigIID, Method: "vanilla"}}
	var runs []Run
	for _, m := range []string{"vanilla", "l2", "lp"} {
		r := base
		r.Configuration, r.Method, r.Score, r.From = "IID-T", m, ScoreSeen, base.ID()
		r.Train.Configuration, r.Train.Method = train.ConfigIIDThenT, m
		runs = append(runs, r) // dependents first, their baseline missing from the list (another shard's)
	}
	sweep := append([]Run{base}, runs...)
	store := &Store{Dir: t.TempDir()}
	sum, err := Execute(context.Background(), store, runs, depRunner{store: store}, Options{Jobs: 3, Logger: discardLogger(), Sweep: sweep})
	if err != nil || len(sum.Failed) != 0 || sum.Ran != 4 {
		t.Fatalf("summary %+v, %v: want the baseline and its 3 dependents run, none failed", sum, err)
	}
	// A failed dependency fails its dependents with the reason, at once.
	store2 := &Store{Dir: t.TempDir()}
	sum, _ = Execute(context.Background(), store2, runs, depRunner{store: store2, fail: true}, Options{Jobs: 2, Logger: discardLogger(), Sweep: sweep})
	if len(sum.Failed) != 4 || !strings.Contains(sum.Err().Error(), "baseline broke") {
		t.Errorf("summary %+v: want the baseline and its 3 dependents failed, naming why", sum)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestLateStaleRecoveryKeepsTheFreshClaim: two processes judge one claim
// stale; the first recovers it and claims the run; the second, acting on
// its old reading, must not remove the first's fresh claim.
func TestLateStaleRecoveryKeepsTheFreshClaim(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	dir := s.RunDir("r1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ClaimFile)
	host, _ := os.Hostname()
	// A claim of a process that no longer exists on this host.
	if err := os.WriteFile(path, []byte(`{"host":"`+host+`","pid":2147483646,"started":"2020-01-01T00:00:00Z"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stale, err := readClaim(path)
	if err != nil || !s.stale(stale) {
		t.Fatalf("setup: claim %+v stale=%v, %v", stale, s.stale(stale), err)
	}
	release, err := s.tryClaim("r1") // the first process recovers and claims
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	fresh, _ := os.ReadFile(path)
	if s.takeOver(path, stale) { // the second, late, with its old reading
		t.Fatal("a late recovery removed the fresh claim")
	}
	if now, _ := os.ReadFile(path); string(now) != string(fresh) {
		t.Errorf("claim changed from %s to %s", fresh, now)
	}
	if _, err := s.tryClaim("r1"); !errors.Is(err, errClaimed) {
		t.Errorf("second claim: %v, want errClaimed", err)
	}
}

func TestTrainRunnerCheckRefusesWhatItWouldIgnore(t *testing.T) {
	base := "tasks: [{name: SENT, data: sst2, suite: sentiment}]\n"
	for _, tc := range []struct{ spec, want string }{
		{"model: {name: bert-tiny}\ngrid: {lr: [fast]}\n", "field grid.lr[0]"},
		{"model: {name: bert-tiny, options: {max_length: \"32\"}}\n", "field model.options.max_length"},
		{"model: {name: bert-tiny}\ngrid: {learning_rate: [0.1]}\n", "field grid.learning_rate"},
		{"model: {name: bert-tiny, options: {glove: x}}\n", "field model.options.glove"},
		{"model: {name: gpt}\n", "field model.name"},
		{"model: {name: bert}\n", "field model.checkpoint"},
		{"model: {name: bert-tiny}\ngrid: {batch_size: [0]}\n", "field grid.batch_size[0]"},
	} {
		s, err := ParseSpec([]byte(base + tc.spec))
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		if err := (&TrainRunner{}).Check(s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error naming %s", tc.spec, err, tc.want)
		}
	}
	s, err := ParseSpec([]byte(base + "model: {name: wordvec, options: {glove: g.txt, hidden: 8, max_length: 16}}\ngrid: {lr: [0.001], iid_batch_size: [16]}\nconfigurations: [IID+T]\nmethods: [dro-domainbed, irm-domainbed]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&TrainRunner{}).Check(s); err != nil {
		t.Errorf("a good spec: %v", err)
	}
}

// The shipped specs must run as shipped.
func TestShippedSpecsAreTrainable(t *testing.T) {
	paths, _ := filepath.Glob("../specs/*.yaml")
	if len(paths) < 3 {
		t.Fatalf("found %d shipped specs", len(paths))
	}
	for _, p := range paths {
		s, err := LoadSpec(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if err := (&TrainRunner{}).Check(s); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestDependencyGivenUpElsewhereIsRunHere: a dependency another live
// process claims is waited for; when that process lets it go unfinished,
// the sweep runs it itself and then its dependents.
func TestDependencyGivenUpElsewhereIsRunHere(t *testing.T) {
	defer func(d time.Duration) { depPoll = d }(depPoll)
	depPoll = 10 * time.Millisecond
	base := Run{Task: "SENT", Configuration: ConfigIID, Method: "vanilla", Score: ScoreIID}
	dep := base
	dep.Configuration, dep.Score, dep.From = "IID-T", ScoreSeen, base.ID()
	store := &Store{Dir: t.TempDir()}
	release, err := store.tryClaim(base.ID()) // "another process" (alive: this one)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		release() // gives the baseline up without finishing it
	}()
	sum, err := Execute(context.Background(), store, []Run{dep}, depRunner{store: store}, Options{Logger: discardLogger(), Sweep: []Run{base, dep}})
	if err != nil || sum.Err() != nil || store.State(base.ID()) != Done || store.State(dep.ID()) != Done {
		t.Fatalf("summary %+v, %v, %v: want the baseline taken back and both done", sum, err, sum.Err())
	}
}

// specs/hatecheck.yaml: T only (no i.i.d. data, so no baseline), one run
// per held-out functionality (29) and class (11), and the seen run.
func TestHateCheckSpecExpands(t *testing.T) {
	path := shareddata.Path(t, "data/hatecheck/test_suite_cases.csv")
	s, err := LoadSpec("../specs/hatecheck.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Tasks[0].Suite = path
	runs, err := Expand(context.Background(), s, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range runs {
		if r.Configuration != "T" || r.Train.TaskDef == nil {
			t.Fatalf("run %s: want a declared task trained with T", r.Label())
		}
		count[r.Score]++
	}
	if count[ScoreSeen] != 1 || count[ScoreFunc] != 29 || count[ScoreClass] != 11 || len(runs) != 41 {
		t.Errorf("runs per score %v, want seen 1, func 29, class 11", count)
	}
}

// TestTimingRecordsKernels: a run's timing.json says which backend and
// kernel path computed it, and on how many threads (execution details the
// run's identity leaves out).
func TestTimingRecordsKernels(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := RunOne(context.Background(), dir, map[string]string{"method": "vanilla"}, func(context.Context, string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, TimingFile))
	if err != nil {
		t.Fatal(err)
	}
	var tm Timing
	if err := json.Unmarshal(b, &tm); err != nil {
		t.Fatal(err)
	}
	def, _ := models.DefaultBackend()
	if want := def.Name() + "/" + def.Kernels(); tm.Kernels != want || tm.Threads != runtime.GOMAXPROCS(0) {
		t.Errorf("timing.json records kernels %q on %d threads, want %q on %d", tm.Kernels, tm.Threads, want, runtime.GOMAXPROCS(0))
	}
}
