package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/metrics"
)

// TestTestData: beluga test --data measures the user's labelled data with
// the model beside the suite: the accuracy, per-class scores, confusion
// matrix and calibration in calibration.json equal metrics' on beluga
// predict's probabilities mapped by hand ([POSITIVE, NEGATIVE] → the
// suite's [negative, positive]); labels are names or indices; the suite's
// labelled inputs are calibrated per test; and a label the suite does not
// have is refused with its line before anything is written.
func TestTestData(t *testing.T) {
	model := filepath.Join("..", "..", "models", "testdata", "hfsaved", "classifier")
	suitePath := filepath.Join("..", "..", "train", "testdata", "tiny_suite.jsonl")
	dir := t.TempDir()
	rows := [][2]string{{"good", "positive"}, {"awful", "negative"}, {"a great film", "1"}, {"not good at all", "0"},
		{"terrible acting", "negative"}, {"I loved it", "positive"}, {"boring", "negative"}, {"fine", "positive"}}
	var tsv strings.Builder
	var texts []string
	tsv.WriteString("sentence\tgold\n")
	for _, r := range rows {
		tsv.WriteString(r[0] + "\t" + r[1] + "\n")
		texts = append(texts, r[0])
	}
	data := writeFile(t, filepath.Join(dir, "dev.tsv"), tsv.String())
	b := readFile(t, predictFile(t, nil, model, textInputs(texts)))
	var preds []metrics.Prediction
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		p, err := parsePredictLine(line)
		if err != nil {
			t.Fatal(err)
		}
		preds = append(preds, p)
	}
	gold := []int{1, 0, 1, 0, 0, 1, 0, 1}
	want, err := metrics.MeasureLabelled("dev.tsv", []string{"negative", "positive"}, preds, gold, 10)
	if err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "test")
	code, msg := beluga(t, "test", "--model", model, "--suite", suitePath, "--data", data, "--data-text", "sentence", "--data-label", "gold", "-o", out)
	if code != 0 {
		t.Fatalf("test: exit %d: %s", code, msg)
	}
	if !strings.Contains(msg, "your data (dev.tsv): 8 examples") {
		t.Errorf("the output does not give the data's measures:\n%s", msg)
	}
	var got struct {
		Data *struct {
			Classification struct {
				N         int
				Accuracy  float64
				MacroF1   float64 `json:"macro_f1"`
				Confusion [][]int
				Classes   []struct{ Precision, Recall float64 }
			}
			Width struct{ ECE, Brier float64 } `json:"calibration_width"`
			Mass  struct{ ECE float64 }        `json:"calibration_mass"`
		}
		Tests []struct {
			Functionality string
			Calibration   struct{ N int }
		}
		Passing, Failing int
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, "calibration.json")), &got); err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 } // float32 probabilities, printed shortest
	d := got.Data
	if d == nil || d.Classification.N != 8 || !near(d.Classification.Accuracy, want.Accuracy) || !near(d.Classification.MacroF1, want.MacroF1) ||
		!near(d.Width.ECE, want.Width.ECE) || !near(d.Mass.ECE, want.Mass.ECE) || !near(d.Width.Brier, want.Width.Brier) {
		t.Fatalf("calibration.json data %+v, by hand %+v", d, want)
	}
	for g := range 2 {
		for p := range 2 {
			if d.Classification.Confusion[g][p] != want.Confusion[g][p] {
				t.Errorf("confusion[%d][%d] = %d, by hand %d", g, p, d.Classification.Confusion[g][p], want.Confusion[g][p])
			}
		}
		if !near(d.Classification.Classes[g].Recall, want.Classes[g].Recall) || !near(d.Classification.Classes[g].Precision, want.Classes[g].Precision) {
			t.Errorf("class %d: %+v, by hand %+v", g, d.Classification.Classes[g], want.Classes[g])
		}
	}
	if len(got.Tests) < 2 || got.Tests[0].Functionality != metrics.AllLabelledInputs || got.Passing+got.Failing == 0 {
		t.Errorf("suite calibration %+v, %d passing, %d failing", got.Tests, got.Passing, got.Failing)
	}
	for _, name := range []string{"calibration.md", "calibration.png", "data_predictions.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	// The test report read back from the folder carries the section.
	code, msg = beluga(t, "report", out, "--format", "md")
	if code != 0 || !strings.Contains(msg, "## Calibration\n\n### Your data: dev.tsv\n\n8 labelled examples") || !strings.Contains(msg, "Worst test: ") {
		t.Errorf("report --format md of the test folder: exit %d\n%s", code, msg)
	}

	bad := filepath.Join(dir, "bad.tsv")
	os.WriteFile(bad, []byte("text\tlabel\ngood\tpositive\nmeh\tmixed\n"), 0o644)
	out2 := filepath.Join(dir, "test2")
	code, msg = beluga(t, "test", "--model", model, "--suite", suitePath, "--data", bad, "-o", out2)
	if code != 1 || !strings.Contains(msg, "bad.tsv") || !strings.Contains(msg, "line 3") || !strings.Contains(msg, "mixed") {
		t.Errorf("a bad label: exit %d, %s", code, msg)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Errorf("%s written after a bad --data file", out2)
	}
}

// parsePredictLine reads a beluga predict line's probabilities in the
// model's class order [POSITIVE, NEGATIVE] as the suite's [negative,
// positive], as beluga test maps them.
func parsePredictLine(line string) (metrics.Prediction, error) {
	var o struct {
		Probs []float32 `json:"probs"`
	}
	if err := json.Unmarshal([]byte(line), &o); err != nil {
		return metrics.Prediction{}, err
	}
	p := []float64{float64(o.Probs[1]), float64(o.Probs[0])}
	c := 0
	if p[1] > p[0] {
		c = 1
	}
	return metrics.Prediction{Class: c, Probs: p}, nil
}

// TestTestDataHeaderlessTSV: beluga test --data reads a headerless TSV by
// position (--data-columns, the reader's columns), a text that begins with
// " verbatim, and refuses under --data-quoted the quote that would run
// over lines, naming the line; without --data-columns the first row is
// the header, and the text column is missing.
func TestTestDataHeaderlessTSV(t *testing.T) {
	model := filepath.Join("..", "..", "models", "testdata", "hfsaved", "classifier")
	suitePath := filepath.Join("..", "..", "train", "testdata", "tiny_suite.jsonl")
	dir := t.TempDir()
	data := filepath.Join(dir, "germeval.tsv")
	os.WriteFile(data, []byte("1\tpositive\tgood\n2\tnegative\t\"awful\" they said\n3\t1\ta great film\n4\tnegative\tboring\n"), 0o644)
	out := filepath.Join(dir, "test")
	code, msg := beluga(t, "test", "--model", model, "--suite", suitePath, "--data", data, "--data-columns", "-,label,text", "-o", out)
	if code != 0 || !strings.Contains(msg, "your data (germeval.tsv): 4 examples") {
		t.Fatalf("headerless --data with --data-columns: exit %d\n%s", code, msg)
	}
	code, msg = beluga(t, "test", "--model", model, "--suite", suitePath, "--data", data, "-o", filepath.Join(dir, "t2"))
	if code != 1 || !strings.Contains(msg, "germeval.tsv") || !strings.Contains(msg, "text") {
		t.Errorf("headerless --data without --data-columns: exit %d\n%s", code, msg)
	}
	code, msg = beluga(t, "test", "--model", model, "--suite", suitePath, "--data", data, "--data-columns", "-,label,text", "--data-quoted", "-o", filepath.Join(dir, "t3"))
	if code != 1 || !strings.Contains(msg, "germeval.tsv line 2") {
		t.Errorf("--data-quoted on a quote that runs on: exit %d\n%s", code, msg)
	}
	if code, msg := beluga(t, "test", "--help"); code != 0 || !strings.Contains(msg, "--data-columns") || !strings.Contains(msg, "--data-quoted") {
		t.Errorf("--help: exit %d\n%s", code, msg)
	}
}
