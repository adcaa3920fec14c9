package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/report"
)

// writeSpec writes a small spec with inline folds into dir.
func writeSpec(t *testing.T, dir string) string {
	t.Helper()
	spec := `name: cli-test
out: store
tasks:
  - name: SENT
    data: sst2
    suite: sentiment
    folds:
      func: [single positive words, add positive phrases, change names, change locations, simple negations]
      class: [Vocabulary, NER, Negation]
      type: [MFT, DIR, INV]
model: {name: synthetic}
configurations: [IID+T]
methods: [vanilla, lp]
`
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// execute runs beluga with args on a tree of its own and returns what it
// printed, standard output and error together.
func execute(t testing.TB, args ...string) (string, error) {
	t.Helper()
	return executeOn(t, NewCmdBeluga(), args...)
}

// executeOn runs beluga with args on the tree root.
func executeOn(t testing.TB, root *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestRunStatusReportPlotClean(t *testing.T) {
	dir := t.TempDir()
	spec := writeSpec(t, dir)

	// The dry run lists the runs, then refuses the model the real trainer
	// does not know.
	out, err := execute(t, "run", spec, "--dry-run")
	if err == nil || !strings.Contains(err.Error(), `field model.name: unknown model "synthetic"`) {
		t.Errorf("dry run with an unknown model: %v", err)
	}
	// 1 baseline + 2 methods × (seen + 5 func + 3 class + 3 type)
	if !strings.Contains(out, "25 runs into") || strings.Count(out, "missing") != 25 {
		t.Errorf("dry run:\n%s", out)
	}
	// The real trainer refuses the spec's model, run by run, and the
	// command fails with every failure summarised.
	if _, err := execute(t, "run", spec, "--dry-run=false"); err == nil || !strings.Contains(err.Error(), `unknown model "synthetic"`) {
		t.Errorf("run with an unknown model: %v", err)
	}

	// Fill the store with the synthetic runner, then break one run.
	s, runs, err := loadRuns(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	store := storeOf(s)
	if _, err := experiments.Execute(context.Background(), store, runs, experimentstest.Runner{}, experiments.Options{Logger: discardLogger()}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(store.RunDir(runs[3].ID()), experiments.DoneFile))

	out, err = execute(t, "status", spec)
	if err != nil || !strings.Contains(out, "24 done, 0 running, 0 failed, 1 incomplete, 0 stale, 0 damaged, 0 missing") {
		t.Errorf("status: %v\n%s", err, out)
	}
	out, err = execute(t, "clean", spec, "--incomplete")
	if err != nil || !strings.Contains(out, "removed 1 ") {
		t.Errorf("clean: %v\n%s", err, out)
	}
	// A table lacking a run of its sweep is refused, the run named, unless
	// --partial, which marks the cells it leaves incomplete.
	if _, err = execute(t, "report", spec, "--trials", "100"); err == nil || !strings.Contains(err.Error(), runs[3].ID()+" SENT "+runs[3].Score+" -"+runs[3].Fold+": missing") {
		t.Errorf("report of a store lacking %s: %v", runs[3].ID(), err)
	}
	out, err = execute(t, "report", spec, "--trials", "100", "--partial")
	if err != nil || !strings.Contains(out, "| IID | Vanilla |") || !strings.Contains(out, "G_type SENT") || !strings.Contains(out, report.MarkIncomplete+" incomplete") {
		t.Errorf("report md --partial: %v\n%s", err, out)
	}
	tex := filepath.Join(dir, "t3.tex")
	if _, err := execute(t, "report", filepath.Join(dir, "store"), "--format", "latex", "-o", tex, "--trials", "100", "--pass-rates", filepath.Join(dir, "pr.csv"), "--partial"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"t3.tex", "t3-pvalues.csv", "pr.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := execute(t, "report", spec, "--format", "docx"); err == nil {
		t.Error("no error for an unknown format")
	}
	png := filepath.Join(dir, "h.png")
	if _, err := execute(t, "plot", "heatmap", spec, "-o", png, "--partial"); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("BELUGA_EXAMPLE_HEATMAP"); out != "" {
		b, _ := os.ReadFile(png)
		os.WriteFile(out, b, 0o644)
	}
}

// A suite its task does not fit is refused before any run starts, naming
// the spec field, the suite file, the functionality and the case.
func TestRunRefusesASuiteTheTaskDoesNotFit(t *testing.T) {
	td, dir := trainTestdata(t), t.TempDir()
	spec := writeFile(t, filepath.Join(dir, "spec.yaml"), `out: store
tasks:
  - name: INTENT
    labels: [greeting, question]
    suite: `+filepath.Join(td, "intent_suite.jsonl")+`
model: {name: wordvec, options: {glove: `+filepath.Join(td, "intent_glove.txt")+`}}
configurations: [T]
scores: [seen]
`)
	_, err := execute(t, "run", spec)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"tasks[0].suite", "intent_suite.jsonl", `functionality "complaints" case 0`, `suite label "complaint"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "store")); !os.IsNotExist(err) {
		t.Errorf("the store was created: %v", err)
	}
}

// The dry-run listing tells runs apart by their grid values: a learning
// curve's sizes × seeds are no longer identical lines.
func TestDryRunListsGridValues(t *testing.T) {
	spec, err := experiments.ParseSpec([]byte("tasks: [{name: SENT, data: sst2, suite: sentiment}]\nmodel: {name: x}\nconfigurations: [IID]\nseeds: [1, 2]\ngrid: {train_size: [500, 1000], lr: [0.001]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := experiments.Expand(context.Background(), spec, &experiments.Inputs{Folds: experimentstest.FoldLister{}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := printRuns(&out, &experiments.Store{Dir: t.TempDir()}, runs, nil, spec.Grid); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "GRID") || len(lines) != 6 {
		t.Fatalf("listing:\n%s", out.String())
	}
	seen := map[string]bool{}
	for _, l := range lines[1:5] {
		f := strings.Fields(l)
		key := strings.Join(f[2:], " ") // all but ID and state
		if seen[key] {
			t.Errorf("two runs listed alike: %q", key)
		}
		seen[key] = true
		if !strings.Contains(l, "train_size=") || strings.Contains(l, "lr=") {
			t.Errorf("line %q: want the swept train_size, not the fixed lr", l)
		}
	}
}

// TestUnreadAxisDoesNotMultiplyRuns: LP-FT's probing rate swept on the
// quickstart, whose only method is vanilla, leaves its 12 runs 12 (each
// reads no probing rate), and the dry run says so; before, every run was
// listed once per value, 24 runs for 12 computations.
func TestUnreadAxisDoesNotMultiplyRuns(t *testing.T) {
	data := shareddata.Path(t, "data")
	t.Setenv("BELUGA_DATA", t.TempDir())
	b := shippedSpec(t, "quickstart.yaml")
	yaml := strings.Replace(b, "  lr: [0.001]\n", "  lr: [0.001]\n  probe_lr: [0.001, 0.0005]\n", 1)
	if yaml == b {
		t.Fatal("specs/quickstart.yaml has no grid line lr: [0.001] to add the axis after")
	}
	spec := filepath.Join(t.TempDir(), "quickstart.yaml")
	if err := os.WriteFile(spec, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := execute(t, "run", spec, "--dry-run", "--from", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if runIDLine.MatchString(line) {
			n++
		}
	}
	if n != 12 || !strings.Contains(out, "12 runs into") {
		t.Errorf("%d runs listed, want 12:\n%s", n, out)
	}
	if !strings.Contains(out, "grid probe_lr: read by no run") {
		t.Errorf("the listing does not say that no run reads probe_lr:\n%s", out)
	}
}
