package train

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/suites"
)

func tinySpec(config string) RunSpec {
	return RunSpec{
		Task: "sentiment", Suite: "testdata/tiny_suite.jsonl",
		IIDTrain: "testdata/tiny_train.tsv", IIDDev: "testdata/tiny_dev.tsv",
		Model:         ModelSpec{Kind: "wordvec", GloVe: "testdata/tiny_glove.txt", Hidden: 8},
		Configuration: config, Method: "vanilla",
		Hyper:      Hyper{Epochs: 2, BatchSize: 4, LR: 1e-2},
		ProbeHyper: Hyper{Epochs: 1, BatchSize: 4, LR: 1e-2},
		IIDHyper:   Hyper{Epochs: 2, BatchSize: 4, LR: 1e-2},
		MaxLength:  16, Seed: 1,
	}
}

func TestRunConfigurations(t *testing.T) {
	dir := t.TempDir()
	iidDir := filepath.Join(dir, "iid")
	res, err := Run(context.Background(), tinySpec(ConfigIID), iidDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"model/config.json", "model/model.safetensors", "iid_predictions.txt",
		"suite_predictions.txt", "results.json", "cases.jsonl", "curve.jsonl", "metrics.json"} {
		if _, err := os.Stat(filepath.Join(iidDir, f)); err != nil {
			t.Errorf("IID run lacks %s", f)
		}
	}
	checkIIDPredictionLines(t, iidDir, res)
	if res.SuiteScore == nil || res.G == nil || res.Steps != 4 {
		t.Errorf("IID result %+v: want a suite score, G and 2 epochs × 2 batches", res)
	}
	for _, config := range []string{ConfigIIDThenT, ConfigIIDThenIT, ConfigIIDPlusT} {
		spec := tinySpec(config)
		if config != ConfigIIDPlusT {
			spec.FromIID = filepath.Join(iidDir, "model")
		}
		for _, method := range MethodNames() {
			spec.Method = method
			out := filepath.Join(dir, config+"-"+method)
			if _, err := Run(context.Background(), spec, out); err != nil {
				t.Fatalf("%s %s: %v", config, method, err)
			}
		}
	}
}

func TestRunHeldOutScoresOnlyTheFold(t *testing.T) {
	spec := tinySpec(ConfigIIDPlusT)
	spec.HeldOut = &FoldSpec{Kind: "class", Name: "Negation"}
	out := t.TempDir()
	if _, err := Run(context.Background(), spec, out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "results.json"))
	var r struct {
		Functionalities []struct{ Functionality string }
	}
	json.Unmarshal(b, &r)
	if len(r.Functionalities) != 1 || r.Functionalities[0].Functionality != "not negative" {
		t.Errorf("held-out run scored %+v, want only the Negation class", r.Functionalities)
	}
}

func TestRunDivergenceIsAnError(t *testing.T) {
	spec := tinySpec(ConfigIID)
	spec.IIDHyper.LR = 1e38
	out := t.TempDir()
	_, err := Run(context.Background(), spec, out)
	if !errors.Is(err, ErrDiverged) {
		t.Fatalf("error %v, want ErrDiverged", err)
	}
	for _, marker := range []string{"done", "failed.json", "spec.json"} {
		if _, err := os.Stat(filepath.Join(out, marker)); !os.IsNotExist(err) {
			t.Errorf("train.Run wrote %s: the run store owns the markers", marker)
		}
	}
}

// TestIIDBaselineTrainsWithSoftmaxCE: BeLUGA fine-tunes the IID baseline
// as BertForSequenceClassification on integer labels (softmax CE); the
// sigmoid BCE is for suite data and the i.i.d. rows of IID+T.
func TestIIDBaselineTrainsWithSoftmaxCE(t *testing.T) {
	for config, want := range map[string]losses.MFTForm{ConfigIID: losses.SoftmaxCE, ConfigIIDPlusT: losses.SigmoidBCE} {
		p, err := prepare(context.Background(), tinySpec(config))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.phases[0].Hyper.Loss.MFT; got != want {
			t.Errorf("%s trains with MFT form %v, want %v", config, got, want)
		}
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	spec := tinySpec(ConfigIID)
	spec.IIDHyper.Epochs = 1000
	ctx, cancel := context.WithCancel(context.Background())
	p, err := prepare(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	upd := &countingUpdater{Updater: p.phases[0].Update, after: 3, cancel: cancel}
	p.phases[0].Update = upd
	curve, err := Train(ctx, p.model, p.data, p.phases, TrainOptions{Seed: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if len(curve) != 3 || upd.calls != 3 {
		t.Errorf("%d updates logged, %d made after cancelling at the 3rd: want 3 and 3", len(curve), upd.calls)
	}
}

// countingUpdater cancels its context after a number of updates.
type countingUpdater struct {
	Updater
	after, calls int
	cancel       func()
}

func (c *countingUpdater) Update(st *UpdateState) (Step, error) {
	c.calls++
	if c.calls == c.after {
		c.cancel()
	}
	return c.Updater.Update(st)
}

func TestRunQQP(t *testing.T) {
	spec := tinySpec(ConfigIIDPlusT)
	spec.Task, spec.Suite = "qqp", "testdata/tiny_qqp.jsonl"
	spec.IIDTrain, spec.IIDDev = "testdata/tiny_qqp_train.tsv", "testdata/tiny_qqp_dev.tsv"
	for _, method := range MethodNames() {
		spec.Method = method
		out := filepath.Join(t.TempDir(), method)
		if _, err := Run(context.Background(), spec, out); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		b, err := os.ReadFile(filepath.Join(out, "suite_predictions.txt"))
		if err != nil {
			t.Fatal(err)
		}
		// binary_conf: one probability per line, one line per T_test input
		if lines := len(strings.Split(strings.TrimSpace(string(b)), "\n")); lines != 9 {
			t.Errorf("%s: %d suite prediction lines, want 9", method, lines)
		}
	}
}

func TestLabelDIRBatches(t *testing.T) {
	s, err := suites.Load("testdata/tiny_qqp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tk, err := tokenize.NewWordLevel([]string{"[PAD]", "[UNK]", "a", "the", "film", "seat"}, 16)
	if err != nil {
		t.Fatal(err)
	}
	d, err := BuildSuiteData(s, suites.SplitTrain, nil, tk, BuiltinTasks["qqp"])
	if err != nil {
		t.Fatal(err)
	}
	if len(d.MFT) != 3 || len(d.INV) != 1 || len(d.LabelDIR) != 2 || len(d.DIR) != 0 {
		t.Fatalf("MFT %d, INV %d, label-DIR %d, DIR %d; want 3, 1, 2, 0", len(d.MFT), len(d.INV), len(d.LabelDIR), len(d.DIR))
	}
	names, impl := d.LabelDIR[0], d.LabelDIR[1]
	if names.WithOriginal || !impl.WithOriginal {
		t.Errorf("name changes leave the original out and implications keep it: got %v, %v", names.WithOriginal, impl.WithOriginal)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b := labelDIRBatch(rng, []Perturbed{names, impl})
	// names: 3 of its 4 perturbations (label 0); implications: original + 2 (label 1)
	if b.Input.Size != 6 || len(b.Targets) != 12 {
		t.Fatalf("batch of %d rows, %d targets; want 6 and 12", b.Input.Size, len(b.Targets))
	}
	for i := 0; i < 3; i++ {
		if b.Targets[2*i] != 1 || b.Targets[6+2*i+1] != 1 {
			t.Errorf("targets %v: want 3 non-duplicates then 3 duplicates", b.Targets)
			break
		}
	}
}

func TestValidateRefusesNegativeLimits(t *testing.T) {
	for _, set := range []func(*RunSpec){
		func(s *RunSpec) { s.IIDLimit = -10 },
		func(s *RunSpec) { s.SuiteLimit = -1 },
		func(s *RunSpec) { s.IIDHyper.Epochs = 1e9 },
		func(s *RunSpec) { s.MaxSteps = -1 },
		func(s *RunSpec) { s.Corrections = []string{"nope"} },
	} {
		spec := tinySpec(ConfigIID)
		set(&spec)
		if err := spec.Validate(); err == nil {
			t.Errorf("spec %+v accepted", spec)
		}
	}
	if spec := tinySpec(ConfigIID); spec.Validate() != nil {
		t.Error("the tiny spec is refused")
	}
}

func TestMaxStepsCapsEachPhase(t *testing.T) {
	spec := tinySpec(ConfigIID)
	spec.IIDHyper.Epochs = 50
	p, err := prepare(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	curve, err := Train(context.Background(), p.model, p.data, p.phases, TrainOptions{Seed: 1, MaxSteps: 3})
	if err != nil || len(curve) != 3 {
		t.Fatalf("%d updates, %v: want 3", len(curve), err)
	}
	// The schedule is laid over the capped count: it starts at lr and falls
	// by a third each update.
	if curve[0].LR != spec.IIDHyper.LR || math.Abs(curve[1].LR-spec.IIDHyper.LR*2/3) > 1e-12 {
		t.Errorf("learning rates %v, %v: want the schedule over 3 updates", curve[0].LR, curve[1].LR)
	}
}

// TestRunWithTokenCacheChangesNothing: runs sharing a tokenisation cache
// tokenise the suite and the i.i.d. files once, into the cache, and train
// and predict exactly as runs without one.
func TestRunWithTokenCacheChangesNothing(t *testing.T) {
	plain := t.TempDir()
	if _, err := Run(context.Background(), tinySpec(ConfigIIDPlusT), plain); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for run := 0; run < 2; run++ { // the first fills the cache, the second reads it
		spec := tinySpec(ConfigIIDPlusT)
		spec.Cache = cache
		out := t.TempDir()
		if _, err := Run(context.Background(), spec, out); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"curve.jsonl", "iid_predictions.txt", "suite_predictions.txt", "cases.jsonl"} {
			want, _ := os.ReadFile(filepath.Join(plain, f))
			got, err := os.ReadFile(filepath.Join(out, f))
			if err != nil || string(got) != string(want) {
				t.Errorf("run %d: %s differs from the run without a cache (%v)", run, f, err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(cache, "tokens", "*.tok"))
	if len(files) != 3 {
		t.Errorf("cache holds %d tokenised lists, want 3 (suite, train, dev)", len(files))
	}
	p, err := prepare(context.Background(), func() RunSpec { s := tinySpec(ConfigIIDPlusT); s.Cache = cache; return s }())
	if err != nil {
		t.Fatal(err)
	}
	pt, ok := p.tk.(*pretokenized)
	if !ok {
		t.Fatalf("tokenizer %T, want the cache's", p.tk)
	}
	// An input outside the cached lists is encoded by the wrapped tokenizer.
	want, _ := pt.tk.Encode("an unseen sentence", "", false)
	got, _ := pt.Encode("an unseen sentence", "", false)
	if !slices.Equal(got.IDs, want.IDs) {
		t.Errorf("unseen input encoded %v, want %v", got.IDs, want.IDs)
	}
}

// checkIIDPredictionLines checks that iid_predictions.jsonl holds, per line
// of BeLUGA's iid_predictions.txt, the example's text, its gold label and
// the same predicted class.
func checkIIDPredictionLines(t *testing.T, dir string, res *Result) {
	t.Helper()
	txt, err := os.ReadFile(filepath.Join(dir, "iid_predictions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "iid_predictions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	classes := strings.Split(strings.TrimSpace(string(txt)), "\n")
	lines := strings.Split(strings.TrimSpace(string(js)), "\n")
	if len(lines) != len(classes) || len(lines) != len(res.IIDGold) {
		t.Fatalf("%d jsonl lines, %d txt lines, %d gold labels", len(lines), len(classes), len(res.IIDGold))
	}
	for i, l := range lines {
		var in metrics.CaseInput
		if err := json.Unmarshal([]byte(l), &in); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		pred, _, _ := strings.Cut(classes[i], " ")
		if in.Text == "" || in.Label == "" || in.PredClass == nil || strconv.Itoa(*in.PredClass) != pred || *in.PredClass != res.IIDPredicted[i] || len(in.Probs) < 2 {
			t.Errorf("line %d: %+v, txt line %q", i+1, in, classes[i])
		}
	}
}
