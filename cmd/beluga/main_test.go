package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// The test binary doubles as the beluga command: with BELUGA_RUN_MAIN set it
// runs main, so tests can check exit statuses and output files end to end.
func TestMain(m *testing.M) {
	if os.Getenv("BELUGA_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	// A data cache of the tests' own (the digests commands remember are
	// kept there), never the user's.
	if os.Getenv("BELUGA_DATA") == "" {
		dir, err := os.MkdirTemp("", "beluga-test-data-")
		if err != nil {
			panic(err)
		}
		os.Setenv("BELUGA_DATA", dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
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
	want := "class,functionality,type,cases,inputs,label:negative,label:neutral,label:positive\nVocabulary,my words,MFT,2,2,"
	if !strings.HasPrefix(msg, want) {
		t.Errorf("stats csv =\n%s\nwant prefix\n%s", msg, want)
	}
}

func TestEvalTinySuite(t *testing.T) {
	dir := t.TempDir()
	// testdata/tiny.jsonl: 2 + 1 + 2 + 2 + 1 + 2 = 10 inputs in suite order.
	preds := "0.1 0.9\n0.2 0.8\n0.4 0.6\n0.1 0.9\n0.12 0.88\n0.1 0.9\n0.05 0.95\n0.3 0.7\n0.5 0.5\n0.5 0.5\n"
	good := filepath.Join(dir, "preds.txt")
	os.WriteFile(good, []byte(preds), 0o644)
	out := filepath.Join(dir, "results.json")
	code, msg := beluga(t, "eval", "--suite", "../../suites/testdata/tiny.jsonl", "--predictions", good, "--format", "softmax", "-o", out)
	if code != 0 {
		t.Fatalf("eval failed (%d): %s", code, msg)
	}
	for _, want := range []string{"single positive words", "100.0%", "suite score"} {
		if !strings.Contains(msg, want) {
			t.Errorf("table lacks %q:\n%s", want, msg)
		}
	}
	tests := []struct{ name, text, want string }{
		{"too few lines", "0.1 0.9\n", "1 predictions for 10 scored inputs"},
		{"not a number", strings.Replace(preds, "0.4 0.6", "0.4 abc", 1), "line 3 field probability 1"},
		{"bad sum", strings.Replace(preds, "0.4 0.6", "0.4 0.7", 1), "line 3 field probabilities: sum to 1.1"},
		{"too many lines", preds + "0.5 0.5\n", "line 11: more predictions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".txt")
			os.WriteFile(bad, []byte(tc.text), 0o644)
			res := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			code, msg := beluga(t, "eval", "--suite", "../../suites/testdata/tiny.jsonl", "--predictions", bad, "--format", "softmax", "-o", res)
			if code != 1 || !strings.Contains(msg, tc.want) || !strings.Contains(msg, bad) {
				t.Errorf("exit %d, message %q; want 1 naming %s and %q", code, msg, bad, tc.want)
			}
			if _, err := os.Stat(res); !os.IsNotExist(err) {
				t.Errorf("results written despite the error")
			}
		})
	}
}

func TestPredictFixture(t *testing.T) {
	exp := fixture.Load(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	var lines []string
	for _, p := range exp.Pairs[:5] {
		b, _ := json.Marshal(map[string]string{"text": p.A, "text_pair": p.B})
		lines = append(lines, string(b))
	}
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	out := filepath.Join(dir, "out.jsonl")
	code, msg := beluga(t, "predict", "--model", fixture.Dir(t), "--input", in, "--output", out, "--max-length", strconv.Itoa(exp.MaxLength))
	if code != 0 {
		t.Fatalf("predict failed (%d): %s", code, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(got) != 5 {
		t.Fatalf("%d output lines, want 5", len(got))
	}
	for i, line := range got {
		var o struct {
			InputIDs []int     `json:"input_ids"`
			Logits   []float64 `json:"logits"`
		}
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatal(err)
		}
		for k, w := range exp.Pairs[i].Logits {
			if math.Abs(o.Logits[k]-w) > 1e-4 {
				t.Errorf("pair %d logit %d = %g, HuggingFace %g", i, k, o.Logits[k], w)
			}
		}
		if len(o.InputIDs) != len(exp.Pairs[i].InputIDs) {
			t.Errorf("pair %d: %d input ids, want %d", i, len(o.InputIDs), len(exp.Pairs[i].InputIDs))
		}
	}
}

func TestPredictMLMCheckpointReportsKeys(t *testing.T) {
	mlm := shareddata.Path(t, "fixtures/bert-tiny-mlm.tar.gz")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(`{"text": "a fine film"}`+"\n"), 0o644)
	code, msg := beluga(t, "predict", "--model", mlm, "--input", in, "--output", filepath.Join(dir, "out.jsonl"))
	if code != 0 {
		t.Fatalf("predict failed (%d): %s", code, msg)
	}
	for _, want := range []string{"ignored", "cls.predictions", "newly initialised", "bert.pooler.dense.weight", "classifier.weight"} {
		if !strings.Contains(msg, want) {
			t.Errorf("log lacks %q:\n%s", want, msg)
		}
	}
}

func TestTrainFromYAMLWithFlagOverride(t *testing.T) {
	dir := t.TempDir()
	spec := `task: sentiment
suite: ../../train/testdata/tiny_suite.jsonl
iid_train: ../../train/testdata/tiny_train.tsv
iid_dev: ../../train/testdata/tiny_dev.tsv
model: {kind: wordvec, glove: ../../train/testdata/tiny_glove.txt, hidden: 8}
configuration: iid
method: vanilla
hyper: {epochs: 1, batch_size: 4, lr: 0.01}
iid_hyper: {epochs: 1, batch_size: 4, lr: 0.01}
max_length: 16
seed: 3
`
	path := filepath.Join(dir, "run.yaml")
	os.WriteFile(path, []byte(spec), 0o644)
	out := filepath.Join(dir, "run")
	code, msg := beluga(t, "train", "--spec", path, "--iid-epochs", "2", "--out", out)
	if code != 0 {
		t.Fatalf("train failed (%d): %s", code, msg)
	}
	if !strings.Contains(msg, "(4 steps") {
		t.Errorf("output %q: want 4 steps (2 epochs from the flag over the file's 1)", msg)
	}
	if _, err := os.Stat(filepath.Join(out, "done")); err != nil {
		t.Error("no done marker")
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte(spec+"learning_rate: 3\n"), 0o644)
	if code, msg := beluga(t, "train", "--spec", bad, "--out", filepath.Join(dir, "bad")); code != 1 || !strings.Contains(msg, "learning_rate") {
		t.Errorf("unknown YAML field: exit %d, %q", code, msg)
	}
}

func TestTrainSearchAndHyperFrom(t *testing.T) {
	dir := t.TempDir()
	args := []string{"train", "--suite", "../../train/testdata/tiny_suite.jsonl", "--iid-train", "../../train/testdata/tiny_train.tsv",
		"--iid-dev", "../../train/testdata/tiny_dev.tsv", "--model-kind", "wordvec", "--glove", "../../train/testdata/tiny_glove.txt",
		"--hidden", "8", "--configuration", "iid+t", "--max-length", "16"}
	full := filepath.Join(dir, "full")
	code, msg := beluga(t, append(args, "--search", "--grid-lr", "0.001,0.05", "--grid-batch-size", "4", "--grid-epochs", "1", "--out", full)...)
	if code != 0 || !strings.Contains(msg, "from 2 trials on T_val") {
		t.Fatalf("search run (%d): %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(full, "hp_search.json")); err != nil {
		t.Error("no hp_search.json")
	}
	held := filepath.Join(dir, "held")
	if code, msg := beluga(t, append(args, "--held-out", "type:DIR", "--hyper-from", full, "--out", held)...); code != 0 {
		t.Fatalf("held-out run (%d): %s", code, msg)
	}
	// The held-out run trains with what the full run's search chose, not
	// with the defaults the full run's spec.json was written with before
	// its search.
	a, _ := os.ReadFile(filepath.Join(full, "hp_search.json"))
	b, _ := os.ReadFile(filepath.Join(held, "spec.json"))
	var sa struct{ Chosen json.RawMessage }
	var sb struct{ Hyper json.RawMessage }
	json.Unmarshal(a, &sa)
	json.Unmarshal(b, &sb)
	if sa.Chosen == nil || string(sa.Chosen) != string(sb.Hyper) {
		t.Errorf("held-out run hyper %s, want the full run's search's choice %s", sb.Hyper, sa.Chosen)
	}
	// A run directory that is not done lends no hyper-parameters.
	if code, msg := beluga(t, append(args, "--hyper-from", filepath.Join(dir, "none"), "--out", filepath.Join(dir, "held2"))...); code != 1 || !strings.Contains(msg, "--hyper-from: run directory") {
		t.Errorf("--hyper-from a missing run: exit %d, %q", code, msg)
	}
}
