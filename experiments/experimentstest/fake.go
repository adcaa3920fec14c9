// Package experimentstest provides a synthetic Runner for testing code that
// reads run stores (reports, figures, the CLI) without training anything.
package experimentstest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/suites"
)

// Functionality is one functionality of the synthetic suite.
type Functionality = experiments.FuncResult

// Suite is a small synthetic suite: two classes, three test types.
var Suite = []Functionality{
	{Name: "single positive words", Class: "Vocabulary", Type: "MFT"},
	{Name: "add positive phrases", Class: "Vocabulary", Type: "DIR"},
	{Name: "change names", Class: "NER", Type: "INV"},
	{Name: "change locations", Class: "NER", Type: "INV"},
	{Name: "simple negations", Class: "Negation", Type: "MFT"},
}

// MetaScore holds out the values of Suite's one metadata column, "group":
// case i of every functionality but the last (which has no group) is in
// group g0, g1 or g2 by i mod 3.
const MetaScore = "meta:group"

// caseGroup is the group of case i of functionality k ("" for none).
func caseGroup(k, i int) string {
	if k == len(Suite)-1 {
		return ""
	}
	return []string{"g0", "g1", "g2"}[i%3]
}

// Folds returns the held-out folds of Suite for a score.
func Folds(score string) []string {
	if score == MetaScore {
		return []string{"g0", "g1", "g2"}
	}
	var out []string
	for _, f := range Suite {
		v := map[string]string{experiments.ScoreFunc: f.Name, experiments.ScoreClass: f.Class, experiments.ScoreType: f.Type}[score]
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Runner writes a synthetic result that depends only on what the run is
// in its sweep (its label: task, configuration, method, score, fold, grid
// point and seed), not on how run IDs are computed: the
// baseline passes about 40% of cases, a trained model 85% of the cases of
// functionalities it saw and 60% of those it did not, and i.i.d. accuracy
// drops from 90% to 87% for trained models. Delay slows every run down.
type Runner struct {
	Delay time.Duration
	// Cases per functionality and IID test examples (defaults 40 and 300).
	Cases, IID int
}

// Run implements experiments.Runner.
func (f Runner) Run(ctx context.Context, r experiments.Run, dir string) error {
	select {
	case <-time.After(f.Delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	return experiments.WriteResult(dir, f.Result(r))
}

// Result is the result Run writes for r.
func (f Runner) Result(r experiments.Run) *experiments.Result {
	cases, iid := f.Cases, f.IID
	if cases == 0 {
		cases = 40
	}
	if iid == 0 {
		iid = 300
	}
	h := sha256.Sum256([]byte(r.Label()))
	rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])))
	trained := r.Configuration != experiments.ConfigIID
	acc := 0.90
	if trained {
		acc = 0.87
	}
	res := &experiments.Result{}
	for i := 0; i < iid; i++ {
		res.IIDCorrect = append(res.IIDCorrect, rng.Float64() < acc)
	}
	meta := r.Score == MetaScore
	for k, fn := range Suite {
		held := meta && caseGroup(k, 0) != ""
		switch r.Score {
		case experiments.ScoreFunc:
			held = fn.Name == r.Fold
		case experiments.ScoreClass:
			held = fn.Class == r.Fold
		case experiments.ScoreType:
			held = fn.Type == r.Fold
		}
		if r.Score != experiments.ScoreIID && r.Score != experiments.ScoreSeen && !held {
			continue
		}
		p := 0.4
		switch {
		case trained && held:
			p = 0.6
		case trained:
			p = 0.85
		}
		if r.Method == "lp" {
			p -= 0.2
		}
		var v strings.Builder
		for i := 0; i < cases; i++ {
			if meta && caseGroup(k, i) != r.Fold {
				v.WriteByte(experiments.Filtered) // another fold's case
				continue
			}
			switch x := rng.Float64(); {
			case suites.TestType(fn.Type).Spec().Directional && x < 0.1:
				v.WriteByte(experiments.Filtered)
			case rng.Float64() < p:
				v.WriteByte(experiments.Pass)
			default:
				v.WriteByte(experiments.Fail)
			}
		}
		fn.Verdicts = v.String()
		res.Functionalities = append(res.Functionalities, fn)
	}
	// Evaluation sets come last, so that the draws above stay those of a
	// run without them. Another data set is harder: 20 points less.
	for _, set := range r.Train.IIDEval {
		var correct []bool
		right := 0
		for i := 0; i < iid; i++ {
			c := rng.Float64() < acc-0.2
			correct = append(correct, c)
			if c {
				right++
			}
		}
		if res.IIDEval == nil {
			res.IIDEval, res.IIDEvalCorrect = map[string]map[string]float64{}, map[string][]bool{}
		}
		res.IIDEval[set.Name] = map[string]float64{"accuracy": float64(right) / float64(iid)}
		res.IIDEvalCorrect[set.Name] = correct
	}
	return res
}

// FoldLister lists Suite's folds for every task.
type FoldLister struct{}

// Folds implements experiments.FoldLister.
func (FoldLister) Folds(_ experiments.Task, score string) ([]string, error) {
	return Folds(score), nil
}
