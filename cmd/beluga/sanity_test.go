package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Held-out scores whose only fold withholds the whole suite are refused at
// expansion, so --dry-run already says so and nothing is written.
func TestDryRunRefusesDegenerateFolds(t *testing.T) {
	td, err := filepath.Abs("../../train/testdata")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(td, "intent_suite.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// Parts of the intent suite: its MFT functionalities (one class, one
	// test type), or its greetings alone.
	for _, tc := range []struct{ score, keep, fold, what string }{
		{"type", `"type": "MFT"`, `"MFT"`, "one test type"},
		{"class", `"type": "MFT"`, `"Intent"`, "one class"},
		{"func", `"functionality": "greetings"`, `"greetings"`, "one functionality"},
	} {
		t.Run(tc.score, func(t *testing.T) {
			dir := t.TempDir()
			var kept []string
			for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if i == 0 || strings.Contains(line, tc.keep) {
					kept = append(kept, line)
				}
			}
			suite := filepath.Join(dir, "suite.jsonl")
			if err := os.WriteFile(suite, []byte(strings.Join(kept, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			spec := filepath.Join(dir, "spec.yaml")
			os.WriteFile(spec, []byte(`out: store
tasks:
  - name: INTENT
    labels: [greeting, question, complaint]
    suite: `+suite+`
model: {name: wordvec, options: {glove: `+filepath.Join(td, "intent_glove.txt")+`}}
configurations: [T]
scores: [seen, `+tc.score+`]
`), 0o644)
			_, err := execute(t, "run", spec, "--dry-run")
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range []string{"task INTENT", "score " + tc.score, "fold " + tc.fold, tc.what, "no suite data to train on"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "store")); !os.IsNotExist(err) {
				t.Errorf("the store was created: %v", err)
			}
		})
	}
}
