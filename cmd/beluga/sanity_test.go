package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
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

// A model trained on i.i.d. data of one class predicts that class for
// everything: its result records the flag with the figures, status marks
// the run, and the table marks its cells, explains them in a footnote and
// sets none of them in bold (md, LaTeX; a flags column in CSV).
func TestConstantPredictorIsMarkedInResultStatusAndTable(t *testing.T) {
	td, err := filepath.Abs("../../train/testdata")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(td, "intent_train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := 1; i < len(lines); i++ {
		text, _, _ := strings.Cut(lines[i], ",")
		lines[i] = text + ",greeting"
	}
	os.WriteFile(filepath.Join(dir, "train.csv"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	spec := filepath.Join(dir, "spec.yaml")
	os.WriteFile(spec, []byte(`out: store
tasks:
  - name: INTENT
    labels: [greeting, question, complaint]
    suite: `+filepath.Join(td, "intent_suite.jsonl")+`
    train: {path: train.csv, text: utterance, label: intent}
    dev: {path: `+filepath.Join(td, "intent_dev.csv")+`, text: utterance, label: intent}
model: {name: wordvec, options: {glove: `+filepath.Join(td, "intent_glove.txt")+`, hidden: 8, max_length: 16}}
grid: {iid_epochs: [3], iid_batch_size: [4], iid_lr: [0.05]}
`), 0o644)
	if out, err := execute(t, "run", spec); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	store, runs, err := sweepOf(spec, "")
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	res, err := experiments.ReadResult(store.RunDir(runs[0].ID()))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Flags) == 0 || res.Flags[0].Kind != metrics.FlagConstantIID || res.Flags[0].Figures["share"] != 1 || res.Flags[0].Figures["total"] != 9 {
		t.Fatalf("result flags %+v, want constant-iid over 9 of 9", res.Flags)
	}
	out, err := execute(t, "status", spec)
	if err != nil || !strings.Contains(out, "1 done (1 flagged !)") || !strings.Contains(out, runs[0].ID()+"  done  !  ") ||
		!strings.Contains(out, "9 of 9 i.i.d. test examples (100.0%) predicted greeting, expected for 33.3%") {
		t.Errorf("status: %v\n%s", err, out)
	}
	out, err = execute(t, "report", spec)
	// The constant predictor is no better than the majority class on the
	// same examples: both marks, never bold.
	if err != nil || !strings.Contains(out, "| IID | Vanilla | 33.33†§ |") || strings.Contains(out, "**") ||
		!strings.Contains(out, "\n† a constant predictor") || !strings.Contains(out, "run "+runs[0].ID()) {
		t.Errorf("report md: %v\n%s", err, out)
	}
	out, err = execute(t, "report", spec, "--format", "latex")
	if err != nil || !strings.Contains(out, `33.33$^{\dagger\S}$`) || strings.Contains(out, `\textbf`) || !strings.Contains(out, `{\footnotesize $^{\dagger}$ a constant predictor`) {
		t.Errorf("report latex: %v\n%s", err, out)
	}
	out, err = execute(t, "failures", runs[0].ID(), "--store", spec, "--functionality", "questions")
	if err != nil || !strings.HasPrefix(out, "questions (Intent, MFT): 2 of 2 scored cases failed; expects: prediction is the label\n") ||
		!strings.Contains(out, `"what is the price ?" → greeting (p=`) || !strings.Contains(out, "), expected question; 1 − p(expected) = ") {
		t.Errorf("failures: %v\n%s", err, out)
	}
	out, err = execute(t, "report", spec, "--format", "csv")
	if err != nil || !strings.Contains(out, ",flags\n") || !strings.Contains(out, "IID INTENT: constant-iid ("+runs[0].ID()+")") {
		t.Errorf("report csv: %v\n%s", err, out)
	}
}

// beluga train's spec file speaks YAML field paths too, with the closest
// known key, and writes nothing.
func TestTrainSpecErrorsNameFieldPaths(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"task: sentiment\nmodel: {kind: wordvec, glvoe: x}\n", "line 2: field model.glvoe: unknown key (did you mean glove?)"},
		{"task: sentiment\nhyper: {lr: fast}\n", `line 2: field hyper.lr: "fast" is not a number`},
	} {
		dir := t.TempDir()
		spec := filepath.Join(dir, "run.yaml")
		os.WriteFile(spec, []byte(tc.yaml), 0o644)
		_, err := execute(t, "train", "--spec", spec, "--out", filepath.Join(dir, "out"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
			t.Errorf("the run directory was created: %v", err)
		}
	}
}

// --dry-run checks what every run would fail on: a model file that is not
// there ("file not found", not "unknown dataset"), word vectors or a
// tokenizer, an i.i.d. file's column, a suite whose labels the task does not
// have.
func TestDryRunChecksFilesColumnsAndLabels(t *testing.T) {
	td, err := filepath.Abs("../../train/testdata")
	if err != nil {
		t.Fatal(err)
	}
	task := func(labels, column, model string) string {
		return `out: store
tasks:
  - name: INTENT
    labels: [` + labels + `]
    suite: ` + filepath.Join(td, "intent_suite.jsonl") + `
    train: {path: ` + filepath.Join(td, "intent_train.csv") + `, text: ` + column + `, label: intent}
    dev: {path: ` + filepath.Join(td, "intent_dev.csv") + `, text: utterance, label: intent}
model: ` + model + `
scores: [seen]
configurations: [T]
`
	}
	glove := "{kind: wordvec, glove: " + filepath.Join(td, "intent_glove.txt") + "}"
	for _, tc := range []struct{ name, spec, want string }{
		{"fine", task("greeting, question, complaint", "utterance", glove), ""},
		{"missing word vectors", task("greeting, question, complaint", "utterance", "{kind: wordvec, glove: vectors/ar.txt}"), "field model.glove: vectors/ar.txt: file not found (looked for DIR/vectors/ar.txt: a path in a spec is relative to the spec's folder)"},
		{"missing tokenizer", task("greeting, question, complaint", "utterance", "{kind: bert-tiny, tokenizer: ar-wordpiece.json}"), "field model.tokenizer: ar-wordpiece.json: file not found (looked for DIR/ar-wordpiece.json"},
		{"missing column", task("greeting, question, complaint", "utterence", glove), `field tasks[0].train: ` + filepath.Join(td, "intent_train.csv")},
		{"labels the suite lacks", task("greeting, question", "utterance", glove), `field tasks[0]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			spec := filepath.Join(dir, "spec.yaml")
			os.WriteFile(spec, []byte(tc.spec), 0o644)
			out, err := execute(t, "run", spec, "--dry-run")
			// A run's ID holds its files' content: a file that is not
			// there leaves no runs to list.
			if listed := strings.Contains(out, "2 runs into"); listed != !strings.Contains(tc.want, "file not found") {
				t.Errorf("listing %v:\n%s", listed, out)
			}
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("error %v, want %q", err, want)
			}
			if _, err := os.Stat(filepath.Join(dir, "store")); !os.IsNotExist(err) {
				t.Errorf("the store was created: %v", err)
			}
		})
	}
}

// A failure of several lines (word vectors refused on each part of the
// data) stays one row of status's listing per run, and run's summary
// indents its continuation lines under the run they belong to.
func TestMultiLineFailuresKeepOneRowPerRun(t *testing.T) {
	td, dir := trainTestdata(t), t.TempDir()
	spec := writeFile(t, filepath.Join(dir, "spec.yaml"), `out: store
tasks:
  - name: INTENT
    labels: [greeting, question, complaint]
    mft_loss: ce
    suite: `+filepath.Join(td, "intent_suite.jsonl")+`
    train: {path: `+filepath.Join(td, "intent_train.csv")+`, text: utterance, label: intent}
    dev: {path: `+filepath.Join(td, "intent_dev.csv")+`, text: utterance, label: intent}
model: {kind: wordvec, glove: `+filepath.Join(td, "tiny_glove.txt")+`}
configurations: [T]
scores: [seen]
`)
	_, err := execute(t, "run", spec)
	if err == nil {
		t.Fatal("the runs did not fail")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "2 of 2 runs failed") {
		t.Fatalf("summary %q", err)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "  ") {
			t.Errorf("summary line %q is not indented under its run", l)
		}
	}
	out, err := execute(t, "status", spec)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 3 {
		t.Fatalf("status has %d lines, want a header and one row per failed run:\n%s", len(rows), out)
	}
	for _, r := range rows[1:] {
		if !strings.Contains(r, "failed") || !strings.Contains(r, "word vectors cover") {
			t.Errorf("row %q", r)
		}
	}
}
