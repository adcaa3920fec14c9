// Package modeltest tests a classifier someone else trained on a
// behavioural suite, CheckList's first use: it predicts every scored input
// of the suite with the model (a HuggingFace checkpoint directory or hub
// id, or a model beluga saved) and scores the predictions with CheckList's
// semantics, in one call, by the path every scoring of a model on a suite
// takes (package suitescore, as a training run's evaluation does).
//
// The model's classes are matched to the suite's by name. The suite's
// classes are its model_labels when it has them and the model has as many
// (a 2-way sentiment model on CheckList's 3-way sentiment suite, whose
// probabilities are squashed), else its labels. A model class is matched
// by the --label-map entry for its id2label name, else by that name
// compared case-insensitively with the suite's class names; every class
// must match a different suite class, or the test is refused with both
// lists of names. The probabilities are then reordered into the suite's
// order and scored exactly as `beluga eval --predictions-format
// predict_jsonl` scores a prediction file in that order
// (suitescore.PredictJSONL).
package modeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/hub"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/report/explore"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/suitescore"
)

// The files Run writes into Options.Out: the results and cases as a run
// writes them under its train/ directory, what was tested (test.json), the
// predictions, the printed table and the report page. beluga report,
// serve and failures read the folder back (report.ReadTestDir).
const (
	ResultsFile     = report.TestResultsFile
	CasesFile       = report.TestCasesFile
	InfoFile        = report.TestInfoFile
	PredictionsFile = "predictions.jsonl"
	TableFile       = "table.txt"
	PageFile        = "report.html"
)

// Options say what to test and how to score it.
type Options struct {
	// Model is a model directory, a .tar.gz of one, or a hub id
	// org/name[@revision] (pretrained.Load).
	Model string
	// Suite is a suite in any format beluga reads (suites.Open).
	Suite string
	// LabelMap maps the model's label names (id2label) to the suite's
	// class names, for the classes whose names differ; keys are matched
	// case-insensitively. It is datasets.LabelMap, the one label map.
	LabelMap datasets.LabelMap
	// Score are the scoring options (split, squash, tolerance, …), as
	// beluga eval takes them.
	Score metrics.ScoreOptions
	// BatchSize and MaxLength bound prediction (0: 64 and 128).
	BatchSize, MaxLength int
	// Sample, when set, scores only the cases CheckList's
	// suite.run(n=Sample.N, seed=Sample.Seed) runs (SampleSuite).
	Sample *report.Sample
	// AllowUntrainedHead tests a model whose checkpoint lacks some of
	// its parameters (a classifier head initialised at random); without
	// it such a model is refused (untrainedHead).
	AllowUntrainedHead bool
	// Out is the directory the results are written to.
	Out string
	// Resolver resolves hub ids; nil means hub.FromEnv().
	Resolver *hub.Resolver
	// Data, when set, is the user's own labelled data, predicted and
	// measured beside the suite (classification and calibration); its
	// labels are the suite's class names or indices.
	Data *datasets.FileSpec
}

// Report is what Run found.
type Report struct {
	Result *metrics.Result
	// ModelLabels are the model's class names (id2label, HuggingFace's
	// LABEL_i where it has none), SuiteLabels the suite's classes they were
	// matched against, and Match[i] the suite class of model class i.
	ModelLabels, SuiteLabels []string
	Match                    []int
	// Flags are the sanity checks' findings (a constant predictor).
	Flags []metrics.Flag
	// Test is the test report (what the page and the table show).
	Test *report.TestReport
	// Files are the files written, in Out.
	Files []string
	// Calibration is the calibration section (the user's data with
	// Options.Data); nil when nothing had probabilities or labels.
	Calibration *report.TestCalibration
}

// Run tests opt.Model on opt.Suite and writes the results, per-case
// verdicts (with every input's text, prediction and probabilities), the
// predictions, the table and the HTML page into opt.Out.
func Run(ctx context.Context, opt Options) (*Report, error) {
	if opt.Out == "" {
		return nil, fmt.Errorf("no output directory")
	}
	s, err := openSuite(opt)
	if err != nil {
		return nil, err
	}
	maxLength, batch := opt.MaxLength, opt.BatchSize
	if maxLength == 0 {
		maxLength = 128
	}
	if batch == 0 {
		batch = 64
	}
	m, err := loadModel(ctx, opt, maxLength)
	if err != nil {
		return nil, err
	}
	rep := &Report{ModelLabels: modelLabels(m)}
	rep.SuiteLabels, rep.Match, err = matchLabels(rep.ModelLabels, s, opt.LabelMap)
	if err != nil {
		return nil, fmt.Errorf("model %s on suite %s: %w", opt.Model, opt.Suite, err)
	}
	sc, err := predictSuite(ctx, opt, s, m, rep.Match, batch)
	if err != nil {
		return nil, err
	}
	res := sc.Result
	rep.Result = res
	// The user's data is measured before anything is written: a bad file
	// leaves no half-written folder.
	var data *metrics.Labelled
	var dataOuts []predict.Output
	if opt.Data != nil {
		if data, dataOuts, err = measureData(ctx, m.Classifier, m.Tokenizer, *opt.Data, rep, batch); err != nil {
			return nil, err
		}
	}
	rep.Flags = metrics.Sanity(metrics.SanityInput{Suite: res})
	if rep.Calibration, err = report.NewTestCalibration(opt.Model, res.Cases, data); err != nil {
		return nil, err
	}
	info := testInfo(opt, s, rep)
	rep.Test, err = report.NewTestReport(report.TestTitle(opt.Model, opt.Suite), report.TestModel{Info: info, Result: res, Cases: res.Cases, Calibration: rep.Calibration})
	if err != nil {
		return nil, err
	}
	if err := writeFolder(opt.Out, s, rep, info, sc.Outputs); err != nil {
		return nil, err
	}
	files, err := writeCalibration(opt.Out, rep.Calibration, res.Cases, dataOuts)
	if err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, files...)
	return rep, nil
}

// openSuite opens the suite and keeps the cases to score: CheckList's
// sample (opt.Sample), and a split computed when asked for and missing.
func openSuite(opt Options) (*suites.Suite, error) {
	s, err := suites.Open(opt.Suite)
	if err != nil {
		return nil, err
	}
	if len(s.Labels) == 0 {
		return nil, fmt.Errorf("suite %s: a span (question-answering) suite; beluga test scores classifiers (use beluga eval with the answers in pred_only format)", opt.Suite)
	}
	if opt.Sample != nil {
		if opt.Score.Split != "" {
			return nil, fmt.Errorf("--n samples every test's cases as CheckList's suite.run does; with --split %s the draw would not be CheckList's: give one of them", opt.Score.Split)
		}
		if err := SampleSuite(s, opt.Sample.N, opt.Sample.Seed); err != nil {
			return nil, err
		}
	}
	EnsureSplit(s, opt.Score.Split)
	return s, nil
}

// loadModel loads the model, reports the load (-v) and refuses one
// without a trained classifier head unless asked not to.
func loadModel(ctx context.Context, opt Options, maxLength int) (*pretrained.Model, error) {
	r := opt.Resolver
	if r == nil {
		r = hub.FromEnv()
	}
	m, err := pretrained.Load(ctx, opt.Model, pretrained.Options{MaxLength: maxLength, Resolver: r})
	if err != nil {
		return nil, err
	}
	logLoad(ctx, m, maxLength)
	if len(m.Report.Initialised) > 0 && !opt.AllowUntrainedHead {
		return nil, untrainedHead(opt.Model, m.Report)
	}
	return m, nil
}

// predictSuite predicts and scores every input of the scored cases, the
// model's classes read in the suite's order (suitescore.PredictJSONL).
func predictSuite(ctx context.Context, opt Options, s *suites.Suite, m *pretrained.Model, match []int, batch int) (*suitescore.Scored, error) {
	n := metrics.ScoredInputs(s, opt.Score.Split)
	if n == 0 {
		return nil, fmt.Errorf("suite %s has no case to score (split %q)", opt.Suite, opt.Score.Split)
	}
	slog.Info("predicting the suite's inputs", "model", opt.Model, "inputs", n)
	run := func(ctx context.Context, inputs []predict.Input) ([]predict.Output, error) {
		return predict.RunContext(ctx, m.Classifier, m.Tokenizer, inputs, batch)
	}
	return suitescore.Run(ctx, s, run, suitescore.PredictJSONL(match), opt.Score)
}

// writeFolder writes the predictions, test.json, the results, the cases,
// the printed report and the page into out.
func writeFolder(out string, s *suites.Suite, rep *Report, info *report.TestInfo, outs []predict.Output) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	res := rep.Result
	files, err := writeFiles(out, []fileStep{
		{PredictionsFile, func(p string) error { return predict.WriteOutputs(p, outs) }},
		{InfoFile, func(p string) error { return report.WriteTestInfo(p, info) }},
		{ResultsFile, res.WriteJSON},
		{CasesFile, res.WriteCases},
		{TableFile, func(p string) error { return atomicfile.Write(p, rep.Test.WriteText) }},
		{PageFile, func(p string) error {
			src, err := explore.FromTest(rep.Test, []explore.TestRun{{CasesFile: filepath.Join(out, CasesFile), Labels: s.Labels}})
			if err != nil {
				return err
			}
			return atomicfile.Write(p, src.WriteHTML)
		}},
	})
	rep.Files = append(rep.Files, files...)
	return err
}

// fileStep is one file of a test folder: its name and what writes it at
// a path.
type fileStep struct {
	name  string
	write func(path string) error
}

// writeFiles writes each step's file into out, in order, and returns
// their paths; the first that fails stops it, named in the error.
func writeFiles(out string, steps []fileStep) ([]string, error) {
	var files []string
	for _, st := range steps {
		path := filepath.Join(out, st.name)
		if err := st.write(path); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

// testInfo is what test.json records.
func testInfo(opt Options, s *suites.Suite, rep *Report) *report.TestInfo {
	info := &report.TestInfo{Model: opt.Model, Suite: opt.Suite, SuiteName: s.Name, ModelLabels: rep.ModelLabels,
		SuiteLabels: rep.SuiteLabels, Match: map[string]string{}, Classes: s.Labels, Sample: opt.Sample, Descriptions: map[string]string{}}
	for i, l := range rep.ModelLabels {
		info.Match[l] = rep.SuiteLabels[rep.Match[i]]
	}
	for _, f := range s.Functionalities {
		if f.Description != "" {
			info.Descriptions[f.Name] = f.Description
		}
	}
	for _, f := range rep.Flags {
		info.Flags = append(info.Flags, f.Kind+": "+f.Reason)
	}
	return info
}

// WriteTable prints the test report's text: the per-test fail rates, the
// suite score, the grid and the label match.
func (r *Report) WriteTable(w io.Writer) error { return r.Test.WriteText(w) }

// modelLabels are the model's class names: config.json's id2label, and
// HuggingFace's LABEL_i for a class it does not name.
func modelLabels(m *pretrained.Model) []string {
	n := m.Classifier.NumLabels()
	out := make([]string, n)
	for i := range out {
		out[i] = "LABEL_" + strconv.Itoa(i)
		if m.Config != nil {
			if l, ok := m.Config.ID2Label[strconv.Itoa(i)]; ok && l != "" {
				out[i] = l
			}
		}
	}
	return out
}

// matchLabels matches the model's classes to the suite's (the package
// doc's rule): the suite classes matched against and, per model class, its
// suite class.
func matchLabels(model []string, s *suites.Suite, labelMap datasets.LabelMap) ([]string, []int, error) {
	lower := map[string]string{}
	for k, v := range labelMap {
		lower[strings.ToLower(k)] = v.Name
	}
	for k := range labelMap {
		if !slices.ContainsFunc(model, func(l string) bool { return strings.EqualFold(l, k) }) {
			return nil, nil, fmt.Errorf("--label-map names %q, which is not one of the model's labels %s", k, quoted(model))
		}
	}
	var tried []string
	for _, target := range [][]string{s.ModelLabels, s.Labels} {
		if len(target) == 0 || len(target) != len(model) {
			continue
		}
		match := make([]int, len(model))
		taken := map[int]string{}
		var problems []string
		for i, l := range model {
			name := l
			if v, ok := lower[strings.ToLower(l)]; ok {
				name = v
			}
			k := slices.IndexFunc(target, func(t string) bool { return strings.EqualFold(t, name) })
			switch {
			case k < 0:
				problems = append(problems, fmt.Sprintf("%q matches none", l))
			case taken[k] != "":
				problems = append(problems, fmt.Sprintf("%q and %q both match %q", taken[k], l, target[k]))
			default:
				taken[k], match[i] = l, k
			}
		}
		if len(problems) == 0 {
			return target, match, nil
		}
		tried = append(tried, fmt.Sprintf("the suite's classes %s (%s)", quoted(target), strings.Join(problems, "; ")))
	}
	if len(tried) == 0 {
		lists := quoted(s.Labels)
		if len(s.ModelLabels) > 0 {
			lists = quoted(s.ModelLabels) + " (model_labels) or " + lists
		}
		return nil, nil, fmt.Errorf("the model has %d classes %s, the suite %s", len(model), quoted(model), lists)
	}
	return nil, nil, fmt.Errorf("the model's labels %s cannot be matched to %s: give --label-map MODEL=SUITE for each class whose name differs", quoted(model), strings.Join(tried, ", nor to "))
}

func quoted(ls []string) string {
	q := make([]string, len(ls))
	for i, l := range ls {
		q[i] = strconv.Quote(l)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// ParseLabelMap reads --label-map's MODEL=SUITE pairs
// (datasets.ParseLabelMap).
func ParseLabelMap(pairs []string) (datasets.LabelMap, error) {
	return datasets.ParseLabelMap("--label-map", pairs)
}

// EnsureSplit gives a suite without the split asked for BeLUGA's split
// (splits.Ensure, as beluga split computes it) and warns that it did:
// beluga test and beluga eval score --split on any suite.
func EnsureSplit(s *suites.Suite, split suites.Split) {
	if splits.Ensure(s, split) {
		slog.Warn(fmt.Sprintf("--split %s: suite %s carries no split; computing BeLUGA's split (seed %d, as beluga split does) and scoring its %s cases", split, s.Name, splits.BeLUGASeed, split))
	}
}

// untrainedHead refuses a checkpoint without a usable classifier head: its
// parameters would be drawn at random and every fail rate would measure
// noise. It names the missing tensors and what the checkpoint has that
// the model did not use (a head saved under another name, or stored as
// integers).
func untrainedHead(model string, rep models.LoadReport) error {
	msg := fmt.Sprintf("model %s has no trained classifier: its checkpoint lacks %s, which beluga would initialise at random", model, strings.Join(rep.Initialised, ", "))
	if len(rep.Ignored) > 0 {
		msg += fmt.Sprintf("; it has tensors the model does not use: %s", strings.Join(rep.Ignored, ", "))
	}
	return fmt.Errorf("%s (an encoder-only or masked-LM checkpoint, a head saved under another name or as integers?). Test a checkpoint fine-tuned for sequence classification, or pass --allow-untrained-head to test it anyway", msg)
}

// logLoad reports, at debug level (beluga -v), what was loaded: the
// model's directory, its weights file and the dtype its config.json
// names, the checkpoint's tensors left unused, the parameters initialised
// and the buffers checked, the tokenizer, the maximum length and the
// labels. Its stat and read of the checkpoint's files serve only that
// line: without -v they are not done.
func logLoad(ctx context.Context, m *pretrained.Model, maxLength int) {
	if !slog.Default().Enabled(ctx, slog.LevelDebug) {
		return
	}
	weights, dtype := "(inside the archive)", ""
	for _, name := range checkpoint.WeightFiles {
		if _, err := os.Stat(filepath.Join(m.Dir, name)); err == nil {
			weights = name
			break
		}
	}
	if b, err := os.ReadFile(filepath.Join(m.Dir, "config.json")); err == nil {
		var c struct {
			Dtype string `json:"torch_dtype"`
		}
		if json.Unmarshal(b, &c) == nil {
			dtype = c.Dtype
		}
	}
	slog.Debug("loaded model", "dir", m.Dir, "weights", weights, "config_torch_dtype", dtype,
		"buffers_checked", m.Report.Checked, "unused_tensors", m.Report.Ignored, "initialised", m.Report.Initialised,
		"tokenizer", fmt.Sprintf("%T", m.Tokenizer), "max_length", maxLength, "labels", modelLabels(m))
}
