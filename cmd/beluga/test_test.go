package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/modeltest"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/report/explore"
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
	preds := predictFile(t, nil, model, textInputs(suiteTexts(t, suitePath)))
	// By hand: the model's [POSITIVE, NEGATIVE] become the suite's
	// [negative, positive]; and, for contrast, left as they are.
	b := readFile(t, preds)
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
	for _, name := range []string{"results.json", "predictions.jsonl", "test.json", "table.txt", "report.html"} {
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

// beluga report (Markdown and HTML) and serve read the folder beluga test
// wrote as its test report.
func TestReportAndServeReadATestFolder(t *testing.T) {
	out, _ := testFolder(t)
	code, md := beluga(t, "report", out)
	if code != 0 {
		t.Fatalf("report %s: exit %d: %s", out, code, md)
	}
	for _, want := range []string{"| not negative | Negation | MFT | 2 | 0 | 2 | 100.0% |", "## Fail rates by capability and test type",
		"| Negation | 100.0% (1) |  |  |", "Suite score: 80.0% — mean pass rate (100 − fail rate) over 5 of 5 tests"} {
		if !strings.Contains(md, want) {
			t.Errorf("report --format md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Table 3") || strings.Contains(md, "baseline") {
		t.Errorf("the test report talks of Table 3 or baselines:\n%s", md)
	}
	page := filepath.Join(t.TempDir(), "page.html")
	if code, msg := beluga(t, "report", out, "--format", "html", "-o", page); code != 0 {
		t.Fatalf("report --format html: exit %d: %s", code, msg)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), `id="beluga-cases-4"`) {
		t.Errorf("the page lacks the cases (%v)", err)
	}
	resp, err := http.Get(serveURL(t, out) + "api/view")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var view struct {
		Test struct {
			Tests []struct {
				Name  string `json:"name"`
				Stats []struct {
					FailRate *float64 `json:"fail_rate"`
				} `json:"stats"`
			} `json:"tests"`
		} `json:"test"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&view); err != nil {
		t.Fatal(err)
	}
	if ts := view.Test.Tests; len(ts) != 5 || ts[2].Name != "not negative" || ts[2].Stats[0].FailRate == nil || *ts[2].Stats[0].FailRate != 100 {
		t.Errorf("served test report: %+v", ts)
	}
}

// --n 2 --seed 1 scores, of every test, the cases CheckList's
// suite.run(n=2, seed=1) runs, and the report says so.
func TestTestSamplesAsCheckList(t *testing.T) {
	out, msg := testFolder(t, "--n", "2", "--seed", "1")
	if !strings.Contains(msg, "cases scored: CheckList's sampling: at most 2 cases per test, drawn as suite.run(n=2, seed=1) draws them") {
		t.Errorf("the output does not say how cases were sampled:\n%s", msg)
	}
	got := caseVerdicts(t, filepath.Join(out, "cases.jsonl"))
	s, err := suites.Open(filepath.Join("..", "..", "train", "testdata", "tiny_suite.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, f := range s.Functionalities {
		for _, k := range modeltest.CheckListSample(len(f.Cases), 2, 1) {
			want++
			if _, ok := got[fmt.Sprintf("%s/%d", f.Name, f.Cases[k].ID)]; !ok {
				t.Errorf("%s: case at position %d, drawn by CheckList, not scored", f.Name, k)
			}
		}
	}
	if len(got) != want {
		t.Errorf("%d cases scored, CheckList's draw has %d", len(got), want)
	}
}

// --split on a suite without splits computes BeLUGA's and says so.
func TestTestSaysItComputesTheSplit(t *testing.T) {
	code, msg := beluga(t, "test", "--model", filepath.Join("..", "..", "models", "testdata", "hfsaved", "classifier"),
		"--suite", filepath.Join("..", "..", "suites", "testdata", "mhc_tiny.csv"), "--label-map", "POSITIVE=non-hateful,NEGATIVE=hateful",
		"--split", "test", "-o", filepath.Join(t.TempDir(), "out"))
	if code != 0 || !strings.Contains(msg, "carries no split; computing BeLUGA's split") {
		t.Errorf("test --split test on an unsplit suite:\n%s", msg)
	}
}

// beluga test compare on two shipped fixture models gives per test both
// fail rates, the flips and McNemar's p equal to scipy's binomtest
// (testdata/testcompare/mcnemar.json, written by mcnemar_scipy.py), and
// its page has both models' columns.
func TestTestCompareMatchesScipy(t *testing.T) {
	suite := filepath.Join("testdata", "testcompare", "suite.jsonl")
	dirs := make([]string, 2)
	for i, m := range []string{"classifier", "electra"} {
		dirs[i] = filepath.Join(t.TempDir(), m)
		if code, msg := beluga(t, "test", "--model", filepath.Join("..", "..", "models", "testdata", "hfsaved", m), "--suite", suite, "-o", dirs[i]); code != 0 {
			t.Fatalf("test %s: exit %d: %s", m, code, msg)
		}
	}
	b, err := os.ReadFile(filepath.Join("testdata", "testcompare", "mcnemar.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]struct {
		AOnly int     `json:"a_only"`
		BOnly int     `json:"b_only"`
		P     float64 `json:"p"`
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	r, _, err := report.ReadTestReport(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range r.Tests {
		g, ok := golden[row.Name]
		if !ok || row.P == nil || math.Abs(*row.P-g.P) > 1e-12*math.Max(g.P, 1e-300) || row.Flips != g.AOnly+g.BOnly || row.Q == nil {
			t.Errorf("%s: p %v q %v flips %d, scipy p %v over %d flips", row.Name, row.P, row.Q, row.Flips, g.P, g.AOnly+g.BOnly)
		}
	}
	code, out := beluga(t, "test", "compare", dirs[0], dirs[1])
	if code != 0 || !strings.Contains(out, "Vocabulary  MFT   120  41       62       34.2%        51.7%        +17.5  0.0295  0.0884  85     sentiment words in context") {
		t.Errorf("compare: exit %d:\n%s", code, out)
	}
	code, md := beluga(t, "test", "compare", dirs[0], dirs[1], "--format", "md")
	if i, j := strings.Index(md, "passed by"), strings.Index(md, "### change names"); code != 0 || i < 0 || j < 0 {
		t.Errorf("compare --format md lists no flips first:\n%s", md)
	}
	page := filepath.Join(t.TempDir(), "compare.html")
	if code, msg := beluga(t, "test", "compare", dirs[0], dirs[1], "--format", "html", "-o", page); code != 0 {
		t.Fatalf("compare --format html: exit %d: %s", code, msg)
	}
	src, err := explore.FromTestDirs(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := src.Cases(1)
	if err != nil || cs.Runs["A"] == nil || cs.Runs["B"] == nil {
		t.Errorf("the page's cases lack a model's column: %v", err)
	}
}

// beluga -v test reports what it loaded: weights file, dtype, buffers,
// tokenizer, maximum length and labels.
func TestTestVerboseReportsTheLoad(t *testing.T) {
	_, msg := testFolder(t, "-v")
	for _, want := range []string{`msg="loaded model"`, "weights=pytorch_model.bin", "config_torch_dtype=float32", "buffers_checked=[bert.embeddings.position_ids]",
		"tokenizer=*tokenize.WordPiece", "max_length=128", `labels="[POSITIVE NEGATIVE]"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("-v output lacks %s:\n%s", want, msg)
		}
	}
}
