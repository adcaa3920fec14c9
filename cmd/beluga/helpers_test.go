package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/suites"
)

// loadRuns expands a spec as beluga run does (datasets through the data
// cache, files taken from fromDir when set; nothing downloaded).
func loadRuns(spec, fromDir string) (*experiments.Spec, []experiments.Run, error) {
	in, err := newInputs(fromDir, true)
	if err != nil {
		return nil, nil, err
	}
	sw, err := experiments.OpenSweep(context.Background(), spec, "", in)
	if err != nil {
		return nil, nil, err
	}
	return sw.Spec, sw.Runs, nil
}

// storeOf is a spec's run store.
func storeOf(spec *experiments.Spec) *experiments.Store {
	return &experiments.Store{Dir: spec.OutDir()}
}

// sweepOf is the store and runs of a spec or store directory, as the
// commands that read a store see them.
func sweepOf(arg, store string) (*experiments.Store, []experiments.Run, error) {
	sw, err := openSweep(context.Background(), io.Discard, arg, store)
	if err != nil {
		return nil, nil, err
	}
	return sw.Store, sw.Runs, nil
}

// trainTestdata is package train's fixtures directory (tiny word vectors,
// the INTENT suite and data), absolute.
func trainTestdata(t testing.TB) string {
	t.Helper()
	td, err := filepath.Abs("../../train/testdata")
	if err != nil {
		t.Fatal(err)
	}
	return td
}

// writeFile writes text to path and returns the path.
func writeFile(t testing.TB, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// copyFile copies the file src to dst.
func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	writeFile(t, dst, string(readFile(t, src)))
}

// shippedSpec is the text of specs/NAME.
func shippedSpec(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "specs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readFile is a file's bytes.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readCSV reads a CSV file whole.
func readCSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// predictInput is a line of beluga predict's --input.
type predictInput struct {
	Text     string  `json:"text"`
	TextPair *string `json:"text_pair,omitempty"`
}

// textInputs are predict inputs of one text each.
func textInputs(texts []string) []predictInput {
	inputs := make([]predictInput, len(texts))
	for i, s := range texts {
		inputs[i] = predictInput{Text: s}
	}
	return inputs
}

// writeInputs writes inputs as predict's JSONL --input file and returns
// its path.
func writeInputs(t testing.TB, path string, inputs []predictInput) string {
	t.Helper()
	var b strings.Builder
	for _, x := range inputs {
		line, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	return writeFile(t, path, b.String())
}

// prediction is a line of beluga predict's output.
type prediction struct {
	InputIDs []int     `json:"input_ids"`
	Logits   []float64 `json:"logits"`
}

// readPredictions reads beluga predict's output.
func readPredictions(t testing.TB, path string) []prediction {
	t.Helper()
	var preds []prediction
	for i, line := range strings.Split(strings.TrimSpace(string(readFile(t, path))), "\n") {
		var p prediction
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		preds = append(preds, p)
	}
	return preds
}

// runPredict runs beluga predict, in a process of its own with env added to
// its environment, on inputs and returns its predictions; a non-zero exit
// fails the test.
func runPredict(t *testing.T, env []string, model string, inputs []predictInput, args ...string) []prediction {
	t.Helper()
	return readPredictions(t, predictFile(t, env, model, inputs, args...))
}

// predictFile is runPredict's output file, unread.
func predictFile(t *testing.T, env []string, model string, inputs []predictInput, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	in, out := writeInputs(t, filepath.Join(dir, "in.jsonl"), inputs), filepath.Join(dir, "out.jsonl")
	code, msg := belugaEnv(t, env, append([]string{"predict", "--model", model, "--input", in, "-o", out}, args...)...)
	if code != 0 {
		t.Fatalf("predict --model %s: exit %d: %s", model, code, msg)
	}
	return out
}

// suiteTexts are the texts of a suite's inputs, case by case in suite
// order: the order beluga eval reads predictions in when no split is
// chosen.
func suiteTexts(t *testing.T, path string) []string {
	t.Helper()
	s, err := suites.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, f := range s.Functionalities {
		for _, c := range f.Cases {
			for _, in := range c.Inputs {
				texts = append(texts, in.Text)
			}
		}
	}
	return texts
}

// checkPredictions fails the test unless got holds a prediction for each
// row of logits, each within 1e-4 of it, with the ids of ids where ids is
// given; ref names where the expected figures come from.
func checkPredictions(t *testing.T, got []prediction, ids [][]int, logits [][]float64, ref string) {
	t.Helper()
	if len(got) != len(logits) {
		t.Fatalf("%d predictions for %d inputs", len(got), len(logits))
	}
	worst := 0.0
	for i, p := range got {
		if ids != nil && !slices.Equal(p.InputIDs, ids[i]) {
			t.Errorf("input %d: ids %v, %s %v", i+1, p.InputIDs, ref, ids[i])
		}
		if len(p.Logits) != len(logits[i]) {
			t.Errorf("input %d: %d logits, %s %d", i+1, len(p.Logits), ref, len(logits[i]))
			continue
		}
		for k, w := range logits[i] {
			worst = math.Max(worst, math.Abs(p.Logits[k]-w))
		}
	}
	t.Logf("%d inputs, max |logit − %s| = %.2g", len(got), ref, worst)
	if worst > 1e-4 {
		t.Errorf("logits off %s by up to %.3g, want ≤ 1e-4", ref, worst)
	}
}

// hubCommit is the commit the tests' hub caches hold their models at.
const hubCommit = "0123456789abcdef0123456789abcdef01234567"

// offlineHub lays src's files (all of a checkpoint's when none are named)
// out as model repo in the hub cache of a new HuggingFace home, and returns
// the environment under which beluga reads that home offline. Nothing
// listens on the endpoint: a request would fail the run.
func offlineHub(t *testing.T, repo, src string, files ...string) []string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "hf")
	hubCacheCopy(t, filepath.Join(home, "hub"), repo, hubCommit, src, files...)
	return []string{"HF_HOME=" + home, "HF_HUB_CACHE=", "HF_HUB_OFFLINE=1", "HF_ENDPOINT=http://127.0.0.1:1"}
}
