package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/train"
)

// A file's digest is computed once and remembered by its path, size and
// modification time, in memory and, with File set, between processes; a
// file rewritten is digested again.
func TestDigestsAreComputedOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	if err := os.WriteFile(path, bytes.Repeat([]byte("w"), 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	reads := 0
	defer func(h func(string) (string, int64, error)) { hashFile = h }(hashFile)
	hashFile = func(p string) (string, int64, error) { reads++; return hashFileContent(p) }
	// The file is older than the racy window when it is digested.
	defer func(c func() time.Time) { digestNow = c }(digestNow)
	digestNow = func() time.Time { return time.Now().Add(2 * racyWindow) }

	cache := filepath.Join(dir, DigestsFile)
	d := &Digests{File: cache}
	first, _, err := d.Path(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if again, _, _ := d.Path(path); again != first {
			t.Fatalf("digest changed from %s to %s", first, again)
		}
	}
	if reads != 1 {
		t.Errorf("the file was read %d times, want once", reads)
	}
	if err := d.Save(); err != nil {
		t.Fatal(err)
	}
	// Another process: the digest comes from the file.
	if again, _, _ := (&Digests{File: cache}).Path(path); again != first || reads != 1 {
		t.Errorf("from the digest file: %s after %d reads, want %s after 1", again, reads, first)
	}
	// The same size, another content and time: digested again.
	if err := os.WriteFile(path, bytes.Repeat([]byte("v"), 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	os.Chtimes(path, later, later)
	if again, _, _ := (&Digests{File: cache}).Path(path); again == first || reads != 2 {
		t.Errorf("a rewritten file kept its digest %s (%d reads)", again, reads)
	}
}

// A file rewritten with its size and modification time restored (a
// retrained checkpoint unpacked from a tarball with normalised
// timestamps, labels flipped then touch -r) is digested again: its
// status-change time moved, which nothing can restore.
func TestDigestsSeeThroughRestoredTimes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	if err := os.WriteFile(path, bytes.Repeat([]byte("w"), 1<<12), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(path, old, old)
	defer func(c func() time.Time) { digestNow = c }(digestNow)
	digestNow = func() time.Time { return time.Now().Add(2 * racyWindow) }
	cache := filepath.Join(dir, DigestsFile)
	d := &Digests{File: cache}
	first, _, err := d.Path(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Save(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // past the filesystem clock's tick
	if err := os.WriteFile(path, bytes.Repeat([]byte("v"), 1<<12), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, old, old)
	for name, d := range map[string]*Digests{"the same process": d, "another process": {File: cache}} {
		if again, _, err := d.Path(path); err != nil || again == first {
			t.Errorf("%s: a rewritten file of the same size and mtime kept its digest %.12s (%v)", name, again, err)
		}
	}
}

// An entry taken while its file was fresh is racy (the file may change
// again within the timestamp's tick without its times changing): it is
// digested again on every use until the file is older than racyWindow.
func TestRacyDigestIsTakenAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "train.csv")
	if err := os.WriteFile(path, []byte("text,label\nhi,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reads := 0
	defer func(h func(string) (string, int64, error)) { hashFile = h }(hashFile)
	hashFile = func(p string) (string, int64, error) { reads++; return hashFileContent(p) }
	defer func(c func() time.Time) { digestNow = c }(digestNow)
	d := &Digests{}
	for range 2 {
		d.Path(path)
	}
	if reads != 2 {
		t.Errorf("a file written just now was read %d times for two digests, want 2 (racy)", reads)
	}
	digestNow = func() time.Time { return time.Now().Add(2 * racyWindow) }
	for range 2 {
		d.Path(path)
	}
	if reads != 3 {
		t.Errorf("once old enough, %d reads in all, want 3 (one more, then trusted)", reads)
	}
}

// A checkpoint directory is identified by its files' names and contents,
// whatever it is called or where it lies.
func TestDirectoryDigestIsItsFiles(t *testing.T) {
	mk := func(files map[string]string) string {
		dir := t.TempDir()
		for name, content := range files {
			os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
		}
		return dir
	}
	d := &Digests{}
	a, _, _ := d.Path(mk(map[string]string{"config.json": "{}", "model.safetensors": "w", ".DS_Store": "x"}))
	b, _, _ := d.Path(mk(map[string]string{"config.json": "{}", "model.safetensors": "w"}))
	c, _, _ := d.Path(mk(map[string]string{"config.json": "{}", "model.safetensors": "v"}))
	if a != b || a == c {
		t.Errorf("digests %s %s %s: want the first two equal (hidden files left out), the third other", a, b, c)
	}
}

// The canonical form leaves every zero-valued field out, so that a field
// added to train.RunSpec keeps every ID for as long as its zero value
// means what runs did before; a non-zero value is part of the ID.
func TestCanonicalFormLeavesZeroFieldsOut(t *testing.T) {
	r := Run{Task: "SENT", Configuration: "IID+T", Method: "irm", Score: ScoreSeen,
		Train: train.RunSpec{Task: "sentiment", Configuration: train.ConfigIIDPlusT, Method: "irm", Seed: 42, MaxLength: 32}}
	b, err := r.identityJSON(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, zero := range []string{`:0`, `:""`, `:false`, `:null`, `:[]`, `:{}`, "task_def", "method_settings", "held_out"} {
		if bytes.Contains(b, []byte(zero)) {
			t.Errorf("canonical identity %s holds %s", b, zero)
		}
	}
	var generic map[string]any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	withSetting := r
	withSetting.Train.Settings.IRMLambda = 10
	if r.ID() == withSetting.ID() {
		t.Error("a setting changed nothing of the ID")
	}
	// Only what is computed: the design's names and the grid's spelling
	// are not part of it.
	relabelled := r
	relabelled.Task, relabelled.Swept = "sentiment", []string{"max_length"}
	if relabelled.ID() != r.ID() {
		t.Error("the task's display name or the swept list changed the ID")
	}
}

// An input field without a digest is a programming error: its path can
// never be part of a run's identity.
func TestUndigestedInputIsRefused(t *testing.T) {
	r := Run{Train: train.RunSpec{Task: "sentiment", Suite: "/some/suite.jsonl"}}
	if _, err := r.identityJSON(true); err == nil || !strings.Contains(err.Error(), "suite") {
		t.Errorf("identity of a run with an undigested suite: %v", err)
	}
}

// legacyStore writes a store as an older beluga wrote it: sweep.json and
// per run spec.json of the older form, a result and a done marker naming
// the run only; one more run unfinished, and a run the older IDs listed
// twice (lr and hyper.lr).
func legacyStore(t *testing.T) (*Store, []Run) {
	t.Helper()
	s, err := ParseSpec([]byte(`
tasks: [{name: SENT, data: sst2, suite: sentiment, folds: {class: [Negation, Vocabulary]}}]
model: {name: bert-tiny, options: {max_length: 32}}
configurations: [IID-IID+T]
scores: [seen, class]
budget: {epochs: 2, max_iid: 4000, max_cases: 30}
grid: {iid_epochs: [2], lr: [0.001]}
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Expand(context.Background(), s, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	store := &Store{Dir: t.TempDir()}
	var sweep []map[string]any
	for i, r := range runs {
		rec := map[string]any{"task": "SENT", "data": "sst2", "suite": "sentiment", "model": "bert-tiny",
			"model_options": map[string]any{"max_length": 32}, "configuration": r.Configuration, "method": r.Method,
			"score": r.Score, "seed": 42, "budget": map[string]any{"epochs": 2, "max_iid": 4000, "max_cases": 30},
			"hyper": map[string]any{"iid_epochs": 2, "lr": 0.001}}
		if r.Fold != "" {
			rec["fold"] = r.Fold
		}
		sweep = append(sweep, rec)
		dir := store.RunDir(oldID(i))
		os.MkdirAll(dir, 0o755)
		b, _ := json.Marshal(rec)
		os.WriteFile(filepath.Join(dir, SpecFile), b, 0o644)
		if i == len(runs)-1 {
			continue // unfinished
		}
		if err := WriteResult(dir, fakeResult(r)); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, DoneFile), []byte(`{"id": "`+filepath.Base(dir)+`"}`), 0o644)
	}
	// The seen run again, its lr spelt as the field path.
	dup := sweep[1]
	dup["hyper"] = map[string]any{"iid_epochs": 2, "hyper.lr": 0.001}
	dir := store.RunDir("oldzzzzzzzzz")
	os.MkdirAll(dir, 0o755)
	b, _ := json.Marshal(dup)
	os.WriteFile(filepath.Join(dir, SpecFile), b, 0o644)
	WriteResult(dir, fakeResult(runs[1]))
	os.WriteFile(filepath.Join(dir, DoneFile), []byte(`{"id": "oldzzzzzzzzz"}`), 0o644)
	b, _ = json.Marshal(sweep)
	os.WriteFile(filepath.Join(store.Dir, SweepFile), b, 0o644)
	return store, runs
}

// Migrate moves every finished run of an older store to the directory of
// its ID today — the IDs Expand gives the same spec — without touching
// its results; it removes the unfinished run, merges two spellings of
// one run, records the files in done, and rewrites sweep.json; a second
// migration finds nothing to do. Before it, the store is refused.
func TestMigrateRekeysWithoutRetraining(t *testing.T) {
	store, runs := legacyStore(t)
	if !store.Legacy() {
		t.Fatal("an older store is not seen as one")
	}
	if _, err := store.Runs(); err == nil || !strings.Contains(err.Error(), "beluga migrate") {
		t.Errorf("runs of an older store: %v, want a pointer to beluga migrate", err)
	}
	results := map[string][]byte{}
	for i := range runs[:len(runs)-1] {
		results[runs[i].ID()], _ = os.ReadFile(filepath.Join(store.RunDir(oldID(i)), ResultFile))
	}
	m, err := Migrate(context.Background(), store, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Moved) != len(runs)-1 || len(m.Removed) != 1 || len(m.Merged) != 1 || len(m.Failed) != 0 {
		t.Fatalf("migration: %d moved, %d removed, %d merged, failed %v:\n%s", len(m.Moved), len(m.Removed), len(m.Merged), m.Failed, strings.Join(m.Summary(), "\n"))
	}
	if store.Legacy() {
		t.Error("the store is still older after migration")
	}
	st := StatusOf(store, runs, &Inputs{})
	if st.Counts[Done] != len(runs)-1 || st.Counts[Missing] != 1 {
		t.Errorf("status after migration: %v", st.Counts)
	}
	for id, want := range results {
		if got, _ := os.ReadFile(filepath.Join(store.RunDir(id), ResultFile)); !bytes.Equal(got, want) {
			t.Errorf("run %s: result changed by the migration", id)
		}
		if err := verifyRun(store.RunDir(id), true); err != nil {
			t.Errorf("run %s: %v", id, err)
		}
	}
	recorded, err := store.Runs()
	if err != nil || len(recorded) != len(runs) {
		t.Errorf("sweep after migration: %d runs, %v", len(recorded), err)
	}
	again, err := Migrate(context.Background(), store, &Inputs{})
	if err != nil || len(again.Moved)+len(again.Removed)+len(again.Merged) != 0 {
		t.Errorf("a second migration did %+v, %v", again, err)
	}
}

func hashFileContent(path string) (string, int64, error) { return hashFileOf(path) }

// oldID names the i-th run of legacyStore, as an older ID would.
func oldID(i int) string { return fmt.Sprintf("old%09d", i) }

// expandIDs expands a spec (a fake model, folds listed inline) and returns
// its runs' IDs by label and the runs.
func expandIDs(t *testing.T, yaml string) (map[string]string, []Run) {
	t.Helper()
	s, err := ParseSpec([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Expand(context.Background(), s, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, r := range runs {
		ids[r.Configuration+" "+r.Method+" "+r.Score+" "+r.Fold] = r.ID()
	}
	return ids, runs
}

// TestIdentityIsTheEffectiveSpec: a run's ID is what it computes. The IID
// baseline's does not change with any suite-phase setting; a vanilla run's
// not with LP-FT's probing rate; a task declared with the cross-entropy
// gives one run whatever hyper.loss.mft says; LP-FT's probing epochs,
// which it fixes at 1.5, are not hashed.
func TestIdentityIsTheEffectiveSpec(t *testing.T) {
	const head = "tasks: [{name: SENT, folds: {type: [MFT]}}]\nmodel: {name: fake}\nconfigurations: [IID+T]\nscores: [type]\nseeds: [1]\n"
	base, _ := expandIDs(t, head+"methods: [vanilla, lp-ft]\n")
	for _, grid := range []string{"{lr: [0.004]}", "{probe_lr: [0.004]}", "{irm_lambda: [3]}", "{hyper.loss.detach_inv: [true]}", "{batch_size: [2], epochs: [4]}"} {
		ids, _ := expandIDs(t, head+"methods: [vanilla, lp-ft]\ngrid: "+grid+"\n")
		if got, want := ids["IID vanilla iid "], base["IID vanilla iid "]; got != want {
			t.Errorf("grid %s: the IID baseline's ID %s, want %s (it reads no suite-phase setting)", grid, got, want)
		}
	}
	probe, runs := expandIDs(t, head+"methods: [vanilla, lp-ft]\ngrid: {probe_lr: [0.001, 0.0005]}\n")
	// The baseline, vanilla's seen and type run once; LP-FT's twice.
	if len(runs) != 1+2+2*2 {
		for _, r := range runs {
			t.Log(r.ID(), r.Label())
		}
		t.Errorf("%d runs, want 7: the probing rate multiplies LP-FT's runs only", len(runs))
	}
	if probe["IID+T vanilla seen "] != base["IID+T vanilla seen "] {
		t.Errorf("a probing rate changed vanilla's ID")
	}
	for _, r := range runs {
		if r.Method == "vanilla" && (len(r.Swept) != 0 || !slices.Equal(r.Unread, []string{"probe_hyper.lr"})) {
			t.Errorf("%s: swept %v, unread %v: want probe_hyper.lr unread", r.Label(), r.Swept, r.Unread)
		}
	}
	epochs, _ := expandIDs(t, head+"methods: [lp-ft]\ngrid: {probe_hyper.epochs: [1, 3]}\n")
	if len(epochs) != 3 || epochs["IID+T lp-ft seen "] != base["IID+T lp-ft seen "] {
		t.Errorf("probe_hyper.epochs, which LP-FT fixes at %v, changed its runs: %v, want %v", train.LPFTEpochs, epochs, base)
	}

	const ce = "tasks: [{name: DUP, labels: [no, yes], mft_loss: ce, folds: {type: [MFT]}}]\nmodel: {name: fake}\nconfigurations: [T]\nmethods: [vanilla]\nscores: [type]\nseeds: [1]\n"
	_, runs = expandIDs(t, ce+"grid: {hyper.loss.mft: [0, 1]}\n")
	if len(runs) != 2 {
		for _, r := range runs {
			t.Log(r.ID(), r.Label())
		}
		t.Errorf("%d runs of a cross-entropy task over hyper.loss.mft 0 and 1, want 2 (seen and one fold)", len(runs))
	}
	for _, r := range runs {
		if r.Train.Effective().Hyper.Loss.MFT != 1 {
			t.Errorf("%s records loss.mft %d, want 1 (softmax CE: what it trains with)", r.Label(), r.Train.Hyper.Loss.MFT)
		}
	}
}
