package metrics

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// A model's outputs are checked for what makes its scores meaningless as a
// result: a model that predicts (nearly) one class for everything — it
// scores the majority share on i.i.d. data and passes every INV test — or,
// for a model trained on the suite, a suite loss that never fell below
// where it started (the suite was not learnt). A trained run (package
// experiments) or a tested model (package modeltest) keeps its scores but
// carries a Flag that status, tables and the test page show, and that
// keeps its cells from being bold. The checks read only predictions and
// losses, so that training runs and beluga test ask the same ones.

// Kinds of Flag.
const (
	// FlagConstantIID: the i.i.d. test predictions are nearly all one class.
	FlagConstantIID = "constant-iid"
	// FlagConstantSuite: the suite (T_test) predictions are nearly all one class.
	FlagConstantSuite = "constant-suite"
	// FlagSuiteNotLearnt: the suite loss never fell below its start.
	FlagSuiteNotLearnt = "suite-not-learnt"
)

// NearlyConstant is the share of a run's predictions in their most frequent
// class at or above which the run is flagged as a constant predictor — unless
// the expected labels are themselves that skewed (one class making
// NearlyConstant of them, whichever class the predictions favour).
const NearlyConstant = 0.95

// LossWindow is the number of suite batches whose mean loss is compared:
// the suite loss counts as never having fallen below its start when the mean
// of every later window of LossWindow suite batches is at least the mean of
// the first. Runs with fewer than two windows of suite batches are not judged.
const LossWindow = 10

// Flag marks a run whose scores a table must not present as a result
// without a warning.
type Flag struct {
	Kind string `json:"kind"`
	// Reason says what was seen, in words and figures.
	Reason string `json:"reason"`
	// Figures are the measured values the reason quotes: for a constant
	// predictor "share" (of the most frequent class), "count" and "total",
	// and "expected_share" (that class's share among the expected labels,
	// when there are any); for the suite loss "start", "lowest" (window
	// means) and "windows".
	Figures map[string]float64 `json:"figures"`
}

// SanityInput is what the sanity checks read.
type SanityInput struct {
	// IIDPredicted and IIDGold are the predicted and gold class names of
	// the i.i.d. test examples, when there are any.
	IIDPredicted, IIDGold []string
	// Suite holds the suite verdicts (an input's Pred and Label are read;
	// span answers, without a PredClass, are left out).
	Suite *Result
	// SuiteLosses are the training losses of the suite batches in step
	// order (a model trained on the suite); i.i.d. batches are not among
	// them. Non-finite losses are skipped.
	SuiteLosses []float64
}

// Sanity checks a model's predictions and, when it was trained on the
// suite, its suite losses; it returns the flags raised, in the order
// constant i.i.d., constant suite, suite not learnt.
func Sanity(in SanityInput) []Flag {
	var flags []Flag
	if f, ok := constantFlag(FlagConstantIID, "i.i.d. test examples", in.IIDPredicted, in.IIDGold); ok {
		flags = append(flags, f)
	}
	if in.Suite != nil {
		var preds, gold []string
		for _, c := range in.Suite.Cases {
			for _, in := range c.Inputs {
				if in.PredClass == nil {
					continue // a span answer, not a class
				}
				preds = append(preds, in.Pred)
				if in.Label != "" {
					gold = append(gold, in.Label)
				}
			}
		}
		if f, ok := constantFlag(FlagConstantSuite, "suite test inputs", preds, gold); ok {
			flags = append(flags, f)
		}
	}
	if f, ok := lossFlag(in.SuiteLosses); ok {
		flags = append(flags, f)
	}
	return flags
}

// constantFlag flags preds whose most frequent value makes NearlyConstant
// of them, unless gold is as skewed towards it.
func constantFlag(kind, what string, preds, gold []string) (Flag, bool) {
	if len(preds) == 0 {
		return Flag{}, false
	}
	top, n := mostFrequent(preds)
	share := float64(n) / float64(len(preds))
	if share < NearlyConstant {
		return Flag{}, false
	}
	f := Flag{Kind: kind, Figures: map[string]float64{"share": share, "count": float64(n), "total": float64(len(preds))}}
	f.Reason = fmt.Sprintf("constant predictor: %d of %d %s (%.1f%%) predicted %s", n, len(preds), what, 100*share, top)
	if len(gold) > 0 {
		// Expected labels that are themselves (nearly) one class cannot tell
		// a constant predictor from any other: a func fold scores one
		// functionality, whose cases often share their label, and a model
		// that fails them all has failed the functionality, not collapsed.
		if _, gn := mostFrequent(gold); float64(gn)/float64(len(gold)) >= NearlyConstant {
			return Flag{}, false
		}
		g := 0
		for _, l := range gold {
			if l == top {
				g++
			}
		}
		exp := float64(g) / float64(len(gold))
		f.Figures["expected_share"] = exp
		f.Reason += fmt.Sprintf(", expected for %.1f%%", 100*exp)
	}
	return f, true
}

func mostFrequent(xs []string) (string, int) {
	counts := map[string]int{}
	for _, x := range xs {
		counts[x]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	best := keys[0]
	for _, k := range keys {
		if counts[k] > counts[best] {
			best = k
		}
	}
	return best, counts[best]
}

// lossFlag flags suite losses that, averaged over windows of LossWindow,
// never fell below the first window's mean.
func lossFlag(all []float64) (Flag, bool) {
	var losses []float64
	for _, l := range all {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			continue
		}
		losses = append(losses, l)
	}
	windows := len(losses) / LossWindow
	if windows < 2 {
		return Flag{}, false
	}
	start := Mean(losses[:LossWindow])
	lowest := math.Inf(1)
	for w := 1; w < windows; w++ {
		lowest = min(lowest, Mean(losses[w*LossWindow:(w+1)*LossWindow]))
	}
	if lowest < start {
		return Flag{}, false
	}
	return Flag{Kind: FlagSuiteNotLearnt,
		Reason:  fmt.Sprintf("suite not learnt: the suite loss never fell below its start (first %d suite batches %.4g, lowest later window %.4g, %d windows)", LossWindow, start, lowest, windows),
		Figures: map[string]float64{"start": start, "lowest": lowest, "windows": float64(windows)}}, true
}

// FlagSummary joins flags' reasons for one line of text.
func FlagSummary(flags []Flag) string {
	var rs []string
	for _, f := range flags {
		rs = append(rs, f.Reason)
	}
	return strings.Join(rs, "; ")
}
