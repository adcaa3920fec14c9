package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/report/explore"
)

// reportOptions are beluga report's flags and argument.
type reportOptions struct {
	tableOptions
	format, out                             string
	pvalues, passRates, comparisons, spread string
	groups, curve, sizes, calibration       string
	templates                               string
	swing                                   float64
	baselines, mixedInputs, swingSet        bool
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
suite score, mean +- SE over seeds. --templates writes a sweep over
prompt.template (docs/prompting.md) as a table, a column per template with
that template's row's value in each of Table 3's columns, then the mean,
minimum, maximum and range across templates.`,
		Example: `  beluga report specs/quickstart.yaml
  beluga report runs/sent-full --format latex -o table3.tex
  beluga report specs/sent-full.yaml --format csv -o table3.csv --pass-rates pass-rates.csv
  beluga report runs/two-seeds --ci 95 --comparisons functionalities.csv
  beluga report quickstart-out --format html -o report.html   # after beluga quickstart
  beluga report sst2-test                                     # the test report of a folder beluga test wrote
  beluga report runs/sent-full --partial                      # while its sweep is running
  beluga report runs/two-seeds --spread swings.csv --swing 20
  beluga report specs/hatecheck-identout.yaml --groups groups.md
  beluga report specs/learning-curve.yaml --learning-curve learning-curve.md
  beluga report runs/prompted --templates templates.md       # after a sweep over prompt.template`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// addFlags defines report's flags: the table's (tableOptions), its
// format and files.
func (o *reportOptions) addFlags(fs *pflag.FlagSet) {
	o.tableOptions.addFlags(fs)
	fs.StringVar(&o.format, "format", "md", "table format: md, latex, csv or html (one self-contained page: table, heatmap, cases, runs)")
	fs.StringVarP(&o.out, "out", "o", "", "output file (default standard output)")
	fs.StringVar(&o.pvalues, "pvalues", "", "CSV of p-values against the baseline (default: next to -o as NAME-pvalues.csv)")
	fs.StringVar(&o.passRates, "pass-rates", "", "CSV of per-functionality pass rates")
	fs.StringVar(&o.comparisons, "comparisons", "", "CSV of per-functionality comparisons with the baseline (p- and q-values)")
	fs.StringVar(&o.spread, "spread", "", "CSV of each functionality's pass-rate spread over seeds (min, max, range, quartiles, IQR)")
	fs.Float64Var(&o.swing, "swing", 0, "with --spread, keep only functionalities whose pass rate ranges over more than this many points across seeds")
	fs.BoolVar(&o.baselines, "baselines", false, "show the computed rows: the majority class and a constant predictor per label, on every cell's cases (values not above them are marked either way)")
	fs.StringVar(&o.calibration, "calibration", "", "calibration and worst group per task, row and score (.md or .csv; - for Markdown on standard output): ECE and Brier score on the i.i.d. test set (ece_iid, brier_iid) and on the score's suite cases (ece_test), the worst group's pass rate with its interval")
	fs.StringVar(&o.sizes, "sizes", "", "per-run sizes (.md or .csv; - for Markdown on standard output): the i.i.d. rows and suite cases each run trained on, a held-out run's beside its seen run's")
	fs.StringVar(&o.groups, "groups", "", "per-group tables (.md or .csv; - for Markdown on standard output): per held-out fold, baseline, constant, seen, held out and gap on the group's cases")
	fs.StringVar(&o.curve, "learning-curve", "", "learning-curve table of a sweep over train_size (.md or .csv; -: Markdown on standard output)")
	fs.StringVar(&o.templates, "templates", "", "per-template table of a sweep over prompt.template (.md or .csv; -: Markdown on standard output): each template's value per prompted row and column, with the mean, min, max and range across templates")
	fs.BoolVar(&o.mixedInputs, "mixed-inputs", false, "write the table of runs of one task that read different versions of an input")
}

func (o *reportOptions) complete(cmd *cobra.Command, args []string) error {
	o.swingSet = cmd.Flags().Changed("swing")
	return o.tableOptions.complete(cmd, args)
}

// validate checks the flags before the store is read or any table built.
func (o *reportOptions) validate() error {
	if err := o.tableOptions.validate(); err != nil {
		return err
	}
	switch o.format {
	case "md", "markdown", "latex", "tex", "csv", "html":
	default:
		return fmt.Errorf("unknown --format %q (want md, latex, csv or html)", o.format)
	}
	if o.spread == "" && o.swingSet {
		return fmt.Errorf("--swing needs --spread FILE")
	}
	for flag, path := range map[string]string{"groups": o.groups, "learning-curve": o.curve, "sizes": o.sizes, "calibration": o.calibration, "templates": o.templates} {
		if ext := strings.ToLower(filepath.Ext(path)); path != "" && path != "-" && ext != ".md" && ext != ".markdown" && ext != ".csv" {
			return fmt.Errorf("--%s %s: want a .md or .csv file (or - for Markdown on standard output)", flag, path)
		}
	}
	if err := atomicfile.Writable(o.out, o.pvalues, o.comparisons, o.passRates, o.spread, o.groups, o.curve, o.sizes, o.calibration, o.templates); err != nil {
		return err
	}
	return nil
}

func (o *reportOptions) run(ctx context.Context) error {
	if report.IsTestDir(o.arg) {
		return o.runTest()
	}
	opt := o.reportOptions()
	opt.Baselines, opt.MixedInputs = o.baselines, o.mixedInputs
	tab, write, err := o.formatted(ctx, opt)
	if err != nil {
		return err
	}
	if lines := tab.Partial(); len(lines) > 0 {
		fmt.Fprintf(o.ErrOut, "partial report: the table lacks these runs of its sweep (cells marked %s):\n  %s\n", report.MarkIncomplete, strings.Join(lines, "\n  "))
	}
	outs := []output{{o.out, write}}
	pvalues := o.pvalues
	// A side file is named after a file, never a device or FIFO (-o
	// /dev/null would make /dev/null-pvalues.csv).
	if pvalues == "" && o.out != "" && o.out != "-" && atomicfile.Regular(o.out) {
		pvalues = strings.TrimSuffix(o.out, filepath.Ext(o.out)) + "-pvalues.csv"
	}
	for _, f := range []output{
		{pvalues, tab.WritePValuesCSV},
		{o.comparisons, tab.WriteComparisonsCSV},
		{o.spread, func(w io.Writer) error { return tab.WriteSpreadCSV(w, o.swing) }},
		{o.passRates, tab.WritePassRatesCSV},
	} {
		if f.path != "" {
			outs = append(outs, f)
		}
	}
	return o.writeAll(append(outs, o.sideTables(ctx, tab)...))
}

// formatted is Table 3 of the store and what writes it in --format.
func (o *reportOptions) formatted(ctx context.Context, opt report.Options) (*report.Table, func(io.Writer) error, error) {
	if o.format == "html" {
		src, err := o.source(ctx, explore.Options{Report: opt})
		if err != nil {
			return nil, nil, err
		}
		return src.Table, src.WriteHTML, nil
	}
	tab, err := o.table(ctx, opt)
	if err != nil {
		return nil, nil, err
	}
	write := map[string]func(io.Writer) error{"md": tab.WriteMarkdown, "markdown": tab.WriteMarkdown,
		"latex": tab.WriteLaTeX, "tex": tab.WriteLaTeX, "csv": tab.WriteCSV}[o.format]
	return tab, write, nil
}

// output is one file of a report, or standard output ("" or -).
type output struct {
	path  string
	write func(io.Writer) error
}

// sideTables are the tables beside Table 3 that a flag asks for, each in
// the format its file's extension names (- : Markdown on standard
// output).
func (o *reportOptions) sideTables(ctx context.Context, tab *report.Table) []output {
	var outs []output
	for _, f := range []struct {
		path    string
		md, csv func(io.Writer) error
	}{{o.groups, tab.WriteGroupsMarkdown, tab.WriteGroupsCSV}, {o.curve, tab.WriteLearningCurveMarkdown, tab.WriteLearningCurveCSV},
		{o.templates, tab.WriteTemplatesMarkdown, tab.WriteTemplatesCSV},
		{o.sizes, func(w io.Writer) error { return o.writeSizes(ctx, w, false) }, func(w io.Writer) error { return o.writeSizes(ctx, w, true) }},
		{o.calibration, func(w io.Writer) error { return o.writeCalibration(ctx, w, false) }, func(w io.Writer) error { return o.writeCalibration(ctx, w, true) }}} {
		if f.path == "" {
			continue
		}
		write := f.md
		if strings.EqualFold(filepath.Ext(f.path), ".csv") {
			write = f.csv
		}
		outs = append(outs, output{f.path, write})
	}
	return outs
}

// writeAll makes every output in memory before it writes any, so that a
// table the store cannot give (a learning curve of a sweep without sizes,
// templates of one without the axis) fails the command with nothing of
// the report written.
func (s ioStreams) writeAll(outs []output) error {
	made := make([][]byte, len(outs))
	for i, f := range outs {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			return err
		}
		made[i] = b.Bytes()
	}
	for i, f := range outs {
		if err := s.write(f.path, func(w io.Writer) error {
			_, err := w.Write(made[i])
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// write writes a file atomically with write and says so on standard
// error; "" or - is standard output.
func (s ioStreams) write(path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(s.Out)
	}
	if err := atomicfile.Write(path, write); err != nil {
		return err
	}
	fmt.Fprintln(s.ErrOut, "wrote", path)
	return nil
}

// tableOptions are the flags of the commands that build Table 3 with its
// statistics from a run store, beluga report's and beluga serve's: where
// the store is, the significance tests and bootstrap intervals, the
// baseline row and the G's i.i.d. score, and whether a sweep with runs not
// done is shown.
type tableOptions struct {
	storeArg
	bootstrap, gAccuracy, base string
	trials, resamples          int
	seed                       uint32
	ci                         float64
	partial, baseSet           bool
}

func (t *tableOptions) addFlags(fs *pflag.FlagSet) {
	t.addStoreFlag(fs, "")
	fs.IntVar(&t.trials, "trials", report.DefaultTrials, "approximate randomisation trials of the p-values")
	fs.Uint32Var(&t.seed, "seed", report.DefaultSeed, "seed of the randomisation and the bootstrap (BeLUGA: 42; 0 also means 42)")
	fs.Float64Var(&t.ci, "ci", 0, "add bootstrap confidence intervals at this level in percent, e.g. 95")
	fs.StringVar(&t.bootstrap, "bootstrap", report.DefaultBootstrap, "what --ci resamples: hierarchical (functionalities, then cases) or cases (cases within each functionality)")
	fs.IntVar(&t.resamples, "resamples", metrics.DefaultResamples, "bootstrap resamples (B)")
	fs.StringVar(&t.gAccuracy, "g-accuracy", report.GAccuracySeen, "i.i.d. score of a held-out G: seen (the seen run's, BeLUGA's) or fold (the fold runs' own)")
	fs.StringVar(&t.base, "baseline", "", `row every other is tested against: "IID train_size=4000", "IID+T: L2", or none (default: the spec's baseline:, else the IID row, of several the largest train_size)`)
	fs.BoolVar(&t.partial, "partial", false, "show the table of a sweep with runs not done, marking the cells they leave incomplete")
}

func (t *tableOptions) complete(cmd *cobra.Command, args []string) error {
	t.baseSet = cmd.Flags().Changed("baseline")
	return t.storeArg.complete(cmd, args)
}

func (t *tableOptions) validate() error {
	if t.trials < 1 || t.resamples < 0 {
		return fmt.Errorf("--trials %d, --resamples %d: want at least 1 trial and no negative resamples", t.trials, t.resamples)
	}
	return nil
}

// reportOptions are the table's options; the baseline is the one the
// argument's spec names unless --baseline says another.
func (t *tableOptions) reportOptions() report.Options {
	opt := report.Options{Trials: t.trials, Seed: t.seed, CI: t.ci, Resamples: t.resamples, Bootstrap: t.bootstrap,
		GAccuracy: t.gAccuracy, Baseline: t.base, Partial: t.partial}
	if !t.baseSet {
		opt.Baseline = specBaseline(t.arg)
	}
	return opt
}

// table builds Table 3 from an experiment spec or a run store directory
// (report.FromStore: every run of the sweep, done or not). A store
// directory's note (which of its sweeps it is) goes to standard error.
func (s *storeArg) table(ctx context.Context, opt report.Options) (*report.Table, error) {
	sw, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	if sw.Note != "" {
		fmt.Fprintln(s.ErrOut, sw.Note)
	}
	opt.Inputs = sw.Inputs
	runs := sw.Runs
	if sw.Spec == nil {
		report.SortRuns(runs)
	}
	return report.FromStore(sw.Store, runs, opt)
}

// source reads an experiment spec's runs, or a run store directory's, for
// the HTML page.
func (s *storeArg) source(ctx context.Context, opt explore.Options) (*explore.Source, error) {
	sw, err := s.read(ctx)
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
func (o *reportOptions) writeCalibration(ctx context.Context, w io.Writer, csv bool) error {
	sw, err := o.open(ctx)
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
func (o *reportOptions) writeSizes(ctx context.Context, w io.Writer, csv bool) error {
	sw, err := o.open(ctx)
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
func (o *reportOptions) runTest() error {
	if o.format != "html" && o.format != "md" && o.format != "markdown" {
		return fmt.Errorf("%s is a folder beluga test wrote: its report is --format md or html, not %s", o.arg, o.format)
	}
	write, err := testReport(o.format, o.arg)
	if err != nil {
		return err
	}
	return o.write(o.out, write)
}
