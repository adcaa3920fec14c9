// Package conformance is the check every compute backend passes (hugot's
// pattern: one suite, run by each backend's _test.go). Against the
// reference backend (pure Go) it compares, for every model family with a
// fixture in models/testdata:
//
//   - forward logits of a padded batch of sequences and pairs;
//   - the gradients of BeLUGA's MFT (sigmoid BCE on soft labels), INV and
//     DIR losses, summed, for every parameter;
//   - the parameters after one AdamW step (weight decay 0.01, clipping to
//     norm 1) from the reference's gradients;
//
// each within Tol relative (‖got − ref‖ ≤ Tol·‖ref‖ per tensor, or within
// Tol·1e-2 of the largest reference norm: tensors whose gradient is
// rounding noise, such as attention's key biases). It checks batch-size
// invariance on the backend itself: a text's logits alone and in a batch
// with longer texts (so padded) agree within InvarianceTol. Every backend
// operation is also checked on its own on random buffers (matrix products
// in every transpose with strides, element-wise kernels, the optimiser's
// updates), which localises a failure before the model checks run.
package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/optim"
)

// Tol is the relative tolerance against the reference backend.
const Tol = 1e-3

// Tolerances are the bounds a backend is held to: Gemm for a matrix
// product on its own (relative), Model for a fixture's logits and
// gradients (relative), Invariance for a text's logits alone against in a
// batch (relative to the largest logit). The element-wise operations and
// the parameters after one optimiser step are held to Tol whatever the
// tolerances: they run in float32 on every backend.
type Tolerances struct{ Gemm, Model, Invariance float64 }

// FP32 are the tolerances of a float32 backend.
var FP32 = Tolerances{Gemm: Tol, Model: Tol, Invariance: InvarianceTol}

// InvarianceTol bounds a text's logits' change with its batch and padding,
// relative to the largest logit.
const InvarianceTol = 1e-5

// Fixtures are the family checkpoints the suite runs on, relative to
// models/testdata: a random tiny checkpoint of each registered family.
var Fixtures = []string{
	"families/bert", "families/electra", "families/roberta", "families/xlm-roberta",
	"families/distilbert", "deberta-v2", "modernbert/tiny", "decoders/gpt2", "decoders/llama", "decoders/qwen2",
}

// Run checks b against the reference backend; testdata is the path of
// models/testdata from the calling test.
func Run(t *testing.T, b backend.Backend, testdata string) {
	RunAgainst(t, b, backend.Reference(), testdata)
}

// RunAgainst is Run with another reference (a kernel path of the
// reference backend: models/backend's tests check every path against the
// portable one).
func RunAgainst(t *testing.T, b, ref backend.Backend, testdata string) {
	RunWithin(t, b, ref, testdata, FP32)
}

// RunWithin is RunAgainst with tolerances other than float32's (a backend
// of lower precision: backend.BF16).
func RunWithin(t *testing.T, b, ref backend.Backend, testdata string, tol Tolerances) {
	t.Run("ops", func(t *testing.T) { checkOps(b, ref, tol, t.Errorf) })
	for _, f := range Fixtures {
		t.Run(f, func(t *testing.T) {
			ck, err := checkpoint.LoadDir(filepath.Join(testdata, f))
			if err != nil {
				t.Fatal(err)
			}
			w, err := checkFamily(b, ref, ck, tol, t.Errorf)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s against %s, worst relative difference: logits %.2g, gradients %.2g, parameters after AdamW %.2g; batch invariance %.2g",
				b.Name(), ref.Name(), w.Logits, w.Grad, w.Step, w.Invariance)
		})
	}
}

// Worst holds the largest relative differences CheckFamily saw: against
// the reference (‖got − ref‖/‖ref‖; gradients of tensors whose norm is at
// least 1e-2 of the largest), and of a text's logits with its batch
// (relative to the largest logit).
type Worst struct{ Logits, Grad, Step, Invariance float64 }

// CheckFamily runs the model checks of one fixture on b, reporting each
// difference beyond tolerance through errorf; the error is a failure to
// run them at all.
func CheckFamily(b backend.Backend, ck *checkpoint.Checkpoint, errorf func(format string, args ...any)) (Worst, error) {
	return checkFamily(b, backend.Reference(), ck, FP32, errorf)
}

func checkFamily(b, refBackend backend.Backend, ck *checkpoint.Checkpoint, tol Tolerances, errorf func(format string, args ...any)) (Worst, error) {
	var w Worst
	ref, err := train1(refBackend, ck)
	if err != nil {
		return w, fmt.Errorf("reference backend: %w", err)
	}
	got, err := train1(b, ck)
	if err != nil {
		return w, fmt.Errorf("backend %s: %w", b.Name(), err)
	}
	ref.step(ref.grads)
	got.step(ref.grads)
	w.Logits = compare(errorf, tol.Model, "logits", got.logits, ref.logits)
	for i, name := range ref.names {
		d, r := diff(got.grads[i], ref.grads[i])
		if r > 1e-2*ref.topGrad {
			w.Grad = math.Max(w.Grad, d/r)
		}
		if d > tol.Model*r && d > tol.Model*1e-2*ref.topGrad {
			errorf("%s: gradient off by %.3g (norm %.3g)", name, d, r)
		}
		d, r = diff(got.values[i], ref.values[i])
		w.Step = math.Max(w.Step, d/r)
		if d > Tol*r {
			errorf("%s: after one AdamW step off by %.3g (norm %.3g)", name, d, r)
		}
	}
	w.Invariance, err = checkInvariance(b, ck, tol.Invariance, errorf)
	return w, err
}

// outcome is what one backend computed on a fixture.
type outcome struct {
	be           backend.Backend
	params       []*models.Param
	logits       []float32
	names        []string
	grads        [][]float32 // the losses' gradients, before clipping
	values       [][]float32 // the parameters after one AdamW step
	topGrad      float64
	mft, inv, dr float64
}

// texts are the suite's inputs: ids drawn from the vocabulary (never the
// first 5, where the special tokens are), lengths 3 to 12, every second
// one a pair where the family has token types.
func texts(ck *checkpoint.Checkpoint, n int, seed uint64) []models.Encoding {
	r := rand.New(rand.NewPCG(seed, 0xc0f))
	vocab := ck.Config.VocabSize
	pairs := ck.Config.TypeVocabSize > 1
	encs := make([]models.Encoding, n)
	for i := range encs {
		l := 3 + r.IntN(10)
		ids, types := make([]int, l), make([]int, l)
		for j := range ids {
			ids[j] = 5 + r.IntN(vocab-5)
			if pairs && i%2 == 1 && j >= l/2 {
				types[j] = 1
			}
		}
		encs[i] = models.Encoding{IDs: ids, TypeIDs: types}
	}
	return encs
}

// train1 builds the fixture's classifier on be (dropout off), runs the
// forward pass and the losses' backward pass.
func train1(be backend.Backend, ck *checkpoint.Checkpoint) (*outcome, error) {
	cfg := *ck.Config
	// DistilBERT's head rates, which SetDropout leaves alone, off too.
	cfg.Extra = maps.Clone(cfg.Extra)
	cfg.Extra["seq_classif_dropout"], cfg.Extra["qa_dropout"] = json.RawMessage("0"), json.RawMessage("0")
	m, _, err := models.NewClassifier(&cfg, 2, ck.Weights, 1)
	if err != nil {
		return nil, err
	}
	m.SetBackend(be)
	m.SetDropout(0, 0)
	out := &outcome{}
	encs := texts(ck, 6, 1)
	res, err := m.Infer(models.NewBatch(encs))
	if err != nil {
		return nil, err
	}
	out.logits = append([]float32(nil), res.Logits...)

	ev := losses.NewEvaluator()
	step := func(encs []models.Encoding, loss func(z []float32, rows int) (float64, []float32, error)) (float64, error) {
		pass, err := m.Forward(models.NewBatch(encs), true)
		if err != nil {
			return 0, err
		}
		defer pass.Release()
		l, dz, err := loss(pass.Logits(), len(encs))
		if err != nil {
			return 0, err
		}
		return l, pass.Backward(dz)
	}
	targets := []float64{0.9, 0.1, 0.2, 0.8, 0.5, 0.5, 1, 0, 0.3, 0.7, 0, 1}
	if out.mft, err = step(encs, func(z []float32, rows int) (float64, []float32, error) {
		return ev.MFT(z, rows, 2, targets, losses.SigmoidBCE)
	}); err != nil {
		return nil, fmt.Errorf("MFT: %w", err)
	}
	if out.inv, err = step(texts(ck, 4, 2), func(z []float32, rows int) (float64, []float32, error) {
		return ev.INV(z, rows, 2, false)
	}); err != nil {
		return nil, fmt.Errorf("INV: %w", err)
	}
	dirs := []losses.Direction{losses.NotLess0, losses.NotLessConf}
	if out.dr, err = step(texts(ck, 4, 3), func(z []float32, rows int) (float64, []float32, error) {
		return ev.DIR(z, rows, dirs)
	}); err != nil {
		return nil, fmt.Errorf("DIR: %w", err)
	}
	out.be, out.params = be, m.Params()
	for _, p := range out.params {
		out.names = append(out.names, p.Name)
		out.grads = append(out.grads, append([]float32(nil), p.Grad...))
		out.topGrad = math.Max(out.topGrad, norm(p.Grad))
	}
	return out, nil
}

// step runs gradient clipping (to norm 1) and one AdamW step (weight decay
// 0.01) on o's backend from the gradients grads, and keeps the parameters.
// Both backends step from the reference's gradients: a tensor whose
// gradient is rounding noise (attention's key biases) gets a noise-signed
// first Adam update of ±lr, which would hide the optimiser's own agreement.
func (o *outcome) step(grads [][]float32) {
	for i, p := range o.params {
		copy(p.Grad, grads[i])
	}
	optim.ClipGradNorm(o.be, o.params, 1)
	optim.NewAdamW(o.be, 0.01).Step(o.params, 1e-3, nil)
	for _, p := range o.params {
		o.values = append(o.values, append([]float32(nil), p.Value...))
	}
}

// checkInvariance: each text's logits alone equal its logits in the whole
// (padded) batch, on b. It returns the largest difference relative to the
// largest logit.
func checkInvariance(b backend.Backend, ck *checkpoint.Checkpoint, tol float64, errorf func(format string, args ...any)) (float64, error) {
	m, _, err := models.NewClassifier(ck.Config, 2, ck.Weights, 1)
	if err != nil {
		return 0, err
	}
	m.SetBackend(b)
	encs := texts(ck, 6, 4)
	all, err := m.Infer(models.NewBatch(encs))
	if err != nil {
		return 0, err
	}
	worst := 0.0
	top := 0.0
	for _, v := range all.Logits {
		top = math.Max(top, math.Abs(float64(v)))
	}
	for i, e := range encs {
		one, err := m.Infer(models.NewBatch([]models.Encoding{e}))
		if err != nil {
			return 0, err
		}
		for j, v := range one.Logits {
			d := math.Abs(float64(v - all.Logits[i*2+j]))
			worst = math.Max(worst, d/top)
			if d > tol*top {
				errorf("text %d (length %d) alone: logit %d is %.7g, %.7g in a batch of %d", i, len(e.IDs), j, v, all.Logits[i*2+j], len(encs))
			}
		}
	}
	return worst, nil
}

// compare reports got unless within tol of ref (relative), and returns the
// relative difference.
func compare(errorf func(format string, args ...any), tol float64, what string, got, ref []float32) float64 {
	d, r := diff(got, ref)
	if d > tol*r {
		errorf("%s off by %.3g (norm %.3g)", what, d, r)
	}
	return d / r
}

// diff returns ‖got − ref‖ and ‖ref‖ (infinite when the lengths differ).
func diff(got, ref []float32) (d, r float64) {
	if len(got) != len(ref) {
		return math.Inf(1), 0
	}
	for i := range ref {
		x := float64(got[i]) - float64(ref[i])
		d += x * x
		r += float64(ref[i]) * float64(ref[i])
	}
	return math.Sqrt(d), math.Sqrt(r)
}

func norm(x []float32) float64 {
	_, r := diff(x, x)
	return r
}
