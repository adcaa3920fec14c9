package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
)

// TestStoreReportsItsLatestSweep: a store named by its directory is its
// latest sweep, and status and report say so; a sweep abandoned when its
// spec changed neither blocks the report nor counts as missing; clean
// --sweeps forgets the sweep of a spec since deleted.
func TestStoreReportsItsLatestSweep(t *testing.T) {
	dir := copyStore(t, "testdata/quickstart-store")
	store := &experiments.Store{Dir: dir}
	runs, err := store.Runs()
	if err != nil {
		t.Fatal(err)
	}
	specs := t.TempDir()
	old, now := filepath.Join(specs, "old.yaml"), filepath.Join(specs, "now.yaml")
	for _, f := range []string{old, now} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The abandoned sweep had a run never done: today's lacks it.
	abandoned := append([]experiments.Run{}, runs...)
	extra := runs[1]
	extra.Train.Seed = 7
	b, _ := json.Marshal(extra)
	var gone experiments.Run
	if err := json.Unmarshal(b, &gone); err != nil {
		t.Fatal(err)
	}
	abandoned = append(abandoned, gone)
	if err := store.RecordSweep(abandoned, old); err != nil {
		t.Fatal(err)
	}
	if err := store.RecordSweep(runs, now); err != nil {
		t.Fatal(err)
	}
	out, err := execute(t, "status", dir)
	if err != nil || !strings.Contains(out, "its latest sweep, 12 runs of") || !strings.Contains(out, "1 older sweep not shown") || !strings.Contains(out, "12 runs: 12 done") {
		t.Errorf("status: %v\n%s", err, out)
	}
	if out, err := execute(t, "report", dir); err != nil {
		t.Errorf("report of a store with an abandoned sweep: %v\n%s", err, out)
	}
	if err := os.Remove(old); err != nil {
		t.Fatal(err)
	}
	out, err = execute(t, "clean", dir, "--sweeps")
	if err != nil || !strings.Contains(out, "forgot the sweep of") || !strings.Contains(out, "1 sweep kept, 1 forgotten") {
		t.Errorf("clean --sweeps: %v\n%s", err, out)
	}
	out, err = execute(t, "status", dir)
	if err != nil || strings.Contains(out, "older sweep") {
		t.Errorf("status after clean --sweeps: %v\n%s", err, out)
	}
}
