package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// status --sizes lists each run's trained rows and cases, planned before
// it runs and recorded (train/trained.json) after, the same figures;
// report --sizes writes them beside the seen run's; run --explain names
// each value's origin and runs nothing.
func TestSizesAndExplain(t *testing.T) {
	spec := identityDir(t)
	out := mustRun(t, "run", spec, "--explain")
	for _, want := range []string{`name\s+identity\s+file`, `seeds\s+\[42\]\s+default`, `runs\[INTENT IID\]\.iid_hyper\.epochs\s+\[1\]\s+grid \(iid_epochs\)`,
		`runs\[INTENT IID\]\.iid_hyper\.batch_size\s+16\s+profile beluga`, `runs\[INTENT IID\]\.max_length\s+16\s+model\.options\.max_length`} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(out) {
			t.Errorf("--explain lacks %s:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(spec), "store")); err == nil {
		t.Error("--explain wrote a store")
	}
	sizes := regexp.MustCompile(`(?m)^([0-9a-f]{12})\s+\w+\s+!?\s*([0-9,]+ i\.i\.d\. \+ [0-9,]+ cases)( \(planned\))?`)
	planned := map[string]string{}
	for _, m := range sizes.FindAllStringSubmatch(mustRun(t, "status", spec, "--sizes"), -1) {
		if m[3] == "" {
			t.Errorf("run %s not done, but its sizes are not planned: %q", m[1], m[0])
		}
		planned[m[1]] = m[2]
	}
	if len(planned) < 3 {
		t.Fatalf("status --sizes listed %v", planned)
	}
	mustRun(t, "run", spec)
	recorded := sizes.FindAllStringSubmatch(mustRun(t, "status", spec, "--sizes"), -1)
	for _, m := range recorded {
		if m[3] != "" || planned[m[1]] != m[2] {
			t.Errorf("run %s: recorded %q%s, planned %q", m[1], m[2], m[3], planned[m[1]])
		}
	}
	table := filepath.Join(t.TempDir(), "sizes.csv")
	mustRun(t, "report", spec, "--trials", "20", "--sizes", table)
	b := readFile(t, table)
	if !strings.Contains(string(b), "id,task,configuration,method,score,fold,seed,iid_rows,suite_cases,seen_suite_cases,share_of_seen,source") ||
		!strings.Contains(string(b), ",recorded\n") || !strings.Contains(string(b), ",type,") {
		t.Errorf("sizes.csv:\n%s", b)
	}
}
