package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSuiteStatsCSVNeutralisesNames writes `suite stats --format csv` of a
// suite whose class, functionality and label are spreadsheet formulas: each
// arrives behind a quote, so a spreadsheet shows it instead of running it,
// while the counts stay numbers.
func TestSuiteStatsCSVNeutralisesNames(t *testing.T) {
	suite := filepath.Join(t.TempDir(), "hostile.jsonl")
	lines := `{"suite":"hostile","labels":["-2+3","ok"]}` + "\n" +
		`{"class":"=cmd|' /C calc'!A0","functionality":"@SUM(1+1)","type":"MFT","id":0,"inputs":["x"],"label":0}` + "\n"
	if err := os.WriteFile(suite, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	code, msg := beluga(t, "suite", "stats", suite, "--format", "csv")
	if code != 0 {
		t.Fatalf("stats: exit %d, %s", code, msg)
	}
	recs, err := csv.NewReader(strings.NewReader(msg)).ReadAll()
	if err != nil {
		t.Fatalf("%v in\n%s", err, msg)
	}
	want := [][]string{
		{"class", "functionality", "type", "cases", "inputs", "label:-2+3", "label:ok"},
		{"'=cmd|' /C calc'!A0", "'@SUM(1+1)", "MFT", "1", "1", "1", "0"},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(recs), len(want), msg)
	}
	for i := range want {
		if strings.Join(recs[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("line %d = %q, want %q", i+1, recs[i], want[i])
		}
	}
}
