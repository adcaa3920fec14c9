package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// oldStore executes a small sweep, then rewrites its store as a beluga
// whose IDs hashed another rule left it: every run under an ID of that
// rule (its record and done say so, and done vouches for its files), the
// IID baseline named by its old ID in the runs that start from it.
func oldStore(t *testing.T) (*Store, []Run, map[string]string) {
	t.Helper()
	s, err := ParseSpec([]byte("tasks: [{name: SENT, folds: {type: [MFT, INV]}}]\nmodel: {name: fake}\nconfigurations: [IID-T]\nmethods: [vanilla]\nscores: [type]\nseeds: [1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Expand(context.Background(), s, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	store := &Store{Dir: t.TempDir()}
	if sum, err := Execute(context.Background(), store, runs, fakeRunner{}, Options{Jobs: 1, Logger: discardLogger()}); err != nil || sum.Err() != nil {
		t.Fatal(err, sum.Err())
	}
	old := map[string]string{} // today's ID → the old one
	for i, r := range runs {
		old[r.ID()] = fmt.Sprintf("0ld%09d", i)
	}
	rewrite := func(r Run) map[string]any {
		b, _ := json.Marshal(r)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		m["id"] = old[r.ID()]
		if r.From != "" {
			m["from"] = old[r.From]
		}
		return m
	}
	var sweep []map[string]any
	for _, r := range runs {
		m := rewrite(r)
		sweep = append(sweep, m)
		dir := store.RunDir(old[r.ID()])
		if err := os.Rename(store.RunDir(r.ID()), dir); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(filepath.Join(dir, SpecFile), m); err != nil {
			t.Fatal(err)
		}
		if err := writeDone(dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeJSON(filepath.Join(store.Dir, SweepFile), sweep); err != nil {
		t.Fatal(err)
	}
	return store, runs, old
}

// TestMigrateRekeysWithoutVouchingForDamage: beluga migrate moves every
// run of an older rule's store to its ID today (the runs it needs first)
// without retraining; a run whose result was truncated after its done is
// moved without done and said, never vouched for; a run whose spec.json
// cannot be read is said, and sweep.json kept; two old runs that are one
// computation (a setting the run does not read told them apart) become
// one, and it says so.
func TestMigrateRekeysWithoutVouchingForDamage(t *testing.T) {
	store, runs, old := oldStore(t)
	if !store.Legacy() {
		t.Fatal("a store of an older rule's IDs is not refused")
	}
	if _, err := store.Runs(); err == nil || !strings.Contains(err.Error(), "beluga migrate") {
		t.Errorf("reading it: %v, want a pointer to beluga migrate", err)
	}
	base, damaged, dup := runs[0], runs[1], runs[2]
	// The same computation under another old ID: LP-FT's probing rate,
	// which vanilla does not read.
	b, err := os.ReadFile(filepath.Join(store.RunDir(old[dup.ID()]), SpecFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["train"].(map[string]any)["probe_hyper"] = map[string]any{"lr": 0.5}
	m["id"] = "0ld999999999"
	twin := store.RunDir("0ld999999999")
	if err := os.MkdirAll(twin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(twin, SpecFile), m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(twin, ResultFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeDone(twin); err != nil {
		t.Fatal(err)
	}
	// A truncated result, after done vouched for it.
	res := filepath.Join(store.RunDir(old[damaged.ID()]), ResultFile)
	if err := os.Truncate(res, 3); err != nil {
		t.Fatal(err)
	}
	// A record no beluga can read.
	broken := store.RunDir("0ldbroken000")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, SpecFile), []byte(`{"task": "SENT", "train": `), 0o644); err != nil {
		t.Fatal(err)
	}

	mig, err := Migrate(context.Background(), store, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mig.Moved[old[base.ID()]]; got != base.ID() {
		t.Errorf("the baseline moved to %q, want %s", got, base.ID())
	}
	if st := store.State(base.ID()); st != Done {
		t.Errorf("the baseline is %v after migrate, want done", st)
	}
	if st := store.State(dup.ID()); st != Done {
		t.Errorf("%s is %v after migrate, want done", dup.Label(), st)
	}
	if why, ok := mig.Damaged[old[damaged.ID()]]; !ok || !strings.Contains(why, "result.json is 3 bytes") {
		t.Errorf("damaged runs %v, want %s's truncated result said", mig.Damaged, old[damaged.ID()])
	}
	if exists(filepath.Join(store.RunDir(damaged.ID()), DoneFile)) {
		t.Errorf("the damaged run got a done at its new ID")
	}
	if mig.Merged["0ld999999999"] != dup.ID() && mig.Merged[old[dup.ID()]] != dup.ID() {
		t.Errorf("merged %v, want the two old runs of %s as one", mig.Merged, dup.ID())
	}
	if _, ok := mig.Failed["0ldbroken000"]; !ok {
		t.Errorf("the unreadable run is not said: failed %v", mig.Failed)
	}
	summary := strings.Join(mig.Summary(), "\n")
	for _, w := range []string{"damaged " + old[damaged.ID()], "the same run as " + dup.ID(), "not migrated 0ldbroken000"} {
		if !strings.Contains(summary, w) {
			t.Errorf("summary lacks %q:\n%s", w, summary)
		}
	}
	// Once the unreadable run is dealt with, a second migrate finishes:
	// sweep.json then lists today's IDs.
	if err := os.RemoveAll(broken); err != nil {
		t.Fatal(err)
	}
	if _, err := Migrate(context.Background(), store, &Inputs{}); err != nil {
		t.Fatal(err)
	}
	listed, err := store.Runs()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range listed {
		ids = append(ids, r.ID())
	}
	for _, r := range runs {
		if !slices.Contains(ids, r.ID()) {
			t.Errorf("the store does not list %s (%s) after migrate", r.ID(), r.Label())
		}
	}
}
