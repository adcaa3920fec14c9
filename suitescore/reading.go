package suitescore

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/beluga-nlp/beluga/metrics"
)

// A Reading turns a model's probabilities for one input — in the model's
// class order; nil for a prompted model's answer that names no class —
// into the prediction that is scored.
type Reading func(probs []float32) metrics.Prediction

// PredictJSONL reads probabilities as beluga eval reads a predict_jsonl
// line whose classes are in the suite's order: model class i is suite
// class match[i], each float32 becomes its shortest decimal, and the
// prediction is the argmax (the first on a tie). A two-way model on a
// suite with three labels and two model_labels is squashed by
// metrics.Score, as eval squashes it.
func PredictJSONL(match []int) Reading {
	return func(probs []float32) metrics.Prediction {
		p := make([]float64, len(probs))
		for i, v := range probs {
			f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
			p[match[i]] = f
		}
		return metrics.Prediction{Class: metrics.Argmax(p), Probs: p}
	}
}

// BeLUGA is how a training run reads its model's probabilities and
// writes its suite predictions (BeLUGA's notebook, CheckList's formats),
// for a suite of Labels classes:
//
//   - Squash: a two-way sentiment model's P(positive) squashed to
//     CheckList's three classes at float32, as BeLUGA's float32 model
//     does (metrics.Squash32; pred_and_softmax); P(positive) is the
//     model class c whose ToSuite[c] is 1, the suite's second
//     model_label (ToSuite nil: class 1);
//   - two model classes on two labels: binary_conf, P(second class),
//     class 1 when it is above 0.5;
//   - otherwise the probabilities placed in the suite's label order
//     (model class c is suite label ToSuite[c]), class their argmax in
//     the model's order (pred_and_softmax).
//
// Probabilities nil (an unparsed answer) read as class -1 without
// probabilities: the input fails.
type BeLUGA struct {
	Labels  int
	Squash  bool
	ToSuite []int
}

// Read is BeLUGA's Reading.
func (b BeLUGA) Read(out []float32) metrics.Prediction {
	if out == nil {
		return metrics.Prediction{Class: -1}
	}
	if b.Squash {
		positive := 1
		if b.ToSuite != nil {
			positive = slices.Index(b.ToSuite, 1)
		}
		return metrics.Squash32(out[positive], metrics.SquashCheckList)
	}
	probs := make([]float64, b.Labels)
	for c, p := range out {
		probs[b.ToSuite[c]] = float64(p)
	}
	if b.binary() {
		pr := metrics.Prediction{Probs: []float64{1 - probs[1], probs[1]}}
		if probs[1] > 0.5 {
			pr.Class = 1
		}
		return pr
	}
	return metrics.Prediction{Class: b.ToSuite[metrics.Argmax(out)], Probs: probs}
}

func (b BeLUGA) binary() bool { return !b.Squash && len(b.ToSuite) == 2 && b.Labels == 2 }

// WriteLine writes p, which Read made, as a line of BeLUGA's suite
// prediction file: "-1" for an unparsed answer, binary_conf's "p1" for
// two classes, else pred_and_softmax's "class p0 p1 …" (each
// probability as %g).
func (b BeLUGA) WriteLine(buf *bytes.Buffer, p metrics.Prediction) {
	switch {
	case p.Unparsed():
		buf.WriteString("-1\n")
	case b.binary():
		fmt.Fprintf(buf, "%g\n", p.Probs[1])
	default:
		buf.WriteString(strconv.Itoa(p.Class))
		for _, v := range p.Probs {
			fmt.Fprintf(buf, " %g", v)
		}
		buf.WriteByte('\n')
	}
}
