package metrics

import (
	"math"
	"regexp"
	"strings"
	"unicode"
)

// HarmonicMean is scipy.stats.hmean of two non-negative scores, computed as
// scipy does, 2/(1/a + 1/b) (the rounding matters when a randomisation test
// compares permuted G scores with the observed one), and 0 when either is 0.
func HarmonicMean(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return 2 / (1/a + 1/b)
}

// Mean is the arithmetic mean of xs (NaN for none).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// NanMean is numpy's nanmean: the mean of the values that are not NaN, NaN
// when there are none.
func NanMean(xs []float64) float64 {
	s, n := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// SuiteScore is BeLUGA's suite score from per-case hits (1 pass, 0 fail, NaN
// filtered): the mean over funcs of each functionality's pass rate, in [0,1].
// A functionality whose cases were all filtered has no pass rate and is left
// out, as BeLUGA leaves out the two sentiment DIR tests it cannot score.
func SuiteScore(hits map[string][]float64, funcs []string) float64 {
	var rates []float64
	for _, f := range funcs {
		if r := NanMean(hits[f]); !math.IsNaN(r) {
			rates = append(rates, r)
		}
	}
	return Mean(rates)
}

// MergeHits joins the hits of several held-out models, each scoring its own
// functionalities, into the hits of one func / class / type score. A
// functionality scored by two folds is a programmer error.
func MergeHits(folds ...map[string][]float64) map[string][]float64 {
	out := map[string][]float64{}
	for _, h := range folds {
		for f, v := range h {
			if _, dup := out[f]; dup {
				panic("metrics: functionality " + f + " scored by two folds")
			}
			out[f] = v
		}
	}
	return out
}

// Correct returns 1 where pred equals gold and 0 elsewhere.
func Correct(pred, gold []int) []float64 {
	out := make([]float64, len(pred))
	for i := range pred {
		if pred[i] == gold[i] {
			out[i] = 1
		}
	}
	return out
}

// Accuracy is the fraction of predictions equal to the gold labels.
func Accuracy(pred, gold []int) float64 { return Mean(Correct(pred, gold)) }

// F1 is the F1 score of class positive (GLUE's QQP F1 of the duplicate
// class): 0 when there are no true positives.
func F1(pred, gold []int, positive int) float64 {
	tp, fp, fn := 0, 0, 0
	for i := range pred {
		switch {
		case pred[i] == positive && gold[i] == positive:
			tp++
		case pred[i] == positive:
			fp++
		case gold[i] == positive:
			fn++
		}
	}
	return f1(tp, tp+fp, tp+fn)
}

// f1 is the F1 score from a class's true positives, predictions and gold
// examples: 0 when there are no true positives.
func f1(tp, predicted, support int) float64 {
	if tp == 0 {
		return 0
	}
	p := float64(tp) / float64(predicted)
	r := float64(tp) / float64(support)
	return 2 * p * r / (p + r)
}

var squadArticles = regexp.MustCompile(`\b(a|an|the)\b`)

// normalizeAnswer is the official SQuAD v1.1 normalisation: lower case, drop
// ASCII punctuation, drop the articles a, an, the, and collapse white space.
func normalizeAnswer(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if r < 128 && unicode.IsPunct(r) || strings.ContainsRune("$+<=>^`|~", r) {
			return -1
		}
		return r
	}, s)
	s = squadArticles.ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

// ExactMatch is SQuAD's exact match of pred against the best gold answer.
func ExactMatch(pred string, golds []string) float64 {
	p := normalizeAnswer(pred)
	for _, g := range golds {
		if p == normalizeAnswer(g) {
			return 1
		}
	}
	return 0
}

// TokenF1 is SQuAD's token-overlap F1 of pred against the best gold answer.
func TokenF1(pred string, golds []string) float64 {
	best := 0.0
	pt := strings.Fields(normalizeAnswer(pred))
	for _, g := range golds {
		gt := strings.Fields(normalizeAnswer(g))
		counts := map[string]int{}
		for _, t := range gt {
			counts[t]++
		}
		common := 0
		for _, t := range pt {
			if counts[t] > 0 {
				counts[t]--
				common++
			}
		}
		if common == 0 {
			continue
		}
		prec := float64(common) / float64(len(pt))
		rec := float64(common) / float64(len(gt))
		if f := 2 * prec * rec / (prec + rec); f > best {
			best = f
		}
	}
	return best
}
