package main

import (
	"path/filepath"
	"testing"
)

// TestReportCalibration writes the calibration table of the quickstart's
// pinned store (written before runs kept their prediction files: no ECE,
// a worst group per column) as CSV.
func TestReportCalibration(t *testing.T) {
	out := filepath.Join(t.TempDir(), "calibration.csv")
	code, msg := beluga(t, "report", "testdata/quickstart-store", "--calibration", out, "-o", filepath.Join(t.TempDir(), "t.md"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	recs := readCSV(t, out)
	if len(recs) != 5 || recs[0][6] != "ece_iid" || recs[1][6] != "" || recs[1][13] != "single neutral words" || recs[1][14] != "0" {
		t.Errorf("calibration csv: %q", recs)
	}
	if code, msg := beluga(t, "report", "testdata/quickstart-store", "--calibration", "c.txt"); code == 0 {
		t.Errorf("--calibration c.txt accepted: %s", msg)
	}
}
