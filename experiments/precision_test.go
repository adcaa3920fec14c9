package experiments

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/train"
)

// precisionSpec is a tiny SENT sweep — BERT-tiny's shape from scratch over
// the fixtures' vocabulary — with model as the model block's extra keys and
// opts as its options' ("" or ", k: v"), and design its configurations,
// scores, budget and grid (sweepDesign: one seen run of a few steps).
func precisionSpec(t *testing.T, model, opts, design string) *Spec {
	t.Helper()
	tiny, data := trainFixtures(t, map[string]string{"tiny_train.tsv": "train.tsv", "tiny_dev.tsv": "dev.tsv"})
	spec, err := ParseSpec([]byte(`
tasks: [{name: SENT, data: ` + data + `, suite: ` + filepath.Join(tiny, "tiny_suite.jsonl") + `}]
model: {name: bert-tiny, vocab: ` + filepath.Join(tiny, "tiny_vocab.txt") + `, options: {max_length: 16` + opts + `}` + model + `}
` + design))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&TrainRunner{}).Check(spec); err != nil {
		t.Fatal(err)
	}
	spec.Out = t.TempDir()
	return spec
}

// TestPrecisionIsPartOfTheRun: model.precision bf16 makes other runs;
// fp32, given in either place or not at all, the same runs as before the
// setting existed; an unknown value is refused naming the field.
func TestPrecisionIsPartOfTheRun(t *testing.T) {
	const sweepDesign = "configurations: [IID+T]\nscores: [seen]\nbudget: {max_steps: 6}\n"
	ids := func(model, opts string) []string {
		runs, err := Expand(context.Background(), precisionSpec(t, model, opts, sweepDesign), &Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID())
		}
		return out
	}
	base := strings.Join(ids("", ""), ",")
	for _, given := range [][2]string{{", precision: fp32", ""}, {"", ", precision: fp32"}} {
		if got := strings.Join(ids(given[0], given[1]), ","); got != base {
			t.Errorf("model %q, options %q: runs %s, want those without the setting, %s", given[0], given[1], got, base)
		}
	}
	bf16 := ids(", precision: bf16", "")
	for _, id := range bf16 {
		if strings.Contains(base, id) {
			t.Errorf("precision bf16 kept the fp32 run id %s", id)
		}
	}
	_, err := Expand(context.Background(), precisionSpec(t, ", precision: fp16", "", sweepDesign), &Inputs{})
	if err == nil || !strings.Contains(err.Error(), "model.precision") || !strings.Contains(err.Error(), `"fp16"`) {
		t.Errorf("precision fp16: %v, want an error naming model.precision and the value", err)
	}
}

// TestBF16TrainsLikeFP32 trains the tiny sweep's i.i.d. model — BERT-tiny's
// shape from scratch, 20 steps at learning rate 1e-3 — in fp32 and in
// bf16: at every step the training loss in bf16 is within 1 % of fp32's
// (relative; they differ by 0.03 % here, and by 1 to 2.5 % when the
// rounding to bf16 is broken, say by a bit of the mantissa, or alpha left
// out of one operand), and the results (i.i.d. accuracy, every
// functionality's verdicts) are the same. The loss is the measure that
// moves continuously: this model's predictions, on the fixtures' few
// rows, do not move in 20 steps. Each run's timing.json records the
// precision.
func TestBF16TrainsLikeFP32(t *testing.T) {
	type outcome struct {
		curves, results []string
	}
	got := map[string]outcome{}
	for _, prec := range []string{"fp32", "bf16"} {
		spec := precisionSpec(t, ", precision: "+prec, "", "configurations: [IID]\ngrid: {iid_hyper.lr: [0.001], iid_hyper.epochs: [20]}\n")
		runs, err := Expand(context.Background(), spec, &Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		store := &Store{Dir: spec.OutDir()}
		sum, err := Execute(context.Background(), store, runs, &TrainRunner{Store: store}, Options{Jobs: 1, Logger: discardLogger()})
		if err != nil || sum.Err() != nil {
			t.Fatalf("%s sweep: %+v, %v, %v", prec, sum, err, sum.Err())
		}
		var o outcome
		for _, r := range runs {
			dir := store.RunDir(r.ID())
			curve, err := os.ReadFile(filepath.Join(dir, "train", "curve.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := os.ReadFile(filepath.Join(dir, ResultFile))
			if err != nil {
				t.Fatal(err)
			}
			o.curves, o.results = append(o.curves, string(curve)), append(o.results, string(res))
			var timing Timing
			if b, err := os.ReadFile(filepath.Join(dir, TimingFile)); err != nil || json.Unmarshal(b, &timing) != nil {
				t.Fatalf("%s: %v", TimingFile, err)
			}
			if want := map[string]string{"fp32": "", "bf16": "bf16/" + models.BF16Kernel()}[prec]; timing.Precision != want {
				t.Errorf("%s run's %s records precision %q, want %q", prec, TimingFile, timing.Precision, want)
			}
		}
		got[prec] = o
	}
	fp32, bf16 := got["fp32"], got["bf16"]
	worst := 0.0
	defer func() { t.Logf("largest relative difference of a step's loss: %.3g", worst) }()
	for i := range fp32.curves {
		a, b := curvePoints(t, fp32.curves[i]), curvePoints(t, bf16.curves[i])
		if len(a) != len(b) || len(a) == 0 {
			t.Fatalf("run %d: %d steps in fp32, %d in bf16", i, len(a), len(b))
		}
		for s := range a {
			d := math.Abs(b[s].Loss - a[s].Loss)
			worst = math.Max(worst, d/math.Abs(a[s].Loss))
			if d > 0.01*math.Abs(a[s].Loss) {
				t.Errorf("run %d, step %d: loss %.6g in bf16, %.6g in fp32: off by more than 1 %%", i, a[s].Step, b[s].Loss, a[s].Loss)
			}
		}
		if a[len(a)-1].Loss == b[len(b)-1].Loss {
			t.Errorf("run %d: the bf16 run's last loss is fp32's to the bit (%g): did it run in bf16?", i, a[len(a)-1].Loss)
		}
		if fp32.results[i] != bf16.results[i] {
			t.Errorf("run %d: results differ\nfp32: %s\nbf16: %s", i, fp32.results[i], bf16.results[i])
		}
	}
}

func curvePoints(t *testing.T, jsonl string) []train.CurvePoint {
	t.Helper()
	var out []train.CurvePoint
	for _, line := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		var p train.CurvePoint
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("curve line %q: %v", line, err)
		}
		out = append(out, p)
	}
	return out
}
