package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

// caseVerdicts reads a case file's verdicts by "functionality/case".
func caseVerdicts(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var c struct {
			Functionality string `json:"functionality"`
			Case          int    `json:"case"`
			Verdict       string `json:"verdict"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%s/%d", c.Functionality, c.Case)] = c.Verdict
	}
	return out
}

// TestTestMatchesPredictAndEval: beluga test on a fine-tuned-style
// classifier whose id2label lists its classes in the other order than the
// suite's (0 POSITIVE, 1 NEGATIVE; the suite's model_labels are negative,
// positive) gives, case for case, the verdicts of beluga predict followed
// by beluga eval on the predictions mapped by hand — and the unmapped
// predictions give other verdicts, so a wrong match would show.
func TestTestMatchesPredictAndEval(t *testing.T) {
	model := filepath.Join("..", "..", "models", "testdata", "hfsaved", "classifier")
	suitePath := filepath.Join("..", "..", "train", "testdata", "tiny_suite.jsonl")
	dir := t.TempDir()
	s, err := suites.Open(suitePath)
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for _, f := range s.Functionalities {
		for _, c := range f.Cases {
			for _, x := range c.Inputs {
				line, _ := json.Marshal(map[string]string{"text": x.Text})
				in.Write(append(line, '\n'))
			}
		}
	}
	inputs := filepath.Join(dir, "inputs.jsonl")
	os.WriteFile(inputs, []byte(in.String()), 0o644)
	preds := filepath.Join(dir, "preds.jsonl")
	if code, msg := beluga(t, "predict", "--model", model, "--input", inputs, "-o", preds); code != 0 {
		t.Fatalf("predict: exit %d: %s", code, msg)
	}
	// By hand: the model's [POSITIVE, NEGATIVE] become the suite's
	// [negative, positive]; and, for contrast, left as they are.
	b, err := os.ReadFile(preds)
	if err != nil {
		t.Fatal(err)
	}
	var mapped, unmapped strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var o struct {
			Probs []json.Number `json:"probs"`
		}
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&mapped, "%s %s\n", o.Probs[1], o.Probs[0])
		fmt.Fprintf(&unmapped, "%s %s\n", o.Probs[0], o.Probs[1])
	}
	verdicts := func(name, lines string) map[string]string {
		p := filepath.Join(dir, name+".txt")
		os.WriteFile(p, []byte(lines), 0o644)
		cases := filepath.Join(dir, name+"-cases.jsonl")
		if code, msg := beluga(t, "eval", "--suite", suitePath, "--predictions", p, "--predictions-format", "softmax",
			"-o", filepath.Join(dir, name+"-results.json"), "--cases", cases); code != 0 {
			t.Fatalf("eval: exit %d: %s", code, msg)
		}
		return caseVerdicts(t, cases)
	}
	byHand, wrong := verdicts("mapped", mapped.String()), verdicts("unmapped", unmapped.String())
	out := filepath.Join(dir, "test")
	code, msg := beluga(t, "test", "--model", model, "--suite", suitePath, "-o", out)
	if code != 0 {
		t.Fatalf("test: exit %d: %s", code, msg)
	}
	if !strings.Contains(msg, "POSITIVE → positive, NEGATIVE → negative") {
		t.Errorf("the output does not say how the labels were matched:\n%s", msg)
	}
	got := caseVerdicts(t, filepath.Join(out, "cases.jsonl"))
	if len(got) != len(byHand) || len(got) == 0 {
		t.Fatalf("%d verdicts, predict + eval gives %d", len(got), len(byHand))
	}
	differ, counts := 0, map[string]int{}
	for k, v := range byHand {
		counts[v]++
		if got[k] != v {
			t.Errorf("case %s: beluga test %s, predict + eval by hand %s", k, got[k], v)
		}
		if wrong[k] != v {
			differ++
		}
	}
	t.Logf("%d cases, verdicts %v, equal to predict + eval with the hand mapping; %d differ without the mapping", len(got), counts, differ)
	if counts["pass"] == 0 || counts["fail"] == 0 || differ == 0 {
		t.Errorf("verdicts %v, %d changed by the mapping: the fixture cannot tell a right match from a wrong one", counts, differ)
	}
	for _, name := range []string{"results.json", "predictions.jsonl", "labels.json", "table.txt", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestTestRefusesUnmatchedLabels: labels that match none of the suite's are
// refused with both lists and no output; --label-map matches them.
func TestTestRefusesUnmatchedLabels(t *testing.T) {
	model := filepath.Join("..", "..", "models", "testdata", "hfsaved", "classifier")
	suitePath := filepath.Join("..", "..", "suites", "testdata", "mhc_tiny.csv")
	out := filepath.Join(t.TempDir(), "out")
	code, msg := beluga(t, "test", "--model", model, "--suite", suitePath, "-o", out)
	if code != 1 || !strings.Contains(msg, `the model's labels ["POSITIVE", "NEGATIVE"] cannot be matched to the suite's classes ["non-hateful", "hateful"]`) {
		t.Errorf("exit %d: %s", code, msg)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an output directory was written")
	}
	if code, msg := beluga(t, "test", "--model", model, "--suite", suitePath, "-o", out, "--label-map", "POSITIVE=non-hateful,negative=Hateful"); code != 0 {
		t.Errorf("with --label-map: exit %d: %s", code, msg)
	}
}

// testFolder runs beluga test on the shipped fixture classifier (reversed
// id2label) and the tiny suite into a fresh folder, and returns it with
// the command's output.
func testFolder(t *testing.T, extra ...string) (string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "test")
	args := append([]string{"test", "--model", filepath.Join("..", "..", "models", "testdata", "hfsaved", "classifier"),
		"--suite", filepath.Join("..", "..", "train", "testdata", "tiny_suite.jsonl"), "-o", out}, extra...)
	code, msg := beluga(t, args...)
	if code != 0 {
		t.Fatalf("test: exit %d: %s", code, msg)
	}
	return out, msg
}

// The folder beluga test writes is read by beluga failures, and test says
// so.
func TestFailuresReadsATestFolder(t *testing.T) {
	out, msg := testFolder(t)
	if !strings.Contains(msg, "beluga failures "+out) {
		t.Errorf("test does not point to beluga failures:\n%s", msg)
	}
	code, got := beluga(t, "failures", out)
	if code != 0 {
		t.Fatalf("failures %s: exit %d: %s", out, code, got)
	}
	if !strings.Contains(got, "not negative (Negation, MFT): 2 of 2 scored cases failed") {
		t.Errorf("failures on the test folder:\n%s", got)
	}
}
