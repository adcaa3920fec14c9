package experiments

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A tokenizer for a declared task learns from the training part of its
// split file and its suite's path, never from a dev or test text.
func TestTokenizerCorpusReadsOnlyTheTrainingPart(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("text,label\n")
	for i := range 40 {
		fmt.Fprintf(&b, "tweet%02d,%s\n", i, []string{"no", "yes"}[i%4/3])
	}
	os.WriteFile(filepath.Join(dir, "one.csv"), []byte(b.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "suite.jsonl"), nil, 0o644)
	specText := `
tasks: [{name: HATE, labels: [no, yes], suite: suite.jsonl, train: {path: one.csv, split: {dev: 8, test: 12}}}]
model: {kind: bert-tiny, tokenizer: tk.json}
configurations: [IID+T]
scores: [seen]
`
	os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte(specText), 0o644)
	s, err := LoadSpec(filepath.Join(dir, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	texts, suite, _, err := s.TokenizerCorpus(context.Background(), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 20 {
		t.Errorf("%d texts, want the 20 of the training part", len(texts))
	}
	decl, err := s.Tasks[0].declaration("tasks[0]")
	if err != nil {
		t.Fatal(err)
	}
	f := *decl.Train
	f.Path = filepath.Join(dir, "one.csv")
	parts, _, err := f.Parts()
	if err != nil {
		t.Fatal(err)
	}
	for _, held := range append(parts[1], parts[2]...) {
		if slices.Contains(texts, held.Text) {
			t.Errorf("the corpus holds %q of a dev or test part", held.Text)
		}
	}
	if suite != filepath.Join(dir, "suite.jsonl") {
		t.Errorf("suite %q", suite)
	}
	if _, _, _, err := s.TokenizerCorpus(context.Background(), nil, "OTHER"); err == nil || !strings.Contains(err.Error(), "no task \"OTHER\"") {
		t.Errorf("unknown task: %v", err)
	}
	if err := (&TrainRunner{}).Check(s); err != nil {
		t.Errorf("bert-tiny with a tokenizer: %v", err)
	}
}
