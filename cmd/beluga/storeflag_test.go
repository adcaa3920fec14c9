package main

import "testing"

// Every command that reads a run store names it --store (report, serve,
// plot, failures, and run, status, clean, verify); --out stays accepted
// where -o is the store.
func TestStoreFlagIsOneName(t *testing.T) {
	for _, args := range [][]string{{"run"}, {"status"}, {"clean"}, {"verify"}, {"report"}, {"serve"}, {"plot", "heatmap"}, {"plot", "learning-curve"}, {"failures"}} {
		cmd, _, err := NewCmdBeluga().Find(args)
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Flags().Lookup("store") == nil {
			t.Errorf("beluga %v has no --store", args)
		}
	}
	for _, name := range []string{"run", "status", "clean", "verify"} {
		cmd, _, err := NewCmdBeluga().Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Flags().Parse([]string{"--out", "old-spelling"}); err != nil {
			t.Fatal(err)
		}
		if got, _ := cmd.Flags().GetString("store"); got != "old-spelling" {
			t.Errorf("beluga %s --out: --store is %q", name, got)
		}
	}
}
