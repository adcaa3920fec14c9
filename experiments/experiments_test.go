package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/train"
)

// TestMain doubles as the sweep process of the interruption and shard tests:
// with BELUGA_TEST_SWEEP set to a store directory it runs the tiny sweep into
// it (slowly, so that it can be killed midway) and exits.
func TestMain(m *testing.M) {
	if dir := os.Getenv("BELUGA_TEST_SWEEP"); dir != "" {
		os.Exit(sweepProcess(dir, os.Getenv("BELUGA_TEST_SHARD")))
	}
	if dir := os.Getenv("BELUGA_TEST_DIE_CLAIMING"); dir != "" {
		// Claim a run and be killed halfway through claiming it.
		midClaim = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
		(&Store{Dir: dir}).tryClaim("run")
		os.Exit(3) // not reached
	}
	os.Exit(m.Run())
}

func sweepProcess(dir, shard string) int {
	runs, err := tinyRuns()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	all := runs
	if shard != "" {
		sh, err := ParseShard(shard)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		runs = sh.Select(runs)
	}
	runner := fakeRunner{delay: 60 * time.Millisecond}
	if n, err := strconv.Atoi(os.Getenv("BELUGA_TEST_HANG_AFTER")); err == nil {
		// Finish n runs, then hang every later one until killed.
		var started atomic.Int32
		runner = fakeRunner{hang: func() bool { return started.Add(1) > int32(n) }}
	}
	sum, err := Execute(context.Background(), &Store{Dir: dir}, runs, runner, Options{Jobs: 2, Sweep: all})
	if err != nil || sum.Err() != nil {
		fmt.Fprintln(os.Stderr, err, sum.Err())
		return 1
	}
	return 0
}

func tinyRuns() ([]Run, error) {
	s, err := LoadSpec(filepath.Join("testdata", "tiny.yaml"))
	if err != nil {
		return nil, err
	}
	return Expand(context.Background(), s, &Inputs{})
}

func mustTinyRuns(t *testing.T) []Run {
	t.Helper()
	runs, err := tinyRuns()
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestExpand(t *testing.T) {
	runs := mustTinyRuns(t)
	// 1 baseline + 2 configurations × 2 methods × (1 seen + 3 func + 2 class + 2 type)
	if want := 1 + 2*2*8; len(runs) != want {
		t.Fatalf("got %d runs, want %d", len(runs), want)
	}
	if r := runs[0]; r.Configuration != ConfigIID || r.Score != ScoreIID {
		t.Errorf("first run is %s, want the IID baseline", r.Label())
	}
	if r := runs[1]; r.Configuration != "IID-T" || r.Method != "vanilla" || r.Score != ScoreSeen {
		t.Errorf("second run is %s, want IID-T vanilla seen", r.Label())
	}
	if r := runs[2]; r.Score != ScoreFunc || r.Fold != "negation" {
		t.Errorf("third run is %s, want the negation fold", r.Label())
	}
	ids := map[string]bool{}
	for _, r := range runs {
		id := r.ID()
		if len(id) != IDLength || ids[id] {
			t.Errorf("run %s: ID %q not unique or wrong length", r.Label(), id)
		}
		ids[id] = true
	}
	again := mustTinyRuns(t)
	for i := range runs {
		if runs[i].ID() != again[i].ID() {
			t.Fatalf("run %d: ID not stable across expansions", i)
		}
	}
}

// A run's ID is what it computes: a grid key is the field it sets, so lr
// and hyper.lr give one run with one ID (and one label); another value is
// another run.
func TestIDIsTheFieldNotItsSpelling(t *testing.T) {
	ids := func(grid string) ([]string, []string) {
		t.Helper()
		s, err := ParseSpec([]byte("tasks: [{name: SENT, data: sst2, suite: sentiment}]\nmodel: {name: bert-tiny}\nconfigurations: [IID+T]\nscores: [seen]\ngrid: " + grid + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		runs, err := Expand(context.Background(), s, &Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		var ids, labels []string
		for _, r := range runs {
			ids, labels = append(ids, r.ID()), append(labels, r.Label())
		}
		return ids, labels
	}
	short, shortLabels := ids("{lr: [0.001], batch_size: [16]}")
	path, pathLabels := ids("{hyper.batch_size: [16], hyper.lr: [0.001]}")
	if strings.Join(short, " ") != strings.Join(path, " ") {
		t.Errorf("lr and hyper.lr: IDs %v and %v, want one run each", short, path)
	}
	if strings.Join(shortLabels, "|") != strings.Join(pathLabels, "|") {
		t.Errorf("labels %q and %q, want the same", shortLabels, pathLabels)
	}
	other, _ := ids("{lr: [0.002], batch_size: [16]}")
	if other[1] == short[1] {
		t.Errorf("lr 0.002 and 0.001 gave one run %s", short[1])
	}
	if _, err := ParseSpec([]byte("tasks: [{name: SENT}]\nmodel: {name: x}\ngrid: {lr: [0.001], hyper.lr: [0.002]}\n")); err == nil || !strings.Contains(err.Error(), "sets hyper.lr, as grid.hyper.lr does") {
		t.Errorf("lr and hyper.lr in one grid: %v, want a refusal", err)
	}
}

func TestGridMultipliesRuns(t *testing.T) {
	s, err := ParseSpec([]byte(`
tasks: [{name: SENT, folds: {func: [a, b], class: [x], type: [MFT]}}]
model: {name: fake}
configurations: [IID+T]
methods: [vanilla]
seeds: [1, 2]
grid: {lr: [1.0e-4, 3.0e-4], batch_size: [16]}
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Expand(context.Background(), s, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	// 2 seeds × (baseline + 2 lr × (seen + 2 func + 1 class + 1 type)): the
	// baseline reads no suite-phase learning rate.
	if want := 2 * (1 + 2*5); len(runs) != want {
		t.Errorf("got %d runs, want %d", len(runs), want)
	}
}

func TestParseSpecErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"no tasks", "model: {name: x}", "tasks"},
		{"no model", "tasks: [{name: SENT}]", "field model.kind: required"},
		{"bad config", "tasks: [{name: SENT}]\nmodel: {name: x}\nconfigurations: [IIDT]", `unknown configuration "IIDT"`},
		{"bad method", "tasks: [{name: SENT}]\nmodel: {name: x}\nmethods: [sgd]", `unknown method "sgd"`},
		{"bad score", "tasks: [{name: SENT}]\nmodel: {name: x}\nscores: [aspect]", `unknown score "aspect"`},
		{"unknown field", "tasks: [{name: SENT}]\nmodel: {name: x}\nseed: 3", "seed"},
		{"duplicate task", "tasks: [{name: A}, {name: A}]\nmodel: {name: x}", "duplicate"},
		{"bad fold score", "tasks: [{name: A, folds: {seen: [a]}}]\nmodel: {name: x}", `unknown score "seen"`},
		{"empty grid", "tasks: [{name: A}]\nmodel: {name: x}\ngrid: {lr: []}", "grid.lr"},
		{"declaring a built-in task", "tasks: [{name: SENT, labels: [a, b]}]\nmodel: {name: x}", "tasks[0]: task SENT is built in"},
		{"one label", "tasks: [{name: A, labels: [a]}]\nmodel: {name: x}", "at least two"},
		{"bad input", "tasks: [{name: A, labels: [a, b], input: triple}]\nmodel: {name: x}", "tasks[0].input"},
		{"suite label to an unknown class", "tasks:\n- name: A\n  labels: [a, b]\n  suite_labels:\n    m: a\n    n: c\nmodel: {name: x}", `line 6: field tasks[0].suite_labels.n: "c" is not a label of the task (a, b)`},
		{"suite label probabilities", "tasks:\n- {name: A, labels: [a, b],\n   suite_labels: {n: [0.5]}}\nmodel: {name: x}", "line 3: field tasks[0].suite_labels.n: 1 probabilities for 2 labels"},
		{"suite label probabilities not summing to 1", "tasks: [{name: A, labels: [a, b], suite_labels: {n: [0.5, 0.6]}}]\nmodel: {name: x}", "line 1: field tasks[0].suite_labels.n: probabilities sum to 1.1, not 1"},
		{"suite label probability not a number", "tasks: [{name: A, labels: [a, b], suite_labels: {n: [0.5, x]}}]\nmodel: {name: x}", `line 1: field tasks[0].suite_labels.n: [1]: "x" is not a number`},
		{"suite label neither name nor list", "tasks:\n- {name: A, labels: [a, b], suite_labels: {n: {a: 1}}}\nmodel: {name: x}", "line 2: field tasks[0].suite_labels.n: want a label name or a list of probabilities"},
		{"data for a declared task", "tasks: [{name: A, labels: [a, b], data: sst2}]\nmodel: {name: x}", "tasks[0].data"},
		{"train without dev", "tasks: [{name: A, labels: [a, b], train: {path: t.csv}}]\nmodel: {name: x}", "tasks[0].dev"},
		{"unknown file column key", "tasks: [{name: A, labels: [a, b], train: {path: t.csv, sentence: s}, dev: {path: d.csv}}]\nmodel: {name: x}", "line 1: field tasks[0].train.sentence: unknown key; known keys: columns, drop_labels, format, halve, label, labels, multiline, path, quoted, split, text, text_pair"},
		{"near-miss key", "tasks: [{name: A, labels: [a, b], train: {path: t.csv, txt: s}, dev: {path: d.csv}}]\nmodel: {name: x}", "line 1: field tasks[0].train.txt: unknown key (did you mean text?)"},
		{"near-miss top-level key", "tasks: [{name: A}]\nmodel: {name: x}\nconfiguration: [T]", "line 3: field configuration: unknown key (did you mean configurations?)"},
		{"seed not a number", "tasks: [{name: A}]\nmodel: {name: x}\nseeds: [one]", `line 3: field seeds[0]: "one" is not a whole number`},
		{"budget not a number", "tasks: [{name: A}]\nmodel: {name: x}\nbudget: {epochs: many}", `line 3: field budget.epochs: "many" is not a number`},
		{"tasks not a list", "tasks: {name: A}\nmodel: {name: x}", "line 1: field tasks: want a list, not a mapping"},
		{"near-miss model key", "tasks: [{name: A}]\nmodel: {knd: x}", "line 2: field model.knd: unknown key (did you mean kind?)"},
		{"both spellings of a model key", "tasks: [{name: A}]\nmodel: {name: x, kind: y}", "field model.kind: given twice, as name and kind"},
		{"an option given twice", "tasks: [{name: A}]\nmodel: {kind: x, glove: g, options: {glove: h}}", "given twice, in options and beside them"},
		{"IID config without i.i.d. data", "tasks: [{name: A, labels: [a, b]}]\nmodel: {name: x}\nconfigurations: [T, IID+T]", "configurations[1]: IID+T trains on i.i.d. data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// The model block reads beluga train's keys (kind, path, vocab, glove,
// hidden) and the older spelling (name, checkpoint, options): both give
// the same runs.
func TestModelSpellingsGiveTheSameRuns(t *testing.T) {
	const head = "tasks: [{name: SENT, data: sst2, suite: sentiment, folds: {class: [Negation]}}]\nconfigurations: [IID+T]\nscores: [seen, class]\n"
	dir := t.TempDir()
	ckpt, glove := filepath.Join(dir, "ckpt"), filepath.Join(dir, "g.txt")
	os.Mkdir(ckpt, 0o755)
	os.WriteFile(filepath.Join(ckpt, "config.json"), []byte("{}"), 0o644)
	os.WriteFile(glove, []byte("the 0.1 0.2\n"), 0o644)
	var ids []string
	for _, model := range []string{
		"model: {name: bert, checkpoint: ckpt, options: {max_length: 32}}",
		"model: {kind: bert, path: ckpt, options: {max_length: 32}}",
		"model: {name: wordvec, options: {glove: g.txt, hidden: 8}}",
		"model: {kind: wordvec, glove: g.txt, hidden: 8}",
	} {
		// Paths in a spec resolve against its directory.
		if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte(head+model), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadSpec(filepath.Join(dir, "spec.yaml"))
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		runs, err := Expand(context.Background(), s, &Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		var id []string
		for _, r := range runs {
			id = append(id, r.ID())
		}
		ids = append(ids, strings.Join(id, ","))
	}
	if ids[0] != ids[1] || ids[2] != ids[3] || ids[0] == ids[2] {
		t.Errorf("run IDs by spelling:\n%s", strings.Join(ids, "\n"))
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{{"0/1", true}, {"3/4", true}, {"4/4", false}, {"-1/4", false}, {"1", false}, {"a/b", false}, {"0/0", false}} {
		_, err := ParseShard(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseShard(%q): err %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

func TestShardsPartitionRuns(t *testing.T) {
	runs := mustTinyRuns(t)
	const n = 3
	count := map[string]int{}
	for i := 0; i < n; i++ {
		for _, r := range (Shard{I: i, N: n}).Select(runs) {
			count[r.ID()]++
		}
	}
	for _, r := range runs {
		if count[r.ID()] != 1 {
			t.Errorf("run %s is in %d shards, want 1", r.Label(), count[r.ID()])
		}
	}
}

func TestExecuteSkipsDoneAndRedoesIncomplete(t *testing.T) {
	runs := mustTinyRuns(t)
	store := &Store{Dir: t.TempDir()}
	ctx := context.Background()
	sum, err := Execute(ctx, store, runs, fakeRunner{}, Options{Jobs: 3})
	if err != nil || sum.Err() != nil || sum.Ran != len(runs) {
		t.Fatalf("first sweep: %+v, %v", sum, err)
	}
	want := storeDigest(store, runs)

	// Make one run incomplete, as a crash after writing its result would.
	victim := runs[5].ID()
	if err := os.Remove(filepath.Join(store.RunDir(victim), DoneFile)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(store.RunDir(victim), "stale-output"), []byte("x"), 0o644)
	if got := store.State(victim); got != Incomplete {
		t.Fatalf("state %v, want incomplete", got)
	}
	sum, err = Execute(ctx, store, runs, fakeRunner{}, Options{Jobs: 3})
	if err != nil || sum.Ran != 1 || sum.Skipped != len(runs)-1 {
		t.Fatalf("second sweep ran %d skipped %d (err %v), want 1 and %d", sum.Ran, sum.Skipped, err, len(runs)-1)
	}
	if exists(filepath.Join(store.RunDir(victim), "stale-output")) {
		t.Error("incomplete run was not redone from scratch")
	}
	if got := storeDigest(store, runs); got != want {
		t.Error("store after redo differs from the uninterrupted one")
	}
}

func TestFailingRunDoesNotStopOthers(t *testing.T) {
	runs := mustTinyRuns(t)
	store := &Store{Dir: t.TempDir()}
	bad := runs[3].ID()
	panicky := runs[7].ID()
	runner := fakeRunner{fail: func(r Run) error {
		switch r.ID() {
		case bad:
			return errors.New("loss is NaN at step 3")
		case panicky:
			panic("index out of range")
		}
		return nil
	}}
	sum, err := Execute(context.Background(), store, runs, runner, Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ran != len(runs)-2 || len(sum.Failed) != 2 {
		t.Fatalf("ran %d failed %d, want %d and 2", sum.Ran, len(sum.Failed), len(runs)-2)
	}
	if e := sum.Err(); e == nil || !strings.Contains(e.Error(), "loss is NaN") || !strings.Contains(e.Error(), "panicked") {
		t.Errorf("summary error %v does not name both failures", e)
	}
	if store.State(bad) != Failed || !strings.Contains(store.FailureReason(bad), "NaN") {
		t.Errorf("failed run: state %v reason %q", store.State(bad), store.FailureReason(bad))
	}
	st := StatusOf(store, runs, nil)
	if st.Counts[Done] != len(runs)-2 || st.Counts[Failed] != 2 {
		t.Errorf("status counts %v", st.Counts)
	}
	n, err := store.Clean([]string{bad, panicky, runs[0].ID()}, Incomplete, Failed)
	if err != nil || n != 2 || store.State(bad) != Missing || store.State(runs[0].ID()) != Done {
		t.Errorf("clean removed %d (err %v); states %v %v", n, err, store.State(bad), store.State(runs[0].ID()))
	}
}

func TestStaleClaimOfDeadProcessIsRecovered(t *testing.T) {
	runs := mustTinyRuns(t)[:3]
	store := &Store{Dir: t.TempDir()}
	// A claim by a process that has exited.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	host, _ := os.Hostname()
	id := runs[1].ID()
	os.MkdirAll(store.RunDir(id), 0o755)
	os.WriteFile(filepath.Join(store.RunDir(id), ClaimFile), fmt.Appendf(nil, `{"host":%q,"pid":%d}`, host, cmd.Process.Pid), 0o644)
	if got := store.State(id); got != Incomplete {
		t.Fatalf("dead claim: state %v, want incomplete", got)
	}
	// A live claim (ours) is respected.
	live := runs[2].ID()
	os.MkdirAll(store.RunDir(live), 0o755)
	os.WriteFile(filepath.Join(store.RunDir(live), ClaimFile), fmt.Appendf(nil, `{"host":%q,"pid":%d}`, host, os.Getpid()), 0o644)
	sum, err := Execute(context.Background(), store, runs, fakeRunner{}, Options{})
	if err != nil || sum.Ran != 2 || sum.Busy != 1 {
		t.Fatalf("ran %d busy %d err %v, want 2 ran and 1 busy", sum.Ran, sum.Busy, err)
	}
	if store.State(id) != Done || store.State(live) != Running {
		t.Errorf("states %v %v, want done and running", store.State(id), store.State(live))
	}
}

func startSweep(t *testing.T, dir, shard string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "BELUGA_TEST_SWEEP="+dir, "BELUGA_TEST_SHARD="+shard), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func claimed(s *Store, runs []Run) int {
	n := 0
	for _, r := range runs {
		if exists(filepath.Join(s.RunDir(r.ID()), ClaimFile)) {
			n++
		}
	}
	return n
}

func countDone(s *Store, runs []Run) int {
	n := 0
	for _, r := range runs {
		if s.State(r.ID()) == Done {
			n++
		}
	}
	return n
}

// TestKillMidSweepThenResume kills a sweep process with SIGKILL halfway,
// re-runs the sweep and checks that finished runs are skipped and that the
// store ends identical to an uninterrupted sweep's.
func TestKillMidSweepThenResume(t *testing.T) {
	runs := mustTinyRuns(t)
	ref := &Store{Dir: t.TempDir()}
	if _, err := Execute(context.Background(), ref, runs, fakeRunner{}, Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}

	store := &Store{Dir: t.TempDir()}
	// The sweep finishes half the runs and hangs in the next ones, so the
	// kill lands mid-sweep whatever the machine's speed.
	cmd := startSweep(t, store.Dir, "", "BELUGA_TEST_HANG_AFTER="+strconv.Itoa(len(runs)/2))
	deadline := time.Now().Add(60 * time.Second)
	for countDone(store, runs) < len(runs)/2 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("sweep made no progress")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Let the hanging runs claim their directories, then kill.
	for claimed(store, runs) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	doneBefore := countDone(store, runs)
	if doneBefore == len(runs) {
		t.Fatal("sweep finished before it was killed; the test proves nothing")
	}
	var leftovers int
	for _, r := range runs {
		if s := store.State(r.ID()); s == Incomplete {
			leftovers++
		} else if s == Running {
			t.Errorf("run %s still looks running after its process died", r.ID())
		}
	}
	t.Logf("killed after %d of %d runs; %d runs left incomplete", doneBefore, len(runs), leftovers)

	sum, err := Execute(context.Background(), store, runs, fakeRunner{}, Options{Jobs: 2})
	if err != nil || sum.Err() != nil {
		t.Fatal(err, sum.Err())
	}
	if sum.Skipped != doneBefore || sum.Ran != len(runs)-doneBefore {
		t.Errorf("resume skipped %d and ran %d, want %d and %d", sum.Skipped, sum.Ran, doneBefore, len(runs)-doneBefore)
	}
	if storeDigest(store, runs) != storeDigest(ref, runs) {
		t.Error("resumed store differs from the uninterrupted sweep's")
	}
	// The resume took the dead process's claims over; a finished run keeps
	// none of the tokens that took them.
	for _, r := range runs {
		entries, err := os.ReadDir(store.RunDir(r.ID()))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ClaimFile) {
				t.Errorf("finished run %s keeps %s", r.ID(), e.Name())
			}
		}
	}
}

// TestConcurrentShardsMatchOneProcess runs two shard processes at once into
// one store (and a third, unsharded, process racing them) and checks that no
// run was executed twice and the store equals a single process's.
func TestConcurrentShardsMatchOneProcess(t *testing.T) {
	runs := mustTinyRuns(t)
	ref := &Store{Dir: t.TempDir()}
	if _, err := Execute(context.Background(), ref, runs, fakeRunner{}, Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	store := &Store{Dir: t.TempDir()}
	a := startSweep(t, store.Dir, "0/2")
	b := startSweep(t, store.Dir, "1/2")
	if err := a.Wait(); err != nil {
		t.Fatal("shard 0:", err)
	}
	if err := b.Wait(); err != nil {
		t.Fatal("shard 1:", err)
	}
	if got := countDone(store, runs); got != len(runs) {
		t.Fatalf("%d of %d runs done", got, len(runs))
	}
	if storeDigest(store, runs) != storeDigest(ref, runs) {
		t.Error("sharded store differs from the single process's")
	}
	// Every run directory holds exactly one execution: one log line.
	for _, r := range runs {
		b, _ := os.ReadFile(filepath.Join(store.RunDir(r.ID()), LogFile))
		if strings.Count(string(b), "training") != 1 {
			t.Errorf("run %s log %q", r.ID(), b)
		}
	}
}

func TestClaimsPreventDuplicateWork(t *testing.T) {
	runs := mustTinyRuns(t)
	store := &Store{Dir: t.TempDir()}
	a := startSweep(t, store.Dir, "")
	b := startSweep(t, store.Dir, "")
	if err := errors.Join(a.Wait(), b.Wait()); err != nil {
		t.Fatal(err)
	}
	if got := countDone(store, runs); got != len(runs) {
		t.Fatalf("%d of %d runs done", got, len(runs))
	}
}

// A declared task without i.i.d. data runs T only and has no IID baseline;
// its declaration is part of its runs' identity, and built-in tasks carry
// none, so their runs keep their IDs.
func TestDeclaredTaskExpands(t *testing.T) {
	spec := func(labels string) *Spec {
		s, err := ParseSpec([]byte(`
tasks: [{name: HATE, labels: ` + labels + `, folds: {func: [a, b]}}]
model: {name: x}
configurations: [T]
scores: [seen, func]
`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	runs, err := Expand(context.Background(), spec("[non-hateful, hateful]"), &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("%d runs, want seen + 2 func (no baseline)", len(runs))
	}
	for _, r := range runs {
		if r.Configuration != "T" || r.Train.TaskDef == nil || r.Train.TaskDef.MFTLoss != "ce" {
			t.Errorf("run %s: configuration %s, declaration %+v", r.Label(), r.Configuration, r.Train.TaskDef)
		}
	}
	other, err := Expand(context.Background(), spec("[hateful, non-hateful]"), &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if runs[0].ID() == other[0].ID() {
		t.Error("a different declaration kept the run's ID")
	}
	if strings.Contains(mustJSON(t, Run{Task: "SENT", Train: train.RunSpec{Task: "sentiment"}}.identityRecord(t)), "task_def") {
		t.Error("a built-in task's run carries a declaration")
	}
}

func (r Run) identityRecord(t *testing.T) json.RawMessage {
	t.Helper()
	b, err := r.identityJSON(true)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := canonicalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A process killed while it claims a run leaves no claim, or a whole one
// its PID shows to be dead: the run is never left looking like running.
// (Claims were created empty and then written: one killed in between was
// judged by its age alone and looked running for StaleAfter.)
func TestKilledWhileClaimingLeavesNoLiveClaim(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BELUGA_TEST_DIE_CLAIMING="+dir)
	if err := cmd.Run(); err == nil {
		t.Fatal("the claiming process was not killed")
	}
	store := &Store{Dir: dir}
	if st := store.State("run"); st == Running {
		t.Fatalf("state %v after the claimant died, want not running", st)
	}
	release, err := store.tryClaim("run")
	if err != nil {
		t.Fatalf("claiming after the claimant died: %v", err)
	}
	release()
}

// Another process's reset of a run directory keeps a claim being written,
// which would otherwise fail to be put in place.
func TestResetKeepsAPendingClaim(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	defer func(f func()) { midClaim = f }(midClaim)
	midClaim = func() {
		if err := store.reset("run"); err != nil {
			t.Fatal(err)
		}
	}
	release, err := store.tryClaim("run")
	if err != nil {
		t.Fatalf("claim with a reset in the middle: %v", err)
	}
	release()
}
