package newtesttype

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

// DEC is CheckList's Expect.monotonic(label, increasing=False): adding the
// perturbation must not make the original's class more likely. Everything
// beluga needs to know about it is in the two registrations below.
const DEC suites.TestType = "DEC"

var decColour = color.RGBA{0x99, 0x33, 0xcc, 0xff}

func init() {
	if err := suites.RegisterTestType(suites.TypeSpec{
		Name:   DEC,
		Legend: "DEC",
		Paired: true, Directional: true,
		Expect: suites.Expectation{Kind: suites.ExpectMonotonic, Tolerance: 0.1,
			Direction: "not_more_confident", Agg: suites.AggAllExceptFirst},
		Colour:    decColour,
		Violation: func(v float64) string { return fmt.Sprintf("original's class rose by %.3f", v) },
	}); err != nil {
		panic(err)
	}
	if err := train.RegisterTestType(DEC, train.TypeTraining{Kind: train.KindDIR, Direction: "not_more_conf"}); err != nil {
		panic(err)
	}
}

// decLines are a functionality of the new type, in lower case as a file may
// spell it, with neither an expectation nor a training rule: both come from
// the registrations.
var decLines = []string{
	`{"class": "Politeness", "functionality": "add sorry", "type": "dec", "id": 0, "inputs": ["can you help ?", "sorry can you help ?"], "split": "train"}`,
	`{"class": "Politeness", "functionality": "add sorry", "type": "dec", "id": 1, "inputs": ["hello", "sorry hello"], "split": "train"}`,
	`{"class": "Politeness", "functionality": "add sorry", "type": "dec", "id": 2, "inputs": ["my order is late", "sorry my order is late"], "split": "train"}`,
	`{"class": "Politeness", "functionality": "add sorry", "type": "dec", "id": 3, "inputs": ["what is the price ?", "sorry what is the price ?"], "split": "validation"}`,
	`{"class": "Politeness", "functionality": "add sorry", "type": "dec", "id": 4, "inputs": ["hi", "sorry hi"], "split": "test"}`,
	`{"class": "Politeness", "functionality": "add sorry", "type": "dec", "id": 5, "inputs": ["nobody answers", "sorry nobody answers"], "split": "test"}`,
}

// A type added through the registries alone imports, trains (as DIR pairs
// with its own direction), scores (with its own expectation), reports and
// is drawn in its own colour.
func TestNewTypeEndToEnd(t *testing.T) {
	td, err := filepath.Abs("../../train/testdata")
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile(filepath.Join(td, "intent_suite.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	suitePath := filepath.Join(dir, "intent_dec.jsonl")
	if err := os.WriteFile(suitePath, append(base, []byte(strings.Join(decLines, "\n")+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}

	// Import: the type parses, its functionality gets the registered
	// expectation, and the suite's statistics count it.
	s, err := suites.Read(bytes.NewReader(append(base, []byte(strings.Join(decLines, "\n")+"\n")...)), suitePath)
	if err != nil {
		t.Fatal(err)
	}
	f := s.Functionality("add sorry")
	if f == nil || f.Type != DEC || f.Expect.Kind != suites.ExpectMonotonic || f.Expect.Direction != "not_more_confident" {
		t.Fatalf("imported functionality: %+v", f)
	}

	// Score: the registered expectation judges the cases (a rise of the
	// original's class beyond the tolerance fails), and failing inputs
	// are described in the type's words.
	var preds []metrics.Prediction
	for _, g := range s.Functionalities {
		for _, c := range g.Cases {
			for i := range c.Inputs {
				p := []float64{0.6, 0.3, 0.1}
				if g == f && i > 0 && c.ID%2 == 0 {
					p = []float64{0.9, 0.05, 0.05} // the original's class rises: fails
				}
				preds = append(preds, metrics.Prediction{Class: 0, Probs: p})
			}
		}
	}
	res, err := metrics.Score(s, preds, metrics.ScoreOptions{Exclude: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var fr *metrics.FunctionalityResult
	for i := range res.Functionalities {
		if res.Functionalities[i].Name == f.Name {
			fr = &res.Functionalities[i]
		}
	}
	if fr == nil || fr.Type != DEC || fr.Cases != 6 || fr.Failed != 3 || fr.Tolerance != 0.1 {
		t.Errorf("score of %s: %+v, want 6 cases, 3 failed, tolerance 0.1", f.Name, fr)
	}
	if got := metrics.ViolationText(DEC, 0.25); got != "original's class rose by 0.250" {
		t.Errorf("violation text %q", got)
	}

	// Train, score, report: a sweep trains on the suite, seen and with each
	// type held out — DEC among them, a fold of its own.
	store, runs := experimentstest.TrainSweep(t, `
tasks:
  - name: INTENT
    labels: [greeting, question, complaint]
    suite: `+suitePath+`
model: {name: wordvec, options: {glove: `+filepath.Join(td, "intent_glove.txt")+`, hidden: 8, max_length: 16}}
configurations: [T]
scores: [seen, type]
grid: {epochs: [2], batch_size: [4], lr: [0.01]}
`)
	byFold := map[string]experiments.Run{}
	for _, r := range runs {
		byFold[r.Fold] = r
	}
	seen, heldOut := byFold[""], byFold[string(DEC)]
	if heldOut.Fold == "" {
		t.Fatalf("no run holds out the type %s: folds %v", DEC, keys(byFold))
	}
	// DEC's 3 training cases train as DIR pairs beside "add please"'s 3:
	// 6 cases, batches of 2, so 3 DIR batches an epoch seen and 2 with DEC
	// held out (2 epochs).
	if got, want := dirBatches(t, store, seen), 6; got != want {
		t.Errorf("seen run: %d DIR batches, want %d (DEC's cases trained as DIR pairs)", got, want)
	}
	if got, want := dirBatches(t, store, heldOut), 4; got != want {
		t.Errorf("run holding out %s: %d DIR batches, want %d", DEC, got, want)
	}

	tab, err := report.FromStore(store, runs, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := tab.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "T_type INTENT") {
		t.Errorf("table lacks the type score:\n%s", md.String())
	}
	found := false
	for _, g := range tab.Functionalities["INTENT"] {
		found = found || (g.Name == f.Name && g.Type == string(DEC))
	}
	if !found {
		t.Errorf("report's functionalities lack %s: %+v", DEC, tab.Functionalities["INTENT"])
	}

	// Draw: the heatmap's column numbers and legend take the type's colour.
	var buf bytes.Buffer
	if err := tab.WriteHeatmap(&buf, "png", report.HeatmapOptions{}); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n := countColour(img, decColour); n < 10 {
		t.Errorf("heatmap has %d pixels of %s's colour, want its legend mark", n, DEC)
	}
}

// FLIP is a type whose verdict rule none of CheckList's expectations
// expresses: the perturbation (an antonym, say) must change the predicted
// class. Its expectation kind and rule are registered beside it.
const FLIP suites.TestType = "FLIP"

func init() {
	if err := suites.RegisterExpectKind("flips"); err != nil {
		panic(err)
	}
	if err := metrics.RegisterRule("flips", func(_ *suites.Functionality, _ *suites.Case, preds []metrics.Prediction, _ metrics.Options) ([]metrics.Verdict, []float64, error) {
		vs, sizes := make([]metrics.Verdict, len(preds)), make([]float64, len(preds))
		vs[0] = metrics.Pass // the original, compared with itself (CheckList's convention)
		for j, p := range preds[1:] {
			vs[j+1] = metrics.Pass
			if p.Class == preds[0].Class {
				vs[j+1], sizes[j+1] = metrics.Fail, p.Probs[p.Class]
			}
		}
		return vs, sizes, nil
	}); err != nil {
		panic(err)
	}
	if err := suites.RegisterTestType(suites.TypeSpec{Name: FLIP, Paired: true,
		Expect:    suites.Expectation{Kind: "flips", Agg: suites.AggAllExceptFirst},
		Colour:    color.RGBA{0xcc, 0x66, 0, 0xff},
		Violation: func(v float64) string { return fmt.Sprintf("kept the original's class with p = %.3f", v) },
	}); err != nil {
		panic(err)
	}
}

// A type with a verdict rule of its own reads and scores by that rule.
func TestNewVerdictRule(t *testing.T) {
	s, err := suites.Read(strings.NewReader(`{"suite": "flip", "task": "sentiment", "labels": ["negative", "positive"]}
{"class": "Vocabulary", "functionality": "antonyms", "type": "FLIP", "id": 0, "inputs": ["it is good", "it is bad"]}
{"class": "Vocabulary", "functionality": "antonyms", "type": "FLIP", "id": 1, "inputs": ["I love it", "I hate it"]}
`), "flip.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	preds := []metrics.Prediction{
		{Class: 1, Probs: []float64{0.2, 0.8}}, {Class: 0, Probs: []float64{0.9, 0.1}}, // flipped: pass
		{Class: 1, Probs: []float64{0.1, 0.9}}, {Class: 1, Probs: []float64{0.3, 0.7}}, // kept: fail
	}
	res, err := metrics.Score(s, preds, metrics.ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fr := res.Functionalities[0]
	if fr.Type != FLIP || fr.Cases != 2 || fr.Failed != 1 || fr.Filtered != 0 {
		t.Errorf("antonyms: %+v, want 2 cases, 1 failed", fr)
	}
	if v := res.Cases[1]; v.Verdict != metrics.Fail || v.Violation != 0.7 {
		t.Errorf("case 1: %v, violation %v; want fail, 0.7", v.Verdict, v.Violation)
	}
}

// noSwitch finds code that decides by a test type's name: a case or a
// comparison with MFT, INV or DIR, or a batch-kind constant, outside the
// two registry files.
var noSwitch = regexp.MustCompile(`(case|[!=]=)\s*(suites\.)?"?(MFT|INV|DIR)\b|\bKind(MFT|INV|DIR|LabelDIR)\b`)

var registryFiles = map[string]bool{"suites/testtype.go": true, "train/testtype.go": true}

// Every package asks the registry: no other file switches on a type name.
func TestNoPackageSwitchesOnTypeNames(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || registryFiles[filepath.ToSlash(rel)] {
			return nil
		}
		file, err := os.Open(path)
		if err != nil {
			return err
		}
		defer file.Close()
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if !strings.HasPrefix(line, "//") && noSwitch.MatchString(line) {
				t.Errorf("%s:%d decides by a test type's name (ask suites' or train's registry): %s", rel, n, line)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dirBatches counts the DIR batches of a run's training curve.
func dirBatches(t *testing.T, store *experiments.Store, r experiments.Run) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(store.RunDir(r.ID()), "train", "curve.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var p train.CurvePoint
		if err := json.Unmarshal(line, &p); err != nil {
			t.Fatalf("%s curve: %v", r.ID(), err)
		}
		if p.Kind == train.KindDIR.String() {
			n++
		}
	}
	return n
}

func countColour(img image.Image, c color.RGBA) int {
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, a := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(b>>8) == c.B && uint8(a>>8) == c.A {
				n++
			}
		}
	}
	return n
}

func keys(m map[string]experiments.Run) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
