package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/experiments"
)

// An input rewritten with its size and modification time restored (labels
// flipped, then touch -r) is another input: status, the dry run and the
// report see the runs stale, not done. A run's own file rewritten so is
// damaged for verify.
func TestRestoredTimesDoNotHideAChange(t *testing.T) {
	spec := identityDir(t)
	dir := filepath.Dir(spec)
	suite := filepath.Join(dir, "suite.jsonl")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(suite, old, old)
	mustRun(t, "run", spec)
	if out := mustRun(t, "status", spec); !strings.Contains(out, "5 done") {
		t.Fatalf("status after the run:\n%s", out)
	}
	b := readFile(t, suite)
	flipped := bytes.ReplaceAll(b, []byte(`"label": 0}`), []byte(`"label": 1}`))
	if bytes.Equal(flipped, b) || len(flipped) != len(b) {
		t.Fatal("the fixture has no label to flip in place")
	}
	if err := os.WriteFile(suite, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(suite, old, old)
	if out := mustRun(t, "status", spec); !strings.Contains(out, "0 done") || !strings.Contains(out, "5 stale") {
		t.Errorf("status after the suite's labels were flipped and its time restored:\n%s", out)
	}
	if out := mustRun(t, "run", spec, "--dry-run"); strings.Count(out, "stale") != 5 {
		t.Errorf("dry run after the change:\n%s", out)
	}
	if _, err := execute(t, "report", spec); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("report after the change: %v, want the runs refused as stale", err)
	}

	// A finished run's own result, rewritten in place with its time restored.
	store := filepath.Join(dir, "store")
	results, _ := filepath.Glob(filepath.Join(store, "*", experiments.ResultFile))
	if len(results) == 0 {
		t.Fatal("no result in the store")
	}
	st, err := os.Stat(results[0])
	if err != nil {
		t.Fatal(err)
	}
	r := readFile(t, results[0])
	r[len(r)-2] ^= ' ' ^ '\t' // a byte of white space, or any byte: the size stays
	os.WriteFile(results[0], r, 0o644)
	os.Chtimes(results[0], st.ModTime(), st.ModTime())
	if out, err := execute(t, "verify", store); err == nil || !strings.Contains(out, "1 damaged") {
		t.Errorf("verify after a result was rewritten in place: %v\n%s", err, out)
	}
}

// A run that fine-tunes its IID baseline's model checks the model against
// the baseline's done first: floats overwritten in place (same size) are
// refused with the file named, not trained on.
func TestDependentRunChecksTheBaselineModel(t *testing.T) {
	spec := identityDir(t)
	b := bytes.Replace(readFile(t, spec), []byte("configurations: [IID+T]"), []byte("configurations: [IID-T]"), 1)
	b = bytes.Replace(b, []byte("scores: [seen, type]"), []byte("scores: [seen]"), 1)
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "run", spec)
	store := filepath.Join(filepath.Dir(spec), "store")
	// The baseline is the run the other starts from.
	var from string
	specs, _ := filepath.Glob(filepath.Join(store, "*", experiments.SpecFile))
	for _, p := range specs {
		var r experiments.Run
		if err := json.Unmarshal(readFile(t, p), &r); err != nil {
			t.Fatal(err)
		}
		if r.From != "" {
			from = r.From
			if err := os.RemoveAll(filepath.Dir(p)); err != nil { // to be run again
				t.Fatal(err)
			}
		}
	}
	if from == "" {
		t.Fatal("no run starts from a baseline")
	}
	model := filepath.Join(store, from, "train", "model", "model.safetensors")
	w := readFile(t, model)
	st, err := os.Stat(model)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(w) - 64; i < len(w); i++ { // the last floats, overwritten in place
		w[i] ^= 0x55
	}
	if err := os.WriteFile(model, w, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(model, st.ModTime(), st.ModTime())
	out, err := execute(t, "run", spec)
	if err == nil || !strings.Contains(out+err.Error(), "model.safetensors is not what the run's done recorded") {
		t.Errorf("a run started from a baseline whose model was overwritten: %v\n%s", err, out)
	}
}

// A run directory moved elsewhere and linked back is one of the store's
// runs for verify as for status: both count it, and verify checks it.
func TestVerifyFollowsLinkedRunDirectories(t *testing.T) {
	spec := identityDir(t)
	mustRun(t, "run", spec)
	store := filepath.Join(filepath.Dir(spec), "store")
	results, _ := filepath.Glob(filepath.Join(store, "*", experiments.ResultFile))
	if len(results) != 5 {
		t.Fatalf("%d results, want 5", len(results))
	}
	run := filepath.Dir(results[0])
	moved := filepath.Join(t.TempDir(), filepath.Base(run))
	if err := os.Rename(run, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, run); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, "status", store); !strings.Contains(out, "5 done") {
		t.Errorf("status of a store with a linked run:\n%s", out)
	}
	if out := mustRun(t, "verify", store); !strings.Contains(out, "5 finished runs checked, 0 damaged") {
		t.Errorf("verify of a store with a linked run:\n%s", out)
	}
	model := filepath.Join(moved, "train", "model", "model.safetensors")
	b := readFile(t, model)
	b[len(b)-1] ^= 1
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := execute(t, "verify", store); err == nil || !strings.Contains(out, filepath.Base(run)+"\tdamaged") {
		t.Errorf("verify after the linked run's model was edited: %v\n%s", err, out)
	}
}

// The case-level views read a finished run's cases.jsonl only as the run
// wrote it: verdicts flipped since (same size) are an error naming the
// file — for failures, by run directory, run ID or case file, and for the
// HTML report — not "0 of 10 failed".
func TestCaseViewsCheckCasesAgainstDone(t *testing.T) {
	spec := identityDir(t)
	mustRun(t, "run", spec)
	store := filepath.Join(filepath.Dir(spec), "store")
	cases, _ := filepath.Glob(filepath.Join(store, "*", filepath.FromSlash(experiments.CasesFile)))
	var path string
	for _, c := range cases {
		if bytes.Contains(readFile(t, c), []byte(`"verdict":"fail"`)) {
			path = c
			break
		}
	}
	if path == "" {
		t.Fatal("no run with a failing case")
	}
	run := filepath.Dir(filepath.Dir(path))
	mustRun(t, "failures", run)
	if out := mustRun(t, "report", spec, "--format", "html", "-o", filepath.Join(t.TempDir(), "r.html")); !strings.Contains(out, "wrote") {
		t.Fatalf("report --format html:\n%s", out)
	}
	b := readFile(t, path)
	flipped := bytes.ReplaceAll(b, []byte(`"verdict":"fail"`), []byte(`"verdict":"pass"`))
	if err := os.WriteFile(path, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"failures", run},
		{"failures", path},
		{"failures", filepath.Base(run), "--store", store},
		{"report", spec, "--format", "html", "-o", filepath.Join(t.TempDir(), "r.html")},
	} {
		out, err := execute(t, args...)
		if err == nil || !strings.Contains(err.Error(), "cases.jsonl is not what the run's done recorded") {
			t.Errorf("beluga %s after verdicts were flipped: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// Names from a suite or spec reach the terminal escaped: a functionality
// called "gree ESC[2J tings" (clear the screen), a class that retitles
// the window and a task name hidden by ESC[8m print as their escapes in
// suite stats, the dry run and status.
func TestNamesAreEscapedOnTheTerminal(t *testing.T) {
	spec := identityDir(t)
	dir := filepath.Dir(spec)
	suite := filepath.Join(dir, "suite.jsonl")
	b := bytes.ReplaceAll(readFile(t, suite), []byte(`"greetings"`), []byte(`"gree\u001b[2Jtings"`))
	b = bytes.ReplaceAll(b, []byte(`"Intent"`), []byte(`"Int\u001b]0;pwned\u0007ent"`))
	if err := os.WriteFile(suite, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := bytes.Replace(readFile(t, spec), []byte("scores: [seen, type]"), []byte("scores: [seen, func]"), 1)
	s = bytes.Replace(s, []byte("name: INTENT"), []byte(`name: "IN\e[8mTENT"`), 1)
	if err := os.WriteFile(spec, s, 0o644); err != nil {
		t.Fatal(err)
	}
	// Trained, then the suite changed: status lists every run, stale, by
	// its names.
	mustRun(t, "run", spec)
	runs, _ := filepath.Glob(filepath.Join(dir, "store", "*", "train", "cases.jsonl"))
	for _, c := range runs {
		if out := mustRun(t, "failures", c); strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("beluga failures prints control characters:\n%q", out)
		}
	}
	os.WriteFile(suite, bytes.Replace(b, []byte(`"hi there"`), []byte(`"hi over there"`), 1), 0o644)
	for _, args := range [][]string{
		{"suite", "stats", suite},
		{"run", spec, "--dry-run"},
		{"status", spec},
	} {
		out := mustRun(t, args...)
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("beluga %s prints control characters:\n%q", strings.Join(args, " "), out)
		}
	}
	if out := mustRun(t, "suite", "stats", suite); !strings.Contains(out, `gree\x1b[2Jtings`) || !strings.Contains(out, `Int\x1b]0;pwned\aent`) {
		t.Errorf("suite stats does not show the escaped names:\n%s", out)
	}
	for _, args := range [][]string{{"run", spec, "--dry-run"}, {"status", spec}} {
		if out := mustRun(t, args...); !strings.Contains(out, `gree\x1b[2Jtings`) || !strings.Contains(out, `IN\x1b[8mTENT`) {
			t.Errorf("beluga %s does not show the escaped names:\n%s", strings.Join(args, " "), out)
		}
	}
}

// A digest cache that cannot be written (a read-only $BELUGA_DATA) is a
// warning for status and report, not a failure; and report -o to a
// device derives no side file from the device's name.
func TestUnwritableCacheAndDeviceOutput(t *testing.T) {
	spec := identityDir(t)
	mustRun(t, "run", spec)
	data := t.TempDir()
	if os.Getuid() == 0 {
		// root writes through permissions: a directory where the
		// digest file goes cannot be written by anyone.
		if err := os.Mkdir(filepath.Join(data, experiments.DigestsFile), 0o755); err != nil {
			t.Fatal(err)
		}
	} else {
		os.Chmod(data, 0o555)
		defer os.Chmod(data, 0o755)
	}
	t.Setenv("BELUGA_DATA", data)
	for _, args := range [][]string{{"status", spec}, {"report", spec}} {
		out, err := execute(t, args...)
		if err != nil || !strings.Contains(out, "warning: digest cache") {
			t.Errorf("beluga %s with an unwritable digest cache: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	dir := t.TempDir()
	dev := filepath.Join(dir, "out.md")
	if err := os.Symlink(os.DevNull, dev); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "report", spec, "-o", dev)
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("report -o a link to %s wrote %v beside it, want nothing", os.DevNull, entries)
	}
	if st, err := os.Lstat(dev); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to %s was replaced: %v", os.DevNull, err)
	}
}
