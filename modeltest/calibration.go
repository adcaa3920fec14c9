package modeltest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/suitescore"
)

// The calibration section's files in Options.Out: its measures (read back
// by the test report), its Markdown, its figure, and the model's
// predictions on the user's data.
const (
	CalibrationFile     = report.TestCalibrationFile
	CalibrationMarkdown = "calibration.md"
	CalibrationFigure   = "calibration.png"
	DataPredictionsFile = "data_predictions.jsonl"
)

// measureData predicts the user's labelled data (Options.Data) with the
// model and measures it: accuracy, macro-F1, per-class precision and
// recall, the confusion matrix and calibration. The file's labels are the
// suite classes the model's were matched to (names or indices), so its
// probabilities are read in that order.
func measureData(ctx context.Context, m predict.Model, tk predict.Tokenizer, spec datasets.FileSpec, rep *Report, batch int) (*metrics.Labelled, []predict.Output, error) {
	spec.Labels = datasets.LabelNames(rep.SuiteLabels...)
	xs, err := spec.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("--data: %w", err)
	}
	inputs := make([]predict.Input, len(xs))
	gold := make([]int, len(xs))
	for i, x := range xs {
		inputs[i] = predict.NewInput(x.Text, x.Pair, x.IsPair)
		gold[i] = x.Label
	}
	slog.Info("predicting the labelled data", "file", spec.Path, "examples", len(xs))
	outs, err := predict.RunContext(ctx, m, tk, inputs, batch)
	if err != nil {
		return nil, nil, err
	}
	read := suitescore.PredictJSONL(rep.Match)
	preds := make([]metrics.Prediction, len(outs))
	for i, o := range outs {
		preds[i] = read(o.Probs)
	}
	l, err := metrics.MeasureLabelled(filepath.Base(spec.Path), rep.SuiteLabels, preds, gold, metrics.DefaultBins)
	return l, outs, err
}

// writeCalibration writes the calibration section's files into out (none
// when c is nil) and returns their paths.
func writeCalibration(out string, c *report.TestCalibration, cases []metrics.CaseVerdict, dataOuts []predict.Output) ([]string, error) {
	if c == nil {
		return nil, nil
	}
	steps := []fileStep{
		{CalibrationFile, func(p string) error { return report.WriteTestCalibration(p, c) }},
		{CalibrationMarkdown, func(p string) error {
			return atomicfile.Write(p, func(w io.Writer) error { return c.WriteMarkdown(w, "## ") })
		}},
		{CalibrationFigure, func(p string) error { return c.WriteCalibrationFigure(p, cases) }},
	}
	if dataOuts != nil {
		steps = append(steps, fileStep{DataPredictionsFile, func(p string) error { return predict.WriteOutputs(p, dataOuts) }})
	}
	return writeFiles(out, steps)
}
