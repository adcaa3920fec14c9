package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store directory knows the runs of its latest sweep, so that status DIR
// counts the runs never launched as status SPEC does; shards of one sweep
// record the same list.
func TestStoreRunsIncludeRecordedMissingRuns(t *testing.T) {
	runs := mustTinyRuns(t)
	store := &Store{Dir: t.TempDir()}
	for range 2 { // two shards
		if err := store.RecordSweep(runs[:5], "a.yaml"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := store.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("%d runs, want 5", len(got))
	}
	for i, r := range got {
		if r.ID() != runs[i].ID() {
			t.Errorf("run %d is %s, want %s", i, r.ID(), runs[i].ID())
		}
	}
	st := StatusOf(store, got, nil)
	if st.Counts[Missing] != 5 {
		t.Errorf("counts %v, want 5 missing", st.Counts)
	}
}

// TestStoreFollowsItsLatestSweep: after its spec changed, a store named by
// its directory is its latest sweep — the abandoned one's runs neither
// listed nor counted as missing — and says so; clean --sweeps forgets the
// sweeps no spec names (a spec file gone, an older sweep of one), keeping
// every run directory.
func TestStoreFollowsItsLatestSweep(t *testing.T) {
	runs := mustTinyRuns(t)
	dir := t.TempDir()
	store := &Store{Dir: dir}
	gone := filepath.Join(dir, "gone.yaml") // a spec since deleted
	kept := filepath.Join(dir, "kept.yaml")
	if err := os.WriteFile(kept, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []struct {
		spec string
		runs []Run
	}{{kept, runs[:2]}, {gone, runs[:4]}, {kept, runs[1:3]}} {
		if err := store.RecordSweep(rec.runs, rec.spec); err != nil {
			t.Fatal(err)
		}
	}
	sw, err := OpenSweep(t.Context(), dir, "", &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Runs) != 2 || sw.Runs[0].ID() != runs[1].ID() || sw.Runs[1].ID() != runs[2].ID() {
		t.Errorf("the store lists %d runs, want its latest sweep's 2", len(sw.Runs))
	}
	if !strings.Contains(sw.Note, "its latest sweep, 2 runs of") || !strings.Contains(sw.Note, "2 older sweeps not shown") {
		t.Errorf("note %q", sw.Note)
	}
	keptRecs, forgot, err := store.ForgetSweeps()
	if err != nil {
		t.Fatal(err)
	}
	if len(keptRecs) != 1 || len(forgot) != 2 {
		t.Errorf("kept %d sweeps, forgot %d: want the latest kept, the gone spec's and the older one forgotten", len(keptRecs), len(forgot))
	}
	all, err := store.sweepRuns()
	if err != nil || len(all) != 2 {
		t.Errorf("sweep.json lists %d runs after clean --sweeps, want 2 (%v)", len(all), err)
	}
}

// A name that is no dataset but looks like a file is reported as a file
// not found, not as an unknown dataset.
func TestResolveDataFileNotFound(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"vocab/ar-vocab.txt", "vocab/ar-vocab.txt: file not found"},
		{"azimuth-sst2.jsonl.gz", "azimuth-sst2.jsonl.gz: file not found"},
		{"sst-2", `unknown dataset "sst-2"`},
	} {
		_, err := resolveData(t.Context(), nil, tc.name, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSweepExecute: Sweep.Execute is beluga run's pipeline. It executes
// the shard's runs (and the runs they need), records the whole sweep under
// the name it is given, and refuses, before the store is written, a spec
// the trainer cannot run and a sweep read from a store (no spec to check
// it against).
func TestSweepExecute(t *testing.T) {
	tiny, data := trainFixtures(t, map[string]string{"tiny_train.tsv": "train.tsv", "tiny_dev.tsv": "dev.tsv"})
	yaml := `name: tiny
tasks: [{name: SENT, data: ` + data + `, suite: ` + filepath.Join(tiny, "tiny_suite.jsonl") + `}]
model: {name: MODEL, options: {glove: ` + filepath.Join(tiny, "tiny_glove.txt") + `, hidden: 8, max_length: 16}}
configurations: [IID+T]
scores: [seen]
seeds: [1, 2]
grid: {iid_epochs: [1], epochs: [1], batch_size: [4]}
`
	sweepOf := func(model string) *Sweep {
		t.Helper()
		spec, err := ParseSpec([]byte(strings.Replace(yaml, "MODEL", model, 1)))
		if err != nil {
			t.Fatal(err)
		}
		spec.Out = filepath.Join(t.TempDir(), "store")
		sw, err := SweepOf(t.Context(), spec, &Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		return sw
	}

	sw := sweepOf("wordvec")
	if len(sw.Runs) != 4 {
		t.Fatalf("%d runs, want the IID baseline and the seen run for each of 2 seeds", len(sw.Runs))
	}
	shard := Shard{I: 0, N: 2}
	var warn strings.Builder
	sum, err := sw.Execute(t.Context(), SweepOptions{Options: Options{Logger: discardLogger()}, Shard: &shard, Record: "a test", Warn: &warn})
	if err != nil {
		t.Fatalf("%v (%+v)", err, sum)
	}
	mine := shard.Select(sw.Runs)
	if sum.Total < len(mine) || sum.Ran != sum.Total {
		t.Errorf("summary %+v: want the shard's %d runs (and those they need) run", sum, len(mine))
	}
	needed := map[string]bool{}
	for _, r := range mine {
		needed[r.ID()] = true
		for _, d := range r.Needs() {
			needed[d] = true
		}
	}
	if len(needed) == len(sw.Runs) {
		t.Fatal("the shard needs every run of the sweep: pick another shard")
	}
	for _, r := range sw.Runs {
		want := Missing
		if needed[r.ID()] {
			want = Done
		}
		if st := sw.Store.State(r.ID()); st != want {
			t.Errorf("run %s is %s, want %s", r.Label(), st, want)
		}
	}
	recs, err := sw.Store.Sweeps()
	if err != nil || len(recs) != 1 || recs[0].Spec != "a test" || len(recs[0].Runs) != len(sw.Runs) {
		t.Errorf("recorded sweeps %+v (%v): want the whole sweep of 4 runs, as \"a test\"", recs, err)
	}

	bad := sweepOf("no-such-model")
	if _, err := bad.Execute(t.Context(), SweepOptions{}); err == nil || !strings.Contains(err.Error(), "experiment spec tiny: ") || !strings.Contains(err.Error(), "no-such-model") {
		t.Errorf("a model the trainer does not know: %v", err)
	}
	if _, err := os.Stat(bad.Store.Dir); !os.IsNotExist(err) {
		t.Errorf("the refused sweep's store was written: %v", err)
	}

	fromStore, err := OpenSweep(t.Context(), sw.Store.Dir, "", &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fromStore.Execute(t.Context(), SweepOptions{}); err == nil || !strings.Contains(err.Error(), "from the spec") {
		t.Errorf("a store's sweep executed: %v", err)
	}
}
