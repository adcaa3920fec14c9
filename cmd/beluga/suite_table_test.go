package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSuiteImportTableAndLabelStats(t *testing.T) {
	for _, tc := range []struct {
		name            string
		args            []string
		imported, stats string
	}{
		{"rules and labels", []string{"--case-id", "mhc_case_id", "--labels", "non-hateful,hateful",
			"--class-rule", "spell_=Spelling", "--class-rule", "/./=Other", "--where", "disagreement_in_template=False"},
			"5 functionalities, 2 classes, 6 test cases (8 lines: 1 header, 0 blank, 7 rows; 1 left out by --where",
			"labels (inputs): non-hateful 2 (33.3%) hateful 4 (66.7%)"},
		// One of each is said in the singular.
		{"one of each", []string{"--where", "functionality=ident_neutral_nh"},
			"1 functionality, 1 class, 1 test case (8 lines: 1 header, 0 blank, 7 rows",
			": 1 functionality, 1 class, 1 MFT / 0 INV / 0 DIR, 1 test case, 1 input\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "mhc.jsonl")
			args := append([]string{"suite", "import", "table", "../../suites/testdata/mhc_tiny.csv", "-o", out,
				"--text", "test_case", "--label", "label_gold"}, tc.args...)
			if code, msg := beluga(t, args...); code != 0 || !strings.Contains(msg, tc.imported) {
				t.Fatalf("import: exit %d, %s", code, msg)
			}
			if code, msg := beluga(t, "suite", "stats", out); code != 0 || !strings.Contains(msg, tc.stats) {
				t.Errorf("stats: exit %d, %s", code, msg)
			}
		})
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	code, msg := beluga(t, "suite", "import", "table", "../../suites/testdata/mhc_tiny.csv", "-o", bad, "--text", "nope")
	if _, err := os.Stat(bad); code != 1 || !strings.Contains(msg, `mhc_tiny.csv line 1 field "nope": missing column`) || err == nil {
		t.Errorf("bad column: exit %d, %s, output %v (want exit 1, no output)", code, msg, err)
	}
}
