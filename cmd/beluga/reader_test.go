package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
)

// Every command that reads rows reads a TSV with quote-initial texts (as
// tweets often begin) the same: seven rows, one a line. Before one
// reader, tokenizer stats and train read it with CSV quoting and merged
// lines without a word, while run read every row.
func TestQuoteInitialTSVReadsTheSameRowsInEveryCommand(t *testing.T) {
	const fixture = "../../datasets/testdata/quote_initial.tsv"
	dir := t.TempDir()
	wantRows := "8 lines: 1 header, 0 blank, 7 rows; 7 texts, 0 empty left out"

	// run (and every spec-declared file): datasets.FileSpec.
	xs, err := datasets.FileSpec{Path: fixture, Labels: datasets.LabelNames("OTHER", "OFFENSE")}.Read()
	if err != nil || len(xs) != 7 || xs[0].Text != `"Quoted start, no end` {
		t.Fatalf("FileSpec (run's reader): %d rows (%v), want 7", len(xs), err)
	}
	code, msg := beluga(t, "tokenizer", "stats", "--tokenizer", "../../models/tokenize/testdata/vocab-small.txt", "--input", fixture+":text")
	if code != 0 || !strings.Contains(msg, wantRows) {
		t.Errorf("tokenizer stats: exit %d, %s; want %q", code, msg, wantRows)
	}
	args := []string{"tokenizer", "train", "--kind", "wordpiece", "--vocab-size", "60", "--min-frequency", "1"}
	code, msg = beluga(t, append(args, "--input", fixture+":text", "-o", filepath.Join(dir, "a.json"))...)
	if code != 0 || !strings.Contains(msg, wantRows) || !strings.Contains(msg, "from 7 texts") {
		t.Errorf("tokenizer train --input: exit %d, %s; want 7 texts", code, msg)
	}
	// A spec's declared file, as run reads it.
	spec := filepath.Join(dir, "spec.yaml")
	abs, _ := filepath.Abs(fixture)
	os.WriteFile(filepath.Join(dir, "suite.jsonl"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "dev.tsv"), []byte("text\tlabel\nx\tOTHER\n"), 0o644)
	os.WriteFile(spec, []byte(`tasks: [{name: HATE, labels: [OTHER, OFFENSE], suite: suite.jsonl, train: {path: `+abs+`}, dev: {path: dev.tsv}}]
model: {kind: bert-tiny, tokenizer: tk.json}
configurations: [IID+T]
scores: [seen]
`), 0o644)
	code, msg = beluga(t, append(args, "--spec", spec, "-o", filepath.Join(dir, "b.json"))...)
	if code != 0 || !strings.Contains(msg, "from 7 texts") {
		t.Errorf("tokenizer train --spec: exit %d, %s; want 7 texts", code, msg)
	}
	code, msg = beluga(t, "suite", "import", "table", fixture, "-o", filepath.Join(dir, "s.jsonl"), "--labels", "OTHER,OFFENSE")
	if code != 0 || !strings.Contains(msg, "7 test cases (8 lines: 1 header, 0 blank, 7 rows;") {
		t.Errorf("suite import table: exit %d, %s; want 7 test cases", code, msg)
	}
}

// A headerless TSV is read by position in every command, with the one
// syntax: columns (--columns on the command line).
func TestHeaderlessTSVByPosition(t *testing.T) {
	const fixture = "../../datasets/testdata/headerless.tsv"
	dir := t.TempDir()
	code, msg := beluga(t, "tokenizer", "stats", "--tokenizer", "../../models/tokenize/testdata/vocab-small.txt", "--input", fixture+":text", "--columns", "text,label,-")
	if code != 0 || !strings.Contains(msg, "4 lines: 0 header, 0 blank, 4 rows; 4 texts") {
		t.Errorf("tokenizer stats --columns: exit %d, %s", code, msg)
	}
	code, msg = beluga(t, "suite", "import", "table", fixture, "-o", filepath.Join(dir, "s.jsonl"), "--columns", "text,label,functionality",
		"--labels", "non-hateful,hateful", "--label-map", "OFFENSE=hateful", "--label-map", "OTHER=non-hateful")
	if code != 0 || !strings.Contains(msg, "4 test cases (4 lines: 0 header, 0 blank, 4 rows;") {
		t.Errorf("suite import table --columns --label-map: exit %d, %s", code, msg)
	}
	// Without the columns, the first row is no header: the missing column
	// is named, with how to declare them.
	code, msg = beluga(t, "tokenizer", "stats", "--tokenizer", "../../models/tokenize/testdata/vocab-small.txt", "--input", fixture+":text")
	if code != 1 || !strings.Contains(msg, `headerless.tsv line 1 field "text": missing column`) {
		t.Errorf("tokenizer stats without --columns: exit %d, %s", code, msg)
	}
	// Declared quoted, the quote-initial file is refused with its line.
	code, msg = beluga(t, "tokenizer", "stats", "--tokenizer", "../../models/tokenize/testdata/vocab-small.txt", "--input", "../../datasets/testdata/quote_initial.tsv:text", "--quoted")
	if code != 1 || !strings.Contains(msg, "quote_initial.tsv line 2: the row's quoted cell runs on to line") {
		t.Errorf("tokenizer stats --quoted: exit %d, %s", code, msg)
	}
}

// suite stats --by counts a metadata column's values per part, and suite
// split --stratify splits by it; a column no case has is refused.
func TestSuiteStatsByAndSplitStratify(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "mhc.jsonl")
	code, msg := beluga(t, "suite", "import", "table", "../../suites/testdata/mhc_tiny.csv", "-o", suite,
		"--text", "test_case", "--label", "label_gold", "--case-id", "mhc_case_id", "--labels", "non-hateful,hateful")
	if code != 0 {
		t.Fatalf("import: %s", msg)
	}
	code, msg = beluga(t, "suite", "stats", suite, "--by", "target_ident")
	if code != 0 || !strings.Contains(msg, "target_ident  suite  train  validation  test  suite share  test share") || !strings.Contains(msg, "# fewer than 50 test cases") {
		t.Errorf("stats --by: exit %d, %s", code, msg)
	}
	split := filepath.Join(dir, "split.jsonl")
	code, msg = beluga(t, "suite", "split", suite, "-o", split, "--stratify", "target_ident")
	if code != 0 || !strings.Contains(msg, "wrote "+split) {
		t.Errorf("split --stratify: exit %d, %s", code, msg)
	}
	code, msg = beluga(t, "suite", "split", suite, "-o", split, "--stratify", "nope")
	if code != 1 || !strings.Contains(msg, "--stratify nope: no case of") {
		t.Errorf("split --stratify nope: exit %d, %s", code, msg)
	}
}
