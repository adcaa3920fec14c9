package experiments

import (
	"testing"
)

// A store directory knows the runs of the sweeps recorded into it, so that
// status DIR counts the runs never launched as status SPEC does.
func TestStoreRunsIncludeRecordedMissingRuns(t *testing.T) {
	runs := mustTinyRuns(t)
	store := &Store{Dir: t.TempDir()}
	if err := store.RecordSweep(runs[:3]); err != nil {
		t.Fatal(err)
	}
	// A second sweep (or shard) adds its runs; each run is listed once.
	if err := store.RecordSweep(runs[2:5]); err != nil {
		t.Fatal(err)
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
	st := StatusOf(store, got)
	if st.Counts[Missing] != 5 {
		t.Errorf("counts %v, want 5 missing", st.Counts)
	}
}
