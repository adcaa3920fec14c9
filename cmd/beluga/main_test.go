package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test binary doubles as the beluga command: with BELUGA_RUN_MAIN set it
// runs main, so tests can check exit statuses and output files end to end.
func TestMain(m *testing.M) {
	if os.Getenv("BELUGA_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// beluga runs the command with args and returns its exit status and output.
func beluga(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BELUGA_RUN_MAIN=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

func TestSuiteImportBadInputExitsOneAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("../../suites/testdata/tiny_suite.pkl")
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.pkl")
	os.WriteFile(truncated, good[:len(good)/3], 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"truncated pickle", []string{"suite", "import", "checklist", truncated}, "truncated pickle"},
		{"unknown test class", []string{"suite", "import", "checklist", "../../suites/testdata/unknown_class.pkl"}, "unknown test class"},
		{"unknown INV expectation", []string{"suite", "import", "checklist", "../../suites/testdata/unknown_inv.pkl"}, "unknown expectation"},
		{"missing file", []string{"suite", "import", "hatecheck", filepath.Join(dir, "nope.csv")}, "nope.csv"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".jsonl")
			code, msg := beluga(t, append(tc.args, "-o", out)...)
			if code != 1 {
				t.Errorf("exit status %d, want 1 (output %q)", code, msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("message %q does not contain %q", msg, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output file %s exists after a failed import", out)
			}
		})
	}
}

func TestSuiteStatsOfBadJSONL(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(`{"class":"C","functionality":"f","type":"INV","id":0,"inputs":["only"]}`+"\n"), 0o644)
	code, msg := beluga(t, "suite", "stats", bad)
	if code != 1 || !strings.Contains(msg, "bad.jsonl line 1") || !strings.Contains(msg, `field "inputs"`) {
		t.Errorf("exit %d, message %q; want 1 naming line 1 and field inputs", code, msg)
	}
}

func TestSuiteImportAndStats(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tiny.jsonl.gz")
	if code, msg := beluga(t, "suite", "import", "checklist", "../../suites/testdata/tiny_suite.pkl", "-o", out); code != 0 {
		t.Fatalf("import failed (%d): %s", code, msg)
	}
	code, msg := beluga(t, "suite", "stats", out, "--format", "csv")
	if code != 0 {
		t.Fatalf("stats failed (%d): %s", code, msg)
	}
	want := "class,functionality,type,cases,inputs\nVocabulary,my words,MFT,2,2\n"
	if !strings.HasPrefix(msg, want) {
		t.Errorf("stats csv =\n%s\nwant prefix\n%s", msg, want)
	}
}
