package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models"
)

// Grid is a hyper-parameter grid: a search trains once per combination.
type Grid struct {
	LR        []float64 `json:"lr" yaml:"lr"`
	BatchSize []int     `json:"batch_size" yaml:"batch_size"`
	Epochs    []float64 `json:"epochs" yaml:"epochs"`
}

// Trial is one point of a search and its validation scores.
type Trial struct {
	Hyper     Hyper   `json:"hyper"`
	Objective float64 `json:"objective"`
	MFTAcc    float64 `json:"mft_accuracy"`
	MFTF1     float64 `json:"mft_f1,omitempty"` // QQP
	INVPass   float64 `json:"inv_pass"`
	DIRPass   float64 `json:"dir_pass"`               // sentiment
	DIRAcc    float64 `json:"dir_accuracy,omitempty"` // QQP label-DIR
	DIRF1     float64 `json:"dir_f1,omitempty"`       // QQP label-DIR
}

// Points are the grid's hyper-parameters in the order a search trains
// them (learning rate, then batch size, then epochs), each with loss.
// Best breaks ties by this order.
func (g Grid) Points(loss LossOptions) []Hyper {
	var out []Hyper
	for _, lr := range g.LR {
		for _, bs := range g.BatchSize {
			for _, ep := range g.Epochs {
				out = append(out, Hyper{Epochs: ep, BatchSize: bs, LR: lr, Loss: loss})
			}
		}
	}
	return out
}

// Search trains spec once per point of grid and scores each on T_val with
// BeLUGA's objective (REFERENCE 1.4): for sentiment MFT accuracy + INV
// pass + DIR pass; for QQP (MFT accuracy + F1)/2 + INV pass + (label-DIR
// accuracy + F1)/2; for SQuAD the mean MFT start/end accuracy + the mean
// aligned INV pass (spanObjective); for a declared task MFT accuracy +
// INV pass + DIR pass. It returns the best hyper-parameters (Best) and
// every trial. A sweep trains each trial as a run of its own (RunTrial)
// and picks with Best.
func Search(ctx context.Context, spec RunSpec, grid Grid) (Hyper, []Trial, error) {
	var trials []Trial
	for _, h := range grid.Points(spec.Hyper.Loss) {
		s := spec
		s.Hyper = h
		t, err := RunTrial(ctx, s)
		if err != nil {
			return Hyper{}, trials, err
		}
		trials = append(trials, t)
	}
	best, err := Best(trials)
	if err != nil {
		return Hyper{}, nil, err
	}
	return trials[best].Hyper, trials, nil
}

// Best is the index of the trial a search chooses: the highest objective,
// the first of equals in the grid's order (BeLUGA's rule: a later trial
// replaces the best only when strictly better).
func Best(trials []Trial) (int, error) {
	best := -1
	for i, t := range trials {
		if best < 0 || t.Objective > trials[best].Objective {
			best = i
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("empty hyper-parameter grid")
	}
	return best, nil
}

// RunTrial trains s, one point of a search's grid (s.Hyper), and scores
// it on T_val with the search's objective.
func RunTrial(ctx context.Context, s RunSpec) (Trial, error) {
	if err := ctx.Err(); err != nil {
		return Trial{}, err
	}
	h := s.Hyper
	if err := s.Validate(); err != nil {
		return Trial{}, err
	}
	t, err := trial(ctx, s)
	if err != nil {
		return Trial{}, fmt.Errorf("trial lr %g, batch %d, epochs %g: %w", h.LR, h.BatchSize, h.Epochs, err)
	}
	t.Hyper = h
	return t, nil
}

// trial trains one search trial, of either task kind, and scores it on
// T_val.
func trial(ctx context.Context, s RunSpec) (Trial, error) {
	r, err := s.kind().prepare(ctx, s)
	if err != nil {
		return Trial{}, err
	}
	if _, err := trainRun(ctx, r, s); err != nil {
		return Trial{}, err
	}
	return r.objective(ctx, s.Seed)
}

// objective scores m on validation data as BeLUGA's compute_metrics does:
// MFT accuracy after CheckList's 3-class squash (not_0 is right when the
// prediction is neutral or positive), the share of INV pairs whose P(positive)
// moves by at most 0.1, and the share of DIR pairs with ε ≤ 0.1, each with
// one perturbation drawn per case.
func objective(m models.Model, val *SuiteData, seed uint64, form string) (Trial, error) {
	qqp := form == "qqp"
	var t Trial
	rng := rand.New(rand.NewPCG(seed, 0x0b1))
	logits := func(encs []models.Encoding) ([]float32, error) { return inferLogits(m, encs) }
	if len(val.MFT) > 0 {
		encs := make([]models.Encoding, len(val.MFT))
		for i, r := range val.MFT {
			encs[i] = r.Enc
		}
		z, err := logits(encs)
		if err != nil {
			return t, err
		}
		t.MFTAcc, t.MFTF1 = mftScores(z, val.MFT, form)
	}
	if len(val.INV) > 0 {
		var err error
		t.INVPass, err = passRate(rng, logits, val.INV, func(_ int, zo, zp []float32) (bool, error) {
			// With two classes, the largest move of a class probability is
			// BeLUGA's move of P(positive).
			var moved float64
			if len(zo) == 2 {
				moved = math.Abs(softmaxPos(zp) - softmaxPos(zo))
			} else {
				po, pp := softmax(zo), softmax(zp)
				for c := range po {
					moved = math.Max(moved, math.Abs(pp[c]-po[c]))
				}
			}
			return moved <= 0.1, nil
		})
		if err != nil {
			return t, err
		}
	}
	if len(val.DIR) > 0 {
		var err error
		t.DIRPass, err = passRate(rng, logits, val.DIR, func(i int, zo, zp []float32) (bool, error) {
			eps, err := losses.DIREps(zo, zp, val.DIR[i].Direction)
			return eps <= 0.1, err
		})
		if err != nil {
			return t, err
		}
	}
	if len(val.LabelDIR) > 0 {
		var encs []models.Encoding
		var gold []int
		for _, p := range val.LabelDIR {
			e, ls := labelDIRRows(rng, p)
			encs, gold = append(encs, e...), append(gold, ls...)
		}
		z, err := logits(encs)
		if err != nil {
			return t, err
		}
		k := len(z) / len(gold)
		preds := make([]int, len(gold))
		for i := range preds {
			preds[i] = metrics.Argmax(z[k*i : k*i+k])
		}
		t.DIRAcc, t.DIRF1 = metrics.Accuracy(preds, gold), metrics.F1(preds, gold, 1)
	}
	switch {
	case qqp:
		t.Objective = (t.MFTAcc+t.MFTF1)/2 + t.INVPass + (t.DIRAcc+t.DIRF1)/2
	default:
		t.Objective = t.MFTAcc + t.INVPass + t.DIRPass
	}
	return t, nil
}

// inferLogits returns m's logits of encs, inferred 64 at a time.
func inferLogits(m models.Model, encs []models.Encoding) ([]float32, error) {
	var out []float32
	for start := 0; start < len(encs); start += 64 {
		o, err := m.Infer(models.NewBatch(encs[start:min(start+64, len(encs))]))
		if err != nil {
			return nil, err
		}
		out = append(out, o.Logits...)
	}
	return out, nil
}

// mftScores are the MFT rows' accuracy, and for QQP the F1 of its positive
// class, from their logits z: QQP's P(duplicate) > 0.5 against the target;
// sentiment's prediction squashed to CheckList's three classes (not_0,
// target (1/3, 2/3), is right when it is neutral or positive); a declared
// task's argmax against the target's.
func mftScores(z []float32, rows []Row, form string) (acc, f1 float64) {
	if form == "qqp" {
		preds, gold := make([]int, len(rows)), make([]int, len(rows))
		for i, r := range rows {
			if softmaxPos(z[2*i:2*i+2]) > 0.5 {
				preds[i] = 1
			}
			if r.Target[1] == 1 {
				gold[i] = 1
			}
		}
		return metrics.Accuracy(preds, gold), metrics.F1(preds, gold, 1)
	}
	k := len(rows[0].Target)
	right := 0
	for i, r := range rows {
		if form != "sentiment" {
			if metrics.Argmax(z[k*i:k*i+k]) == metrics.Argmax(r.Target) {
				right++
			}
			continue
		}
		pred := metrics.Squash(softmaxPos(z[2*i:2*i+2]), metrics.SquashCheckList).Class
		if slices.Equal(r.Target, []float64{1. / 3, 2. / 3}) {
			if pred != 0 {
				right++
			}
		} else if pred == softTargetClass(r.Target) {
			right++
		}
	}
	return float64(right) / float64(len(rows)), 0
}

// passRate scores pairs of an original and a perturbation, one drawn per
// pair with rng: the share of them that pass says pass, given the pair's
// original and perturbed logits.
func passRate(rng *rand.Rand, logits func([]models.Encoding) ([]float32, error), ps []Perturbed, pass func(i int, zo, zp []float32) (bool, error)) (float64, error) {
	encs := make([]models.Encoding, 2*len(ps))
	for i, p := range ps {
		encs[2*i], encs[2*i+1] = p.Orig, p.Perts[rng.IntN(len(p.Perts))]
	}
	z, err := logits(encs)
	if err != nil {
		return 0, err
	}
	k := len(z) / (2 * len(ps))
	n := 0
	for i := range ps {
		ok, err := pass(i, z[2*k*i:2*k*i+k], z[2*k*i+k:2*k*(i+1)])
		if err != nil {
			return 0, err
		}
		if ok {
			n++
		}
	}
	return float64(n) / float64(len(ps)), nil
}

// softmaxPos is P(class 1) of two logits.
func softmaxPos(z []float32) float64 {
	return 1 / (1 + math.Exp(float64(z[0]-z[1])))
}

// softTargetClass maps a sentiment soft target back to its class: [1,0]
// negative, [½,½] neutral, [0,1] positive.
func softTargetClass(y []float64) int {
	switch {
	case slices.Equal(y, []float64{1, 0}):
		return 0
	case slices.Equal(y, []float64{0.5, 0.5}):
		return 1
	}
	return 2
}

// softmax of logits, in float64.
func softmax(z []float32) []float64 {
	out := make([]float64, len(z))
	m := z[metrics.Argmax(z)]
	sum := 0.0
	for i, x := range z {
		out[i] = math.Exp(float64(x - m))
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}
