package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/report/explore"
)

// reportOptions are beluga report's flags and argument.
type reportOptions struct {
	arg, format, out, store, pvalues, passRates, comparisons string
	bootstrap, spread                                        string
	trials, resamples                                        int
	seed                                                     uint32
	ci, swing                                                float64
	groups, curve, gAccuracy, base, sizes                    string
	calibration                                              string
	baselines, partial, mixedInputs                          bool
	swingSet, baseSet                                        bool
}

// NewCmdReport builds beluga report.
func NewCmdReport() *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report SPEC|DIR|TEST_FOLDER",
		Short: "Write Table 3 (G scores per task and score, significance vs the IID baseline) from a run store",
		Long: `report reads the finished runs of an experiment (its spec, or a run store
directory) and writes BeLUGA's Table 3: rows = IID baseline, then configuration
x method; columns = i.i.d. score per task, G_seen / G_func / G_class / G_type per
task, Avg. The best value per column is bold. In LaTeX, cells significantly
above / below the baseline (p < 0.05: McNemar's exact test for i.i.d. scores,
approximate randomisation for G) are PineGreen / red; with -o the p-values go
to a companion CSV next to the table. --pass-rates writes every row's
per-functionality pass rates.

A table is computed from every run of its sweep. When some are not done —
missing, incomplete, running, failed, stale (their inputs changed since they
ran) or damaged (their files are not what "done" recorded) — report lists them
per row and exits non-zero; --partial writes the table without them and marks
every cell they leave incomplete ` + report.MarkIncomplete + `, explained in a footnote (the HTML page
lists them above the table). Runs of one task that read different versions of
an input (a re-imported suite) are refused unless --mixed-inputs.

--format html writes one self-contained page (no network: script, style and
compressed data inline) with the table, the heatmap as a grid to click, each
functionality's test cases with every run's verdict and prediction side by
side, and each run's curve, hyper-parameters and timing. beluga serve shows
the same page for stores too large for one file.

Several seeds (a spec's seeds: [1, 2, 3]) make every cell the mean +- standard
error over seeds; the CSV adds each seed's value and the p-values CSV a paired
t-test over seeds beside the tests over cases; --spread writes each
functionality's pass-rate spread over seeds (min, max, IQR), and --swing
keeps only those whose pass rate moves more than that many points. --ci 95
adds percentile bootstrap intervals (--resamples B, seeded by --seed) to
every format: --bootstrap hierarchical (the default) resamples
functionalities, then cases within them, i.i.d. examples by themselves;
--bootstrap cases resamples only cases within each functionality.
--comparisons writes each functionality's
pass rate against the baseline's with McNemar's exact p-value and its
Benjamini-Hochberg q-value. docs/statistics.md gives the formulas.

Every value is computed on a named set of cases, and every row of a
column on the same one: a held-out column whose folds do not cover the suite
(a metadata score such as meta:target_ident, a partial fold list) scores the
baseline and the constant predictors on the held-out cases too, and says
which under the table. --groups writes the per-group tables: per held-out
fold (a functionality, class, type or metadata value) the baseline, the best
constant predictor, the seen run and the held-out fold on that group's cases,
the gap seen - held out with its p-value (and interval with --ci). --sizes
writes what each run trained on: its i.i.d. rows and suite cases (its
train/trained.json, or drawn from the data for a run without one), a
held-out run's suite cases beside its seen run's.

Cells of runs that failed a sanity check (a constant predictor, a suite
never learnt) are marked and explained in a footnote, and never bold; nor is
a tie. A value not above what the majority class or a constant predictor
gets on the same cases is marked with a section sign and never bold;
--baselines shows those computed rows (docs/experiment-spec.md).

Significance is against the IID row (of several, the one at the largest
train_size), the spec's baseline: or --baseline ROW ("IID train_size=1000",
"IID+T: L2", none). A held-out G is the harmonic mean of its suite score and
the seen run's i.i.d. score, as BeLUGA computes it (--g-accuracy seen), or the
fold runs' own (--g-accuracy fold). --learning-curve writes a sweep over
train_size as a table, a column per size, every declared i.i.d. metric and the
suite score, mean +- SE over seeds.`,
		Example: `  beluga report specs/quickstart.yaml
  beluga report runs/sent-full --format latex -o table3.tex
  beluga report specs/sent-full.yaml --format csv -o table3.csv --pass-rates pass-rates.csv
  beluga report runs/two-seeds --ci 95 --comparisons functionalities.csv
  beluga report quickstart-out --format html -o report.html   # after beluga quickstart
  beluga report sst2-test                                     # the test report of a folder beluga test wrote
  beluga report runs/sent-full --partial                      # while its sweep is running
  beluga report runs/two-seeds --spread swings.csv --swing 20
  beluga report specs/hatecheck-identout.yaml --groups groups.md
  beluga report specs/learning-curve.yaml --learning-curve learning-curve.md`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.arg, o.swingSet, o.baseSet = args[0], cmd.Flags().Changed("swing"), cmd.Flags().Changed("baseline")
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.format, "format", "md", "table format: md, latex, csv or html (one self-contained page: table, heatmap, cases, runs)")
	cmd.Flags().StringVarP(&o.out, "out", "o", "", "output file (default standard output)")
	cmd.Flags().StringVar(&o.store, "store", "", "run store directory (default: the spec's out)")
	cmd.Flags().StringVar(&o.pvalues, "pvalues", "", "CSV of p-values against the baseline (default: next to -o as NAME-pvalues.csv)")
	cmd.Flags().StringVar(&o.passRates, "pass-rates", "", "CSV of per-functionality pass rates")
	cmd.Flags().StringVar(&o.comparisons, "comparisons", "", "CSV of per-functionality comparisons with the baseline (p- and q-values)")
	cmd.Flags().IntVar(&o.trials, "trials", report.DefaultTrials, "approximate randomisation trials")
	cmd.Flags().Uint32Var(&o.seed, "seed", report.DefaultSeed, "seed of the randomisation and the bootstrap (BeLUGA: 42; 0 also means 42)")
	cmd.Flags().Float64Var(&o.ci, "ci", 0, "add bootstrap confidence intervals at this level in percent, e.g. 95")
	cmd.Flags().StringVar(&o.bootstrap, "bootstrap", report.DefaultBootstrap, "what --ci resamples: hierarchical (functionalities, then cases) or cases (cases within each functionality)")
	cmd.Flags().StringVar(&o.spread, "spread", "", "CSV of each functionality's pass-rate spread over seeds (min, max, range, quartiles, IQR)")
	cmd.Flags().Float64Var(&o.swing, "swing", 0, "with --spread, keep only functionalities whose pass rate ranges over more than this many points across seeds")
	cmd.Flags().IntVar(&o.resamples, "resamples", metrics.DefaultResamples, "bootstrap resamples (B)")
	cmd.Flags().BoolVar(&o.baselines, "baselines", false, "show the computed rows: the majority class and a constant predictor per label, on every cell's cases (values not above them are marked either way)")
	cmd.Flags().StringVar(&o.calibration, "calibration", "", "calibration and worst group per task, row and score (.md or .csv; - for Markdown on standard output): ECE and Brier score on the i.i.d. test set (ece_iid, brier_iid) and on the score's suite cases (ece_test), the worst group's pass rate with its interval")
	cmd.Flags().StringVar(&o.sizes, "sizes", "", "per-run sizes (.md or .csv; - for Markdown on standard output): the i.i.d. rows and suite cases each run trained on, a held-out run's beside its seen run's")
	cmd.Flags().StringVar(&o.groups, "groups", "", "per-group tables (.md or .csv; - for Markdown on standard output): per held-out fold, baseline, constant, seen, held out and gap on the group's cases")
	cmd.Flags().StringVar(&o.curve, "learning-curve", "", "learning-curve table of a sweep over train_size (.md or .csv; -: Markdown on standard output)")
	cmd.Flags().StringVar(&o.gAccuracy, "g-accuracy", report.GAccuracySeen, "i.i.d. score of a held-out G: seen (the seen run's, BeLUGA's) or fold (the fold runs' own)")
	cmd.Flags().StringVar(&o.base, "baseline", "", `row every other is tested against: "IID train_size=4000", "IID+T: L2", or none (default: the spec's baseline:, else the IID row, of several the largest train_size)`)
	cmd.Flags().BoolVar(&o.partial, "partial", false, "write the table of a sweep with runs not done, marking the cells they leave incomplete")
	cmd.Flags().BoolVar(&o.mixedInputs, "mixed-inputs", false, "write the table of runs of one task that read different versions of an input")
	return cmd
}

// validate checks the flags before the store is read or any table built.
func (o *reportOptions) validate() error {
	if o.trials < 1 || o.resamples < 0 {
		return fmt.Errorf("--trials %d, --resamples %d: want at least 1 trial and no negative resamples", o.trials, o.resamples)
	}
	switch o.format {
	case "md", "markdown", "latex", "tex", "csv", "html":
	default:
		return fmt.Errorf("unknown --format %q (want md, latex, csv or html)", o.format)
	}
	if o.spread == "" && o.swingSet {
		return fmt.Errorf("--swing needs --spread FILE")
	}
	for flag, path := range map[string]string{"groups": o.groups, "learning-curve": o.curve, "sizes": o.sizes, "calibration": o.calibration} {
		if ext := strings.ToLower(filepath.Ext(path)); path != "" && path != "-" && ext != ".md" && ext != ".markdown" && ext != ".csv" {
			return fmt.Errorf("--%s %s: want a .md or .csv file (or - for Markdown on standard output)", flag, path)
		}
	}
	if err := atomicfile.Writable(o.out, o.pvalues, o.comparisons, o.passRates, o.spread, o.groups, o.curve, o.sizes, o.calibration); err != nil {
		return err
	}
	return nil
}

func (o *reportOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	if report.IsTestDir(o.arg) {
		return o.runTest(stdout, stderr)
	}
	opt := report.Options{Trials: o.trials, Seed: o.seed, CI: o.ci, Resamples: o.resamples, Bootstrap: o.bootstrap, Baselines: o.baselines,
		GAccuracy: o.gAccuracy, Baseline: o.base, Partial: o.partial, MixedInputs: o.mixedInputs}
	if !o.baseSet {
		opt.Baseline = specBaseline(o.arg)
	}
	var (
		tab   *report.Table
		write func(io.Writer) error
	)
	if o.format == "html" {
		src, err := loadSource(ctx, o.arg, o.store, explore.Options{Report: opt})
		if err != nil {
			return err
		}
		tab, write = src.Table, src.WriteHTML
	} else {
		var err error
		if tab, err = loadTable(ctx, stderr, o.arg, o.store, opt); err != nil {
			return err
		}
		write = map[string]func(io.Writer) error{"md": tab.WriteMarkdown, "markdown": tab.WriteMarkdown,
			"latex": tab.WriteLaTeX, "tex": tab.WriteLaTeX, "csv": tab.WriteCSV}[o.format]
	}
	if lines := tab.Partial(); len(lines) > 0 {
		fmt.Fprintf(stderr, "partial report: the table lacks these runs of its sweep (cells marked %s):\n  %s\n", report.MarkIncomplete, strings.Join(lines, "\n  "))
	}
	pvalues := o.pvalues
	if o.out == "" || o.out == "-" {
		if err := write(stdout); err != nil {
			return err
		}
	} else {
		if err := atomicfile.Write(o.out, write); err != nil {
			return err
		}
		// A side file is named after a file, never a device or FIFO
		// (-o /dev/null would make /dev/null-pvalues.csv).
		if pvalues == "" && atomicfile.Regular(o.out) {
			pvalues = strings.TrimSuffix(o.out, filepath.Ext(o.out)) + "-pvalues.csv"
		}
		fmt.Fprintln(stderr, "wrote", o.out)
	}
	for _, f := range []struct {
		path  string
		write func(io.Writer) error
	}{
		{pvalues, tab.WritePValuesCSV},
		{o.comparisons, tab.WriteComparisonsCSV},
		{o.spread, func(w io.Writer) error { return tab.WriteSpreadCSV(w, o.swing) }},
		{o.passRates, tab.WritePassRatesCSV},
	} {
		if f.path == "" {
			continue
		}
		if err := atomicfile.Write(f.path, f.write); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "wrote", f.path)
	}
	for _, f := range []struct {
		path    string
		md, csv func(io.Writer) error
	}{{o.groups, tab.WriteGroupsMarkdown, tab.WriteGroupsCSV}, {o.curve, tab.WriteLearningCurveMarkdown, tab.WriteLearningCurveCSV},
		{o.sizes, func(w io.Writer) error { return writeSizes(ctx, w, o.arg, o.store, false) }, func(w io.Writer) error { return writeSizes(ctx, w, o.arg, o.store, true) }},
		{o.calibration, func(w io.Writer) error { return writeCalibration(ctx, w, o.arg, o.store, false) }, func(w io.Writer) error { return writeCalibration(ctx, w, o.arg, o.store, true) }}} {
		if f.path == "" {
			continue
		}
		write := f.md
		if strings.EqualFold(filepath.Ext(f.path), ".csv") {
			write = f.csv
		}
		if f.path == "-" {
			if err := write(stdout); err != nil {
				return err
			}
			continue
		}
		if err := atomicfile.Write(f.path, write); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "wrote", f.path)
	}
	return nil
}

// loadTable builds Table 3 from an experiment spec or a run store
// directory (report.FromStore: every run of the sweep, done or not).
// A store directory's note (which of its sweeps it is) goes to notes.
func loadTable(ctx context.Context, notes io.Writer, arg, store string, opt report.Options) (*report.Table, error) {
	sw, err := readSweep(ctx, arg, store)
	if err != nil {
		return nil, err
	}
	if sw.Note != "" {
		fmt.Fprintln(notes, sw.Note)
	}
	opt.Inputs = sw.Inputs
	runs := sw.Runs
	if sw.Spec == nil {
		report.SortRuns(runs)
	}
	return report.FromStore(sw.Store, runs, opt)
}

// loadSource reads an experiment spec's runs, or a run store directory's,
// for the HTML page.
func loadSource(ctx context.Context, arg, store string, opt explore.Options) (*explore.Source, error) {
	sw, err := readSweep(ctx, arg, store)
	if err != nil {
		return nil, err
	}
	opt.Report.Inputs = sw.Inputs
	runs := sw.Runs
	if sw.Spec == nil {
		report.SortRuns(runs)
	}
	return explore.Build(sw.Store, runs, opt)
}

// specBaseline is the baseline: a spec names (none for a store directory
// or a spec that names none: the report's default).
func specBaseline(arg string) string {
	if fi, err := os.Stat(arg); err != nil || fi.IsDir() {
		return ""
	}
	spec, err := experiments.LoadSpec(arg)
	if err != nil {
		return ""
	}
	return spec.Baseline
}

// writeCalibration writes the calibration table of a spec's or store's
// done runs (report.CalibrationLines).
func writeCalibration(ctx context.Context, w io.Writer, arg, store string, csv bool) error {
	sw, err := openSweep(ctx, arg, store)
	if err != nil {
		return err
	}
	lines, err := report.CalibrationLines(sw.Store, sw.Runs, metrics.DefaultBins)
	if err != nil {
		return err
	}
	if csv {
		return report.WriteCalibrationCSV(w, lines)
	}
	return report.WriteCalibrationMarkdown(w, lines, metrics.DefaultBins)
}

// writeSizes writes the sizes table of a spec's or store's runs
// (experiments.SizeRows).
func writeSizes(ctx context.Context, w io.Writer, arg, store string, csv bool) error {
	sw, err := openSweep(ctx, arg, store)
	if err != nil {
		return err
	}
	rows, err := experiments.SizeRows(sw.Store, sw.Runs)
	if err != nil {
		return err
	}
	return experiments.WriteSizes(w, rows, csv)
}

// runTest writes the test report of a folder beluga test wrote: the same
// page beluga test writes (html), or its Markdown.
func (o *reportOptions) runTest(stdout, stderr io.Writer) error {
	var write func(io.Writer) error
	switch o.format {
	case "html":
		src, err := explore.FromTestDirs(o.arg)
		if err != nil {
			return err
		}
		write = src.WriteHTML
	case "md", "markdown":
		r, _, err := report.ReadTestReport(o.arg)
		if err != nil {
			return err
		}
		write = r.WriteMarkdown
	default:
		return fmt.Errorf("%s is a folder beluga test wrote: its report is --format md or html, not %s", o.arg, o.format)
	}
	if o.out == "" || o.out == "-" {
		return write(stdout)
	}
	if err := atomicfile.Write(o.out, write); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "wrote", o.out)
	return nil
}
