package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSuiteImportTableAndLabelStats(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mhc.jsonl")
	code, msg := beluga(t, "suite", "import", "table", "../../suites/testdata/mhc_tiny.csv", "-o", out,
		"--text", "test_case", "--label", "label_gold", "--case-id", "mhc_case_id", "--labels", "non-hateful,hateful",
		"--class-rule", "spell_=Spelling", "--class-rule", "/./=Other", "--where", "disagreement_in_template=False")
	if code != 0 || !strings.Contains(msg, "5 functionalities, 2 classes, 6 test cases (8 lines: 1 header, 0 blank, 7 rows; 1 left out by --where") {
		t.Fatalf("import: exit %d, %s", code, msg)
	}
	code, msg = beluga(t, "suite", "stats", out)
	if code != 0 || !strings.Contains(msg, "labels (inputs): non-hateful 2 (33.3%) hateful 4 (66.7%)") {
		t.Errorf("stats: exit %d, %s", code, msg)
	}
	// One of each is said in the singular.
	one := filepath.Join(t.TempDir(), "one.jsonl")
	code, msg = beluga(t, "suite", "import", "table", "../../suites/testdata/mhc_tiny.csv", "-o", one,
		"--text", "test_case", "--label", "label_gold", "--where", "functionality=ident_neutral_nh")
	if code != 0 || !strings.Contains(msg, "1 functionality, 1 class, 1 test case (8 lines: 1 header, 0 blank, 7 rows") {
		t.Errorf("import of one: exit %d, %s", code, msg)
	}
	code, msg = beluga(t, "suite", "stats", one)
	if code != 0 || !strings.Contains(msg, ": 1 functionality, 1 class, 1 MFT / 0 INV / 0 DIR, 1 test case, 1 input\n") {
		t.Errorf("stats of one: exit %d, %s", code, msg)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	code, msg = beluga(t, "suite", "import", "table", "../../suites/testdata/mhc_tiny.csv", "-o", bad, "--text", "nope")
	if _, err := os.Stat(bad); code != 1 || !strings.Contains(msg, `mhc_tiny.csv line 1 field "nope": missing column`) || err == nil {
		t.Errorf("bad column: exit %d, %s, output %v (want exit 1, no output)", code, msg, err)
	}
}
