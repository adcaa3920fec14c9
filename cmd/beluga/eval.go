package main

import (
	"context"
	"encoding"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/modeltest"
	"github.com/beluga-nlp/beluga/suites"
)

// evalOptions are beluga eval's flags and streams, and the prediction
// format and scoring options an execution completes them into.
type evalOptions struct {
	commandOptions
	suitePath, format, out, casesPath, smartTags string
	byCase                                       metrics.CaseTable
	sf                                           scoreFlags

	predFormat metrics.Format
	opt        metrics.ScoreOptions
	// formatGiven says --predictions-format was given, which a table of
	// labels keyed by case (--predictions-column) contradicts.
	formatGiven bool
}

// NewCmdEval builds beluga eval.
func NewCmdEval() *cobra.Command {
	o := &evalOptions{}
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Score predictions made anywhere on a suite, with CheckList's exact semantics",
		Long: `eval reads one prediction line per input of the scored cases, in suite order (all
cases, or those of --split), in one of CheckList's formats:

  pred_and_softmax  "pred p0 p1 ..."      softmax  "p0 p1 ..."
  binary_conf       "p" (of class 1)      pred_only "label" or an answer text

Two-way sentiment probabilities are squashed to CheckList's three classes. It writes the
per-functionality results (and optionally one verdict per case) and prints a table.

A table of one prediction per case instead — a published system's outputs, such as HateCheck's
published_predictions.csv (case_id, then a column of labels per model) — is read with
--predictions-column MODEL (and --id-column, default case_id): CSV, TSV or JSON lines, a label
name or class index per row, for suites whose cases have one input each.`,
		Example: `  beluga eval --suite sentiment.jsonl.gz --predictions preds.txt --predictions-format pred_and_softmax --split test -o results.json
  beluga eval --suite azimuth-sst2.jsonl --predictions preds.txt --format softmax --output results.json --smart-tags -
  beluga eval --suite squad_suite.tar.gz --predictions answers.txt --predictions-format pred_only -o results.json --cases cases.jsonl
  beluga eval --suite test_suite_cases.csv --predictions published_predictions.csv --predictions-column perspective -o perspective.json`,
		Args: cobra.NoArgs,
		RunE: runE(o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.suitePath, "suite", "", "suite (.jsonl[.gz], CheckList .pkl/.tar.gz, HateCheck .csv)")
	fl.StringVar(&o.byCase.Path, "predictions", "", "prediction file, one line per scored input")
	fl.StringVar(&o.format, "predictions-format", string(metrics.PredAndSoftmax), "format of --predictions: pred_and_softmax, softmax, binary_conf, pred_only or predict_jsonl (beluga predict's output)")
	fl.StringVar(&o.byCase.Pred, "predictions-column", "", "read --predictions as a table (CSV, TSV, JSON lines) of one label per case, from this column")
	fl.StringVar(&o.byCase.ID, "id-column", "case_id", "with --predictions-column: the column of the suite's case ids")
	fl.StringVarP(&o.out, "out", "o", "", "results JSON to write")
	fl.StringVar(&o.casesPath, "cases", "", "also write one verdict per test case (JSON lines)")
	o.sf.bind(cmd)
	fl.StringVar(&o.smartTags, "smart-tags", "", "Azimuth suites: write each utterance's smart tags (failed_fuzzy_matching, failed_punctuation) to this file, or - to print them")
	// The names before -o meant --out everywhere and --format named the
	// output's format everywhere else.
	fl.SetNormalizeFunc(renamedFlags(map[string]string{"output": "out", "format": "predictions-format"}))
	enumFlag(cmd, "predictions-format", "pred_and_softmax", "softmax", "binary_conf", "pred_only", "predict_jsonl")
	for _, req := range []string{"suite", "predictions", "out"} {
		cmd.MarkFlagRequired(req)
	}
	return cmd
}

func (o *evalOptions) complete(cmd *cobra.Command, _ []string) error {
	o.formatGiven = cmd.Flags().Changed("predictions-format")
	var err error
	if o.predFormat, err = metrics.ParseFormat(o.format); err != nil {
		return err
	}
	o.opt, err = o.sf.options(cmd.Flags())
	return err
}

// validate refuses contradicting flags and outputs that cannot be written
// before the suite is read.
func (o *evalOptions) validate() error {
	if o.byCase.Pred != "" && o.formatGiven {
		return fmt.Errorf("--predictions-format %s and --predictions-column: a table keyed by case holds labels; give one of them", o.format)
	}
	return atomicfile.Writable(o.out, o.casesPath, o.smartTags)
}

// run scores the predictions, writes the results and prints the table.
func (o *evalOptions) run(context.Context) error {
	s, err := suites.Open(o.suitePath)
	if err != nil {
		return err
	}
	modeltest.EnsureSplit(s, o.opt.Split)
	preds, err := readEvalPredictions(s, o.opt.Split, o.predFormat, o.byCase)
	if err != nil {
		return err
	}
	res, err := metrics.Score(s, preds, o.opt)
	if err != nil {
		return err
	}
	if err := res.WriteJSON(o.out); err != nil {
		return err
	}
	if o.casesPath != "" {
		if err := res.WriteCases(o.casesPath); err != nil {
			return err
		}
	}
	if err := res.WriteTable(o.Out); err != nil {
		return err
	}
	if o.smartTags != "" {
		return writeSmartTags(o.Out, s, res, o.smartTags)
	}
	return nil
}

// readEvalPredictions reads eval's predictions: a table of one label per
// case when byCase names its column, else one line per scored input in f.
func readEvalPredictions(s *suites.Suite, split suites.Split, f metrics.Format, byCase metrics.CaseTable) ([]metrics.Prediction, error) {
	if byCase.Pred != "" {
		return metrics.ReadCasePredictions(s, split, byCase)
	}
	return metrics.ReadPredictions(byCase.Path, f, metrics.ScoredInputs(s, split), len(s.Labels) == 0)
}

// scoreFlags are the flags that say how a suite is scored, shared by
// beluga eval and beluga test.
type scoreFlags struct {
	split, squash, triplet, labels string
	tolerance                      float64
	exclude                        []string
}

func (f *scoreFlags) bind(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.split, "split", "", "score only this split (train, validation, test); a suite without splits gets BeLUGA's split computed (seed 123), and says so")
	fl.StringVar(&f.squash, "squash", "checklist", "sentiment 3-class squash at p = 0.5 ± 1/6: checklist (class 0, as CheckList) or corrected")
	fl.StringVar(&f.triplet, "triplet", "checklist", "QQP implication rule: checklist (its notebook's always-failing branch) or corrected")
	fl.StringVar(&f.labels, "labels", "beluga", "labels scored against: beluga (its re-labelled QQP \"Order does matter for asymmetric relations\") or checklist")
	fl.Float64Var(&f.tolerance, "tolerance", 0, "when given, replaces the tolerance of every INV / DIR expectation; without it each test keeps its own (0.1 in CheckList's release suites)")
	fl.StringSliceVar(&f.exclude, "exclude", nil, "tests left out of the suite score (default: on a sentiment suite BeLUGA's two, whose cases a confident model has all filtered: "+quotedList(metrics.UnscorableSentiment)+"; none on others)")
	enumFlag(cmd, "squash", "checklist", "corrected")
	enumFlag(cmd, "triplet", "checklist", "corrected")
	enumFlag(cmd, "labels", "beluga", "checklist")
	enumFlag(cmd, "split", "train", "validation", "test")
}

// options checks the flags and returns the scoring options they set.
func (f *scoreFlags) options(fl *pflag.FlagSet) (metrics.ScoreOptions, error) {
	opt := metrics.ScoreOptions{Exclude: f.exclude}
	var err error
	if opt.Split, err = parseSplit(f.split); err != nil {
		return opt, err
	}
	if err := parseMode(f.squash, "squash", &opt.Squash); err != nil {
		return opt, err
	}
	if err := parseMode(f.triplet, "triplet", &opt.Triplet); err != nil {
		return opt, err
	}
	if err := checkFlag("labels", f.labels, "beluga", "checklist"); err != nil {
		return opt, err
	}
	opt.CheckListLabels = f.labels == "checklist"
	if fl.Changed("tolerance") {
		if !(f.tolerance >= 0) || math.IsInf(f.tolerance, 0) {
			return opt, fmt.Errorf("--tolerance %v: want a finite number of at least 0", f.tolerance)
		}
		t := f.tolerance
		opt.Tolerance = &t
	}
	return opt, nil
}

// parseSplit reads a --split flag: a suite's split, or "" for all cases.
func parseSplit(s string) (suites.Split, error) {
	if s == "" {
		return "", nil
	}
	if err := checkFlag("split", s, string(suites.SplitTrain), string(suites.SplitValidation), string(suites.SplitTest)); err != nil {
		return "", err
	}
	return suites.Split(s), nil
}

// parseMode reads --flag's "checklist" or "corrected" into a faithful or
// corrected mode (metrics.SquashMode, metrics.TripletMode), as results
// name them.
func parseMode(s, flag string, mode encoding.TextUnmarshaler) error {
	if mode.UnmarshalText([]byte(s)) != nil {
		return checkFlag(flag, s, "checklist", "corrected")
	}
	return nil
}

// quotedList quotes names for a help text: "a", "b".
func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
