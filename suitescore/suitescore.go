// Package suitescore predicts a behavioural suite's inputs with a model
// and scores the predictions with CheckList's semantics (package
// metrics). It is the one path by which a model is scored on a suite:
// beluga test (package modeltest) and a training run's evaluation
// (package train, and so beluga train, beluga run and every sweep) call
// Run; beluga suite inputs writes Inputs for a model run elsewhere, whose
// predictions beluga eval reads back in the same order and scores with
// the same metrics.Score.
//
// Scoring a model takes three steps, each in one place:
//
//   - Inputs: the inputs of the scored cases (those of one split, or all),
//     in suite order — the order metrics.Score expects one prediction per
//     input in (metrics.ScoredInputs counts them);
//   - the model's probabilities become a prediction by a Reading, of which
//     there are two, each a contract with a file format: BeLUGA (as
//     BeLUGA's notebook writes and CheckList reads a run's suite
//     predictions, pred_and_softmax or binary_conf) for a training run, and
//     PredictJSONL (as beluga eval reads beluga predict's output) for
//     beluga test;
//   - metrics.Score scores them.
package suitescore

import (
	"context"
	"fmt"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/suites"
)

// Inputs are the model inputs of the cases of split (of every case when
// split is empty), in suite order.
func Inputs(s *suites.Suite, split suites.Split) []predict.Input {
	var inputs []predict.Input
	for _, c := range s.CasesIn(split) {
		for _, in := range c.Inputs {
			inputs = append(inputs, predict.NewInput(in.Text, in.Pair, in.IsPair))
		}
	}
	return inputs
}

// A Predictor predicts inputs: one output per input, in input order
// (predict.RunContext with a model, or a prompted model's answers).
type Predictor = func(ctx context.Context, inputs []predict.Input) ([]predict.Output, error)

// Scored is a model's predictions of a suite's scored inputs and their
// scores.
type Scored struct {
	Result *metrics.Result
	// Outputs are the model's outputs and Predictions what read made of
	// them, one per input of Inputs(s, opt.Split).
	Outputs     []predict.Output
	Predictions []metrics.Prediction
}

// Run predicts the inputs of the cases of opt.Split with m, reads each
// output's probabilities as a prediction and scores the predictions
// (metrics.Score with opt).
func Run(ctx context.Context, s *suites.Suite, m Predictor, read Reading, opt metrics.ScoreOptions) (*Scored, error) {
	inputs := Inputs(s, opt.Split)
	outs, err := m(ctx, inputs)
	if err != nil {
		return nil, err
	}
	if len(outs) != len(inputs) {
		return nil, fmt.Errorf("suite %s: %d outputs for %d inputs", s.Name, len(outs), len(inputs))
	}
	preds := make([]metrics.Prediction, len(outs))
	for i, o := range outs {
		preds[i] = read(o.Probs)
	}
	res, err := metrics.Score(s, preds, opt)
	if err != nil {
		return nil, err
	}
	return &Scored{Result: res, Outputs: outs, Predictions: preds}, nil
}
