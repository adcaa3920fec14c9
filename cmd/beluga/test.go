package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/modeltest"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/report/explore"
)

// testOptions are beluga test's flags and streams, and the test an
// execution completes them into.
type testOptions struct {
	commandOptions
	model          modelFlags
	suitePath, out string
	labelMap       []string
	sf             scoreFlags
	data           datasets.FileSpec
	sampleN        int
	sampleSeed     uint32
	untrainedHead  bool
	// nGiven and seedGiven say --n and --seed were given: --seed alone
	// draws nothing.
	nGiven, seedGiven bool

	test modeltest.Options
}

// NewCmdTest builds beluga test.
func NewCmdTest() *cobra.Command {
	o := &testOptions{}
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Test a trained classifier on a suite: predict its inputs and score them with CheckList's semantics",
		Long: `test runs a behavioural suite against a classifier someone trained — a HuggingFace model
directory, a .tar.gz of one, a hub id org/name[@revision] (looked up as beluga predict looks it
up), or a model beluga saved — in one command: it predicts every scored input of the suite and
scores the predictions as beluga eval does.

The model's classes are matched to the suite's by name: its config.json id2label names are
compared, case-insensitively, with the suite's model_labels (when it has them and as many as the
model has classes: a 2-way sentiment model on CheckList's 3-way sentiment suite, whose
probabilities are squashed) or else its labels. --label-map MODEL=SUITE names the match of a
class whose name differs (LABEL_0, NEG, non-hate, …); a model whose classes cannot all be matched
to different suite classes is refused with both lists of names.

It prints the test report's per-test table — capability, type, cases run (n), filtered, fails,
fail rate, as CheckList's summary counts them — then the suite score with what it leaves out,
and CheckList's capability × test-type grid of fail rates. It writes into --out: report.html
(the test report: the table, sortable; the grid; each test's failing cases worst first with the
inputs that break the expectation marked), results.json (per-test results), cases.jsonl (one
verdict per case and per input, with every input's text, prediction, probabilities and the size
of its violation), predictions.jsonl (beluga predict's output in the model's own class order),
test.json (what was tested: model, suite, label match, sampling) and table.txt (the printed
report). beluga failures OUT lists the failing cases; beluga report OUT (--format md|html) and
beluga serve OUT read the folder again. A model that predicts nearly one class for every input
is flagged, and a checkpoint without a trained classifier head (an encoder-only or masked-LM
checkpoint such as bert-base-uncased, a head saved under another name or as integers) is
refused, naming the missing tensors: its head would be drawn at random. beluga eval scores
predictions made elsewhere.

--n N --seed S scores, of every test, the cases CheckList's suite.run(n=N, seed=S) runs (numpy's
draw, reproduced exactly): published CheckList fail rates were taken with n=500, seed=1, and
every case of a test can move a fail rate by a few points against them. The report says which
cases were scored.

Calibration — whether the model's confidence matches its accuracy — is measured on the suite's
labelled inputs, per test, and on your own labelled data when --data names a file (read as a
data file of an experiment spec: --data-text and --data-label name its columns, the labels are
the suite's names or class indices; a headerless file names them by position, --data-columns
-,label,text, and --data-quoted, --data-multiline and --data-format declare its dialect as
--quoted, --multiline and --format do for a command's own table): accuracy, macro-F1,
per-class precision and recall, the confusion matrix, expected calibration error (equal-width
and equal-mass bins) and Brier score. They go to calibration.json, calibration.md and
calibration.png (the reliability diagram and the confidence histogram of passing vs failing
cases).

` + dialectHelp,
		Example: `  beluga test --model distilbert/distilbert-base-uncased-finetuned-sst-2-english --suite sentiment.jsonl.gz -o sst2-test
  beluga test --model ./my-hate-model --suite hatecheck.csv --label-map LABEL_0=non-hateful,LABEL_1=hateful -o hc-test
  beluga test --model runs/abc123/train/model --suite suite.jsonl --split test -o out
  beluga test --model ./sst2-model --suite sentiment_suite.tar.gz --n 500 --seed 1 -o sst2-n500   # CheckList's published sample
  beluga test --model ./my-sst2-model --suite sentiment.jsonl.gz --data sst2/dev.tsv --data-text sentence -o sst2-test`,
		Args: cobra.NoArgs,
		RunE: runE(o),
	}
	fl := cmd.Flags()
	o.model.bind(fl)
	fl.StringVar(&o.suitePath, "suite", "", "suite (.jsonl[.gz], CheckList .pkl/.tar.gz, HateCheck .csv)")
	fl.StringSliceVar(&o.labelMap, "label-map", nil, "MODEL_LABEL=SUITE_LABEL for model classes whose name is not the suite's (repeat or comma-separate)")
	fl.StringVarP(&o.out, "out", "o", "", "directory to write the results, cases, predictions, table and page into")
	fl.StringVar(&o.data.Path, "data", "", "your own labelled data (.tsv, .csv, .jsonl[.gz]), measured beside the suite: accuracy, macro-F1, per-class precision/recall, confusion matrix, calibration")
	fl.StringVar(&o.data.TextColumn, "data-text", "text", "--data's text column")
	fl.StringVar(&o.data.PairColumn, "data-pair", "", "--data's second-text column, for text-pair tasks")
	fl.StringVar(&o.data.LabelColumn, "data-label", "label", "--data's label column: the suite's label names or class indices")
	bindDialectOf(fl, &o.data.Dialect, "data-", "--data's ")
	fl.IntVar(&o.sampleN, "n", 0, "score at most this many cases per test, drawn as CheckList's suite.run(n=N, seed=SEED) draws them (published CheckList numbers use n=500, seed=1)")
	fl.Uint32Var(&o.sampleSeed, "seed", 1, "with --n, the seed of CheckList's draw (numpy's np.random.seed)")
	fl.BoolVar(&o.untrainedHead, "allow-untrained-head", false, "test a checkpoint that lacks some of its classifier's parameters (initialised at random; refused otherwise)")
	o.sf.bind(cmd)
	for _, f := range []string{"model", "suite", "out"} {
		cmd.MarkFlagRequired(f)
	}
	cmd.AddCommand(NewCmdTestCompare())
	return cmd
}

// complete turns the flags into the test: scoring options, label map,
// sample, data.
func (o *testOptions) complete(cmd *cobra.Command, _ []string) error {
	o.nGiven, o.seedGiven = cmd.Flags().Changed("n"), cmd.Flags().Changed("seed")
	opt, err := o.sf.options(cmd.Flags())
	if err != nil {
		return err
	}
	lm, err := modeltest.ParseLabelMap(o.labelMap)
	if err != nil {
		return err
	}
	o.test = modeltest.Options{Model: o.model.path, Suite: o.suitePath, LabelMap: lm, Score: opt,
		AllowUntrainedHead: o.untrainedHead, BatchSize: o.model.batchSize, MaxLength: o.model.maxLength, Out: o.out, Resolver: hubResolver(o.ErrOut)}
	if o.nGiven {
		o.test.Sample = &report.Sample{N: o.sampleN, Seed: o.sampleSeed}
	}
	if o.data.Path != "" {
		o.test.Data = &o.data
	}
	return nil
}

func (o *testOptions) validate() error {
	if o.seedGiven && !o.nGiven {
		return fmt.Errorf("--seed draws CheckList's sample of --n cases per test: give --n too")
	}
	return nil
}

// run tests the model and prints the report and where to look next.
func (o *testOptions) run(ctx context.Context) error {
	rep, err := modeltest.Run(ctx, o.test)
	if err != nil {
		return err
	}
	for _, f := range rep.Flags {
		slog.Warn("sanity check", "flag", f.Kind, "reason", f.Reason)
	}
	if err := rep.WriteTable(o.Out); err != nil {
		return err
	}
	w := o.Out
	printCalibration(w, rep.Calibration)
	fmt.Fprintf(w, "\nwrote %s (report.html: the test report)\n", o.out)
	fmt.Fprintf(w, "next: beluga failures %s     # failing cases, worst first, breaking inputs marked ✗\n", o.out)
	fmt.Fprintf(w, "      beluga serve %s        # the report in the browser\n", o.out)
	return nil
}

// testCompareOptions are beluga test compare's flags and streams; its
// arguments are the two folders of beluga test it compares.
type testCompareOptions struct {
	commandOptions
	format, out string
}

// NewCmdTestCompare builds beluga test compare.
func NewCmdTestCompare() *cobra.Command {
	o := &testCompareOptions{}
	cmd := &cobra.Command{
		Use:   "compare OUT_A OUT_B",
		Short: "Two models side by side on one suite: per test both fail rates, the difference, McNemar's p and BH q",
		Long: `compare reads two folders beluga test wrote for the same suite (and the same sampling) and
prints, per test, both models' fails and fail rates, the difference B − A in points, McNemar's
exact test over the cases both models scored (of the cases whose verdicts differ, how many B
passes, against Binomial(n, ½), two-sided — scipy.stats.binomtest's p), the Benjamini–Hochberg
q-value over the tests, and the number of cases that flip. --format md adds each test's failing
cases, the flips first; --format html writes the test report page with both models' columns and
their cases side by side.`,
		Example: `  beluga test compare sst2-bert sst2-distilbert
  beluga test compare sst2-bert sst2-distilbert --format html -o compare.html`,
		Args: cobra.ExactArgs(2),
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.format, "format", "text", "text (the table), md (with the failing cases, flips first) or html (the page)")
	cmd.Flags().StringVarP(&o.out, "out", "o", "", "file to write (default standard output)")
	enumFlag(cmd, "format", "text", "md", "html")
	return cmd
}

func (o *testCompareOptions) validate() error {
	if o.format == "markdown" {
		o.format = "md" // the name before md
	}
	return checkFlag("format", o.format, "text", "md", "html")
}

// run reads both folders and writes the comparison in --format.
func (o *testCompareOptions) run(context.Context) error {
	write, err := testReport(o.format, o.args...)
	if err != nil {
		return err
	}
	return o.write(o.out, write)
}

// testReport reads the folders beluga test wrote and returns what writes
// their report in format: html (the page beluga test writes), text (the
// table) or Markdown (anything else: md, markdown).
func testReport(format string, dirs ...string) (func(io.Writer) error, error) {
	if format == "html" {
		src, err := explore.FromTestDirs(dirs...)
		if err != nil {
			return nil, err
		}
		return src.WriteHTML, nil
	}
	r, _, err := report.ReadTestReport(dirs...)
	if err != nil {
		return nil, err
	}
	if format == "text" {
		return r.WriteText, nil
	}
	return r.WriteMarkdown, nil
}

// printCalibration says in two lines how the user's data and the suite's
// labelled inputs went; calibration.md has the rest.
func printCalibration(w io.Writer, c *report.TestCalibration) {
	if c == nil {
		return
	}
	if c.Data != nil {
		fmt.Fprintf(w, "your data (%s): %d examples, accuracy %.1f%%, macro-F1 %.1f%%, ECE %.3f\n", c.Data.Name, c.Data.N, 100*c.Data.Accuracy, 100*c.Data.MacroF1, c.Data.Width.ECE)
	}
	if len(c.Tests) > 0 {
		all := c.Tests[0].Calibration
		fmt.Fprintf(w, "suite's labelled inputs: %d, accuracy %.1f%%, mean confidence %.1f%%, ECE %.3f (calibration.md: per test, per class, the confusion matrix; calibration.png)\n",
			all.N, 100*all.Accuracy, 100*all.Confidence, all.ECE)
	}
}
