package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/report"
)

// intentSweep begins a spec of a sweep on package train's intent fixtures
// as intentDir lays them out: a declared task, its i.i.d. files, its suite
// and its word vectors, all named by paths relative to the spec's folder.
const intentSweep = `out: store
tasks:
  - name: INTENT
    labels: [greeting, question, complaint]
    mft_loss: ce
    suite: suite.jsonl
    train: {path: train.csv, text: utterance, label: intent}
    dev: {path: dev.csv, text: utterance, label: intent}
model: {kind: wordvec, glove: glove.txt, hidden: 8, options: {max_length: 16}}
`

// identitySpec is a small sweep that trains in a second (word vectors,
// one epoch).
const identitySpec = "name: identity\n" + intentSweep + `configurations: [IID+T]
methods: [vanilla]
scores: [seen, type]
grid: {iid_epochs: [1], epochs: [1], batch_size: [4], lr: [0.01], iid_lr: [0.01]}
`

// intentDir writes spec and the intent fixtures it names (intentSweep)
// into dir and returns the spec's path.
func intentDir(t *testing.T, dir, spec string) string {
	t.Helper()
	td := trainTestdata(t)
	for src, dst := range map[string]string{"intent_suite.jsonl": "suite.jsonl", "intent_train.csv": "train.csv", "intent_dev.csv": "dev.csv", "intent_glove.txt": "glove.txt"} {
		copyFile(t, filepath.Join(td, src), filepath.Join(dir, dst))
	}
	return writeFile(t, filepath.Join(dir, "spec.yaml"), spec)
}

// identityDir writes the identity spec and its files into a new directory
// and returns the spec's path.
func identityDir(t *testing.T) string {
	t.Helper()
	return intentDir(t, t.TempDir(), identitySpec)
}

// identityRun is identityDir's sweep, run: its spec, its store and its
// runs' IDs in the order a dry run lists them.
func identityRun(t *testing.T) (string, *experiments.Store, []string) {
	t.Helper()
	spec := identityDir(t)
	mustRun(t, "run", spec)
	ids := listedIDs(mustRun(t, "run", spec, "--dry-run"))
	return spec, &experiments.Store{Dir: filepath.Join(filepath.Dir(spec), "store")}, ids
}

// listedIDs are the run IDs of a dry run's listing, in order.
func listedIDs(out string) []string {
	var ids []string
	for _, line := range strings.Split(out, "\n") {
		if m := runIDLine.FindStringSubmatch(line); m != nil {
			ids = append(ids, m[1])
		}
	}
	return ids
}

// mustRun runs beluga and fails the test (or benchmark) on an error.
func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	out, err := execute(t, args...)
	if err != nil {
		t.Fatalf("beluga %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// A suite re-imported under the same name with other cases is another
// input: its runs are other runs, with other IDs, and status says which
// finished runs it replaces and how the suite changed — through the spec
// (its new runs are stale: the store holds those of the old suite) and
// through the store (its runs read a suite that is not there any more).
// The report refuses runs of the old suite, and a store holding runs of
// both unless asked.
func TestChangedSuiteIsNewRunsAndSaidSo(t *testing.T) {
	spec, st, before := identityRun(t)
	dir, store := filepath.Dir(spec), st.Dir
	if len(before) != 5 {
		t.Fatalf("%d runs, want the baseline, seen and 3 type folds", len(before))
	}

	// The suite without its last two cases (two of the DIR tests).
	lines := strings.SplitAfter(string(readFile(t, filepath.Join(dir, "suite.jsonl"))), "\n")
	cut := strings.Join(lines[:len(lines)-3], "")
	if err := os.WriteFile(filepath.Join(dir, "suite.jsonl"), []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "run", spec, "--dry-run")
	after := listedIDs(out)
	for i := range after {
		if i < len(before) && after[i] == before[i] {
			t.Errorf("run %d kept its ID %s with another suite", i, after[i])
		}
	}
	changed := regexp.MustCompile(`suite suite\.jsonl changed since run [0-9a-f]{4}…: 28 cases, was 30`)
	if got := len(changed.FindAllString(out, -1)); got != 5 || strings.Count(out, "stale") != 5 {
		t.Errorf("dry run: %d runs say the suite changed, want 5:\n%s", got, out)
	}
	out = mustRun(t, "status", spec)
	if !strings.Contains(out, "5 runs: 0 done, 0 running, 0 failed, 0 incomplete, 5 stale, 0 damaged, 0 missing") || len(changed.FindAllString(out, -1)) != 5 {
		t.Errorf("status of the spec:\n%s", out)
	}
	// Through the store: its runs' suite is not what they read.
	out = mustRun(t, "status", store)
	if !strings.Contains(out, "5 stale") || len(changed.FindAllString(out, -1)) != 5 {
		t.Errorf("status of the store:\n%s", out)
	}
	if _, err := execute(t, "report", spec); err == nil || !strings.Contains(err.Error(), "stale: suite suite.jsonl changed") {
		t.Errorf("report of stale runs: %v", err)
	}

	// The new runs train; the store now holds both suites' runs, those of
	// the old one stale.
	mustRun(t, "run", spec)
	if out := mustRun(t, "status", spec); !strings.Contains(out, "5 done") {
		t.Errorf("status after the new runs:\n%s", out)
	}
	if _, err := execute(t, "report", spec); err != nil {
		t.Errorf("report of the spec's current runs: %v", err)
	}
	// The store is its latest sweep: the old suite's runs no longer stand
	// in its report.
	if out, err := execute(t, "report", store); err != nil || !strings.Contains(out, "its latest sweep") {
		t.Errorf("report of the store, its latest sweep: %v\n%s", err, out)
	}
	// A store without its sweeps' record (an older beluga's) lists every
	// run it recorded, the old suite's stale.
	forgetSweeps := func() {
		if err := os.Remove(filepath.Join(store, experiments.SweepsFile)); err != nil {
			t.Fatal(err)
		}
	}
	forgetSweeps()
	if _, err := execute(t, "report", store); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("report of the store with the old suite's runs: %v", err)
	}
	// Runs of a suite no longer on disk cannot be judged stale: the
	// store's runs of two suites are refused as such.
	b := bytes.Replace(readFile(t, spec), []byte("suite: suite.jsonl"), []byte("suite: other.jsonl"), 1)
	os.WriteFile(spec, b, 0o644)
	os.Rename(filepath.Join(dir, "suite.jsonl"), filepath.Join(dir, "other.jsonl"))
	os.WriteFile(filepath.Join(dir, "other.jsonl"), []byte(strings.Replace(cut, `"hi there"`, `"hi over there"`, 1)), 0o644)
	mustRun(t, "run", spec)
	forgetSweeps()
	var mixed *report.MixedInputsError
	if _, err := execute(t, "report", store); !errors.As(err, &mixed) || !strings.Contains(err.Error(), "read different suite") {
		t.Errorf("report of a store of two suites: %v, want %T", err, mixed)
	}
	// Asked, the report takes them (and refuses here what does not fit:
	// the first suite had two cases more than the others).
	if _, err := execute(t, "report", store, "--mixed-inputs"); errors.As(err, &mixed) {
		t.Errorf("report --mixed-inputs: %v", err)
	}
}

// A grid key is the field it sets: lr and hyper.lr are one setting, one
// run, one ID.
func TestSpellingsOfAKeyAreOneRun(t *testing.T) {
	spec := identityDir(t)
	short := listedIDs(mustRun(t, "run", spec, "--dry-run"))
	b := bytes.Replace(readFile(t, spec), []byte("lr: [0.01], iid_lr"), []byte("hyper.lr: [0.01], iid_hyper.lr"), 1)
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	paths := listedIDs(mustRun(t, "run", spec, "--dry-run"))
	if strings.Join(short, " ") != strings.Join(paths, " ") || len(short) != 5 {
		t.Errorf("lr: %v\nhyper.lr: %v\nwant the same runs", short, paths)
	}
}

// A spec's paths are relative to its folder, and a run's ID holds its
// files' content, not their paths: the spec run from its own folder and
// from another lists the same runs into the same store; a copy of the
// whole folder elsewhere lists the same runs too (into its own store).
func TestWorkingDirectoryChangesNothing(t *testing.T) {
	spec := identityDir(t)
	dir := filepath.Dir(spec)
	var listings []string
	other := t.TempDir()
	for _, wd := range []string{dir, other, filepath.Dir(dir)} {
		t.Chdir(wd)
		rel, err := filepath.Rel(wd, spec)
		if err != nil {
			t.Fatal(err)
		}
		listings = append(listings, mustRun(t, "run", rel, "--dry-run"))
	}
	storeLine := regexp.MustCompile(`5 runs into (.*)\n`)
	for i, l := range listings {
		if strings.Join(listedIDs(l), " ") != strings.Join(listedIDs(listings[0]), " ") {
			t.Errorf("working directory %d lists other runs:\n%s\nthan\n%s", i, l, listings[0])
		}
		wd := []string{dir, other, filepath.Dir(dir)}[i]
		if m := storeLine.FindStringSubmatch(l); m == nil || !filepath.IsAbs(m[1]) && filepath.Join(wd, m[1]) != filepath.Join(dir, "store") || filepath.IsAbs(m[1]) && m[1] != filepath.Join(dir, "store") {
			t.Errorf("working directory %d: store %v, want %s", i, m, filepath.Join(dir, "store"))
		}
	}
	mustRun(t, "run", spec)
	t.Chdir(t.TempDir())
	if _, err := execute(t, "report", spec); err != nil {
		t.Errorf("report from another directory: %v", err)
	}
	copied := filepath.Join(t.TempDir(), "moved")
	if err := os.CopyFS(copied, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	moved := listedIDs(mustRun(t, "run", filepath.Join(copied, "spec.yaml"), "--dry-run"))
	if strings.Join(moved, " ") != strings.Join(listedIDs(listings[0]), " ") {
		t.Errorf("the folder copied elsewhere lists other runs: %v, want %v", moved, listedIDs(listings[0]))
	}
}

// A run whose files are not what its done marker recorded is damaged,
// never done: a truncated result, an edited verdict (same size), an empty
// or garbage marker. status lists each with why, report refuses them by
// path, run redoes exactly them (to the same results), verify finds a
// damaged model status does not read, and clean --damaged removes one.
func TestDamagedRunsAreSaidRedoneAndCleaned(t *testing.T) {
	spec, store, ids := identityRun(t)
	result := func(id string) string { return filepath.Join(store.RunDir(id), experiments.ResultFile) }
	saved := map[string][]byte{}
	for _, id := range ids {
		saved[id] = readFile(t, result(id))
	}

	truncated, edited, empty, garbage := ids[1], ids[2], ids[3], ids[4]
	if err := os.WriteFile(result(truncated), saved[truncated][:len(saved[truncated])/2], 0o644); err != nil {
		t.Fatal(err)
	}
	verdicts := bytes.Replace(saved[edited], []byte(`"verdicts":"F`), []byte(`"verdicts":"P`), 1)
	if bytes.Equal(verdicts, saved[edited]) {
		verdicts = bytes.Replace(saved[edited], []byte(`"verdicts":"P`), []byte(`"verdicts":"F`), 1)
	}
	if err := os.WriteFile(result(edited), verdicts, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(store.RunDir(empty), experiments.DoneFile), nil, 0o644)
	os.WriteFile(filepath.Join(store.RunDir(garbage), experiments.DoneFile), []byte("ok\n"), 0o644)

	out := mustRun(t, "status", spec)
	if !strings.Contains(out, "1 done, 0 running, 0 failed, 0 incomplete, 0 stale, 4 damaged, 0 missing") {
		t.Errorf("status:\n%s", out)
	}
	for id, why := range map[string]string{
		truncated: "truncated or rewritten",
		edited:    "result.json is not what done recorded",
		empty:     "done is not a record of the run's files (0 bytes)",
		garbage:   "done is not a record of the run's files (3 bytes)",
	} {
		if !regexp.MustCompile(id + `\s+damaged\s+.*` + regexp.QuoteMeta(why)).MatchString(out) {
			t.Errorf("status does not say run %s is damaged (%s):\n%s", id, why, out)
		}
	}
	if _, err := execute(t, "report", spec); err == nil || !strings.Contains(err.Error(), result(edited)) {
		t.Errorf("report of damaged runs: %v, want a refusal naming %s", err, result(edited))
	}

	out = mustRun(t, "run", spec)
	if !strings.Contains(out, "5 runs in "+store.Dir+": 1 skipped (already done), 4 ran, 0 failed") {
		t.Errorf("run redid other than the damaged runs:\n%s", out)
	}
	for _, id := range ids {
		if !bytes.Equal(readFile(t, result(id)), saved[id]) {
			t.Errorf("run %s redone to another result", id)
		}
	}
	if out := mustRun(t, "verify", store.Dir); !strings.Contains(out, "5 finished runs checked, 0 damaged") {
		t.Errorf("verify:\n%s", out)
	}

	// A model edited in place (same size): status reads its size only;
	// verify reads it all.
	model := filepath.Join(store.RunDir(ids[0]), "train", "model", "model.safetensors")
	b := readFile(t, model)
	b[len(b)-1] ^= 1
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, "status", spec); !strings.Contains(out, "5 done") {
		t.Errorf("status after a same-size edit of a model:\n%s", out)
	}
	out, err := execute(t, "verify", spec)
	if err == nil || !strings.Contains(out, ids[0]+"\tdamaged\t"+model+" is not what done recorded") {
		t.Errorf("verify: %v\n%s", err, out)
	}
	// clean --damaged removes what status calls damaged.
	os.WriteFile(result(truncated), nil, 0o644)
	if out := mustRun(t, "clean", spec, "--damaged"); !strings.Contains(out, "removed 1 damaged run") {
		t.Errorf("clean --damaged:\n%s", out)
	}
	if _, err := os.Stat(store.RunDir(truncated)); !os.IsNotExist(err) {
		t.Errorf("the damaged run is still there: %v", err)
	}
}

// A store lacking its baseline is no table: report exits non-zero naming
// the missing run, and --partial writes the table with every cell the
// baseline leaves incomplete marked, the HTML page with the notice.
func TestReportWithoutItsBaseline(t *testing.T) {
	spec, store, ids := identityRun(t)
	if err := os.RemoveAll(store.RunDir(ids[0])); err != nil {
		t.Fatal(err)
	}
	code, out := beluga(t, "report", spec)
	if code == 0 || !strings.Contains(out, "IID: Vanilla:\n    "+ids[0]+" INTENT iid: missing") {
		t.Errorf("report without the baseline: exit %d\n%s", code, out)
	}
	out = mustRun(t, "report", spec, "--partial")
	if !strings.Contains(out, "–"+report.MarkIncomplete) && !strings.Contains(out, report.MarkIncomplete+" |") || !strings.Contains(out, report.MarkIncomplete+" incomplete") || !strings.Contains(out, ids[0]) {
		t.Errorf("report --partial:\n%s", out)
	}
	// The page's notice: report/explore's TestPartialNotice.
	page := filepath.Join(filepath.Dir(spec), "report.html")
	if _, err := execute(t, "report", spec, "--format", "html", "-o", page); err == nil {
		t.Error("report --format html of a store without its baseline: no error")
	}
	mustRun(t, "report", spec, "--partial", "--format", "html", "-o", page)
}

// Flags are checked before anything expensive: report refuses a bad
// --format and run a bad --jobs before a spec is read.
func TestFlagsCheckedFirst(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-spec.yaml")
	if _, err := execute(t, "report", missing, "--format", "docx"); err == nil || !strings.Contains(err.Error(), "unknown --format") {
		t.Errorf("report --format docx: %v, want the format refused first", err)
	}
	if _, err := execute(t, "run", missing, "--jobs", "0"); err == nil || !strings.Contains(err.Error(), "--jobs 0") {
		t.Errorf("run --jobs 0: %v, want the jobs refused first", err)
	}
}

// A store that is not there is said to be missing: verify refuses it
// (before, "0 finished runs checked" and exit 0 read as a clean store), and
// status, whose runs are all missing, says where it looked.
func TestVerifyAndStatusOfAStoreThatIsNotThere(t *testing.T) {
	spec := identityDir(t)
	if _, err := execute(t, "verify", spec); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("verify of a spec whose store is not there: %v, want it refused", err)
	}
	if _, err := execute(t, "verify", filepath.Join(t.TempDir(), "nowhere")); err == nil {
		t.Error("verify of a directory that is not there: no error")
	}
	if _, err := execute(t, "verify", spec, "--store", filepath.Join(t.TempDir(), "nowhere")); err == nil || !strings.Contains(err.Error(), "--store") {
		t.Errorf("verify --store of a directory that is not there: %v, want it refused", err)
	}
	if out := mustRun(t, "status", spec); !strings.Contains(out, "no run store at") {
		t.Errorf("status of a spec whose store is not there does not say so:\n%s", out)
	}
}

// A BELUGA_KERNELS this machine cannot run stops a sweep before it starts,
// with one message and no store: each run would otherwise refuse it on its
// own, leaving a failed.json per run.
func TestUnrunnableKernelPathStopsTheSweep(t *testing.T) {
	spec := identityDir(t)
	t.Setenv("BELUGA_KERNELS", "avx1024")
	code, out := beluga(t, "run", spec)
	if code != 1 || !strings.Contains(out, "BELUGA_KERNELS") {
		t.Errorf("run under BELUGA_KERNELS=avx1024: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(spec), "store")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run under an unrunnable kernel path left a store (%v)", err)
	}
	store := filepath.Join(t.TempDir(), "qs")
	if code, out := beluga(t, "quickstart", "-o", store); code != 1 || !strings.Contains(out, "BELUGA_KERNELS") {
		t.Errorf("quickstart under BELUGA_KERNELS=avx1024: exit %d\n%s", code, out)
	}
}
