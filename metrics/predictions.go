package metrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Prediction is a model's output for one input.
type Prediction struct {
	// Class is the predicted class (classification tasks).
	Class int
	// Answer is the predicted text (span tasks, or pred_only files of them).
	Answer   string
	IsAnswer bool
	// Probs holds one probability per class; nil when the prediction carries
	// a single confidence (pred_only files), which is Conf.
	Probs []float64
	Conf  float64
}

// Unparsed says the prediction names no class: a prompted model's
// generated answer that no label's verbalizer reads (class -1, no
// probabilities). Its input fails whatever it is expected to do.
func (p Prediction) Unparsed() bool { return !p.IsAnswer && p.Class < 0 && p.Probs == nil }

// Format is one of CheckList's prediction-file formats.
type Format string

// The prediction-file formats of CheckList's run_from_file.
const (
	// PredAndSoftmax lines are "pred p0 p1 ...".
	PredAndSoftmax Format = "pred_and_softmax"
	// Softmax lines are "p0 p1 ..."; the prediction is the argmax.
	Softmax Format = "softmax"
	// BinaryConf lines are "p", the probability of class 1: probabilities
	// [1-p, p], prediction the argmax (0 on a tie).
	BinaryConf Format = "binary_conf"
	// PredOnly lines are the prediction itself (a class, or an answer text),
	// with confidence 1.
	PredOnly Format = "pred_only"
	// PredictJSONL lines are beluga predict's output objects; their "probs"
	// are read as Softmax lines.
	PredictJSONL Format = "predict_jsonl"
)

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case PredAndSoftmax, Softmax, BinaryConf, PredOnly, PredictJSONL:
		return f, nil
	}
	return "", fmt.Errorf("unknown prediction format %q (want pred_and_softmax, softmax, binary_conf, pred_only or predict_jsonl)", s)
}

// PredictionError locates a problem in a prediction file.
type PredictionError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *PredictionError) Error() string {
	s := "predictions " + e.File
	if e.Line > 0 {
		s += fmt.Sprintf(" line %d", e.Line)
	}
	if e.Field != "" {
		s += " field " + e.Field
	}
	return s + ": " + e.Msg
}

// probSumTolerance is how far a probability row may be from summing to 1.
const probSumTolerance = 1e-3

// ReadPredictions reads exactly want predictions in format from path. With
// answers set, pred_only lines are answer texts; otherwise they are classes.
func ReadPredictions(path string, format Format, want int, answers bool) ([]Prediction, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("predictions %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	out := make([]Prediction, 0, want)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if len(out) == want {
			if strings.TrimSpace(text) == "" {
				continue // trailing blank lines
			}
			return nil, &PredictionError{File: path, Line: line, Msg: fmt.Sprintf("more predictions than the %d scored inputs", want)}
		}
		p, perr := parsePrediction(text, format, answers)
		if perr == nil && len(out) > 0 && len(p.Probs) != len(out[0].Probs) {
			// One model scored every input: a line with another number of
			// classes is a corrupt line, not another model.
			perr = &PredictionError{Field: "probabilities", Msg: fmt.Sprintf("%d probabilities, where the first line has %d", len(p.Probs), len(out[0].Probs))}
		}
		if perr != nil {
			perr.File, perr.Line = path, line
			return nil, perr
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("predictions %s: %w", path, err)
	}
	if len(out) < want {
		return nil, &PredictionError{File: path, Line: line, Msg: fmt.Sprintf("%d predictions for %d scored inputs", len(out), want)}
	}
	return out, nil
}

func parsePrediction(text string, format Format, answers bool) (Prediction, *PredictionError) {
	if format == PredOnly {
		if answers {
			return Prediction{Answer: strings.TrimSpace(text), IsAnswer: true, Conf: 1}, nil
		}
		c, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil || c < 0 {
			return Prediction{}, &PredictionError{Field: "pred", Msg: fmt.Sprintf("%q is not a class", text)}
		}
		return Prediction{Class: c, Conf: 1}, nil
	}
	fields := strings.Fields(text)
	var p Prediction
	if format == PredictJSONL {
		var o struct {
			Probs []float64 `json:"probs"`
		}
		if err := json.Unmarshal([]byte(text), &o); err != nil {
			return p, &PredictionError{Msg: fmt.Sprintf("not a JSON object: %v", err)}
		}
		fields = fields[:0]
		for _, v := range o.Probs {
			fields = append(fields, strconv.FormatFloat(v, 'g', -1, 64))
		}
		format = Softmax
	}
	switch format {
	case PredAndSoftmax:
		if len(fields) < 3 {
			return p, &PredictionError{Msg: fmt.Sprintf("want a class and at least two probabilities, got %q", text)}
		}
		c, err := strconv.Atoi(fields[0])
		if err != nil || c < 0 || c >= len(fields)-1 {
			return p, &PredictionError{Field: "pred", Msg: fmt.Sprintf("%q is not a class of the %d probabilities", fields[0], len(fields)-1)}
		}
		p.Class = c
		fields = fields[1:]
	case BinaryConf:
		if len(fields) != 1 {
			return p, &PredictionError{Msg: fmt.Sprintf("want one probability, got %q", text)}
		}
	case Softmax:
		if len(fields) < 2 {
			return p, &PredictionError{Msg: fmt.Sprintf("want at least two probabilities, got %q", text)}
		}
	}
	probs := make([]float64, len(fields))
	sum := 0.0
	for i, s := range fields {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
			return p, &PredictionError{Field: fmt.Sprintf("probability %d", i), Msg: fmt.Sprintf("%q is not a probability", s)}
		}
		probs[i] = v
		sum += v
	}
	if format == BinaryConf {
		probs = []float64{1 - probs[0], probs[0]}
		sum = 1
	}
	// CheckList's squashed sentiment rows are [0, 0, 0] at the edges of the
	// neutral band; such rows are what CheckList itself writes, so they pass.
	if math.Abs(sum-1) > probSumTolerance && sum != 0 {
		return p, &PredictionError{Field: "probabilities", Msg: fmt.Sprintf("sum to %g, not 1", sum)}
	}
	p.Probs = probs
	if format != PredAndSoftmax {
		p.Class = Argmax(probs)
	}
	return p, nil
}

// Argmax returns the first index of the largest value, as numpy does: the
// class of a row of probabilities or logits (0 when xs is empty).
func Argmax[T float32 | float64](xs []T) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

// SquashMode selects how a 2-way positive probability becomes three classes.
type SquashMode int

const (
	// SquashCheckList reproduces CheckList's pred_and_conf, including its
	// edge: p exactly at 0.5 ± 1/6 gives [0, 0, 0] and class 0.
	SquashCheckList SquashMode = iota
	// SquashCorrected closes the outer bands at the edges: p ≤ 0.5 − 1/6 is
	// negative and p ≥ 0.5 + 1/6 positive.
	SquashCorrected
)

// Squash maps the probability p of the positive class of a 2-way sentiment
// model to CheckList's three classes (negative, neutral, positive).
func Squash(p float64, mode SquashMode) Prediction {
	// Variables, not constants: Go folds constant expressions exactly, while
	// the band edges must be the float64 values numpy computes.
	margin := 1 / 3.
	mn := margin / 2
	lo, hi := 0.5-mn, 0.5+mn
	pp := make([]float64, 3)
	switch {
	case p < lo || (mode == SquashCorrected && p == lo):
		pp[0], pp[2] = 1-p, p
	case p > hi || (mode == SquashCorrected && p == hi):
		pp[0], pp[2] = 1-p, p
	case p >= 0.5 && p < hi:
		pp[1] = 1 - (1/margin)*math.Abs(p-0.5)
		pp[2] = 1 - pp[1]
	case p < 0.5 && p > lo:
		pp[1] = 1 - (1/margin)*math.Abs(p-0.5)
		pp[0] = 1 - pp[1]
	}
	return Prediction{Class: Argmax(pp), Probs: pp}
}

// Squash32 is Squash for the positive probability of a float32 model, as
// BeLUGA squashes it: its softmax is a float32 tensor, and numpy compares
// float32 arrays with the band edges, and computes the neutral band's
// 1 − 3·|p − ½| and the outer bands' 1 − p, in float32 (a Python float never
// widens a float32 array); the results land in a float64 array, where the
// neutral band's complement 1 − pp[1] is taken in float64. It differs from
// Squash on p exactly at float32(1/3) or float32(2/3) — the edge case,
// reached by a float32 model but not by Squash of the widened value — and
// in the low bits of the squashed probabilities that INV and DIR tolerances
// compare.
func Squash32(p float32, mode SquashMode) Prediction {
	margin := 1 / 3.
	mn := margin / 2
	lo, hi := float32(0.5-mn), float32(0.5+mn)
	scale := float32(1 / margin)
	pp := make([]float64, 3)
	abs := func(x float32) float32 { return float32(math.Abs(float64(x))) }
	switch {
	case p < lo || (mode == SquashCorrected && p == lo):
		pp[0], pp[2] = float64(1-p), float64(p)
	case p > hi || (mode == SquashCorrected && p == hi):
		pp[0], pp[2] = float64(1-p), float64(p)
	case p >= 0.5 && p < hi:
		pp[1] = float64(1 - scale*abs(p-0.5))
		pp[2] = 1 - pp[1]
	case p < 0.5 && p > lo:
		pp[1] = float64(1 - scale*abs(p-0.5))
		pp[0] = 1 - pp[1]
	}
	return Prediction{Class: Argmax(pp), Probs: pp}
}
