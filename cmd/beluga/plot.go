package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/report"
)

// NewCmdPlot builds beluga plot and its subcommands.
func NewCmdPlot() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plot",
		Short: "Draw BeLUGA's figures from a run store",
	}
	cmd.AddCommand(NewCmdPlotHeatmap(), NewCmdPlotCurves(), NewCmdPlotLearningCurve())
	return cmd
}

// figureOptions are the flags and argument of a figure drawn from an
// experiment's table: the spec or store, the figure file, the store, and
// whether a sweep with runs not done is drawn.
type figureOptions struct {
	storeArg
	out     string
	partial bool
}

func (o *figureOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.out, "out", "o", "", "figure file (.png, .svg or .pdf)")
	o.addStoreFlag(fs, "")
	fs.BoolVar(&o.partial, "partial", false, "draw the figure of a sweep with runs not done (as beluga report --partial)")
}

func (o *figureOptions) validate() error {
	if o.out == "" {
		return errors.New("say where to write the figure: -o FIG.png|svg|pdf")
	}
	return nil
}

// draw builds the table of the experiment with opt and writes its figure
// with write.
func (o *figureOptions) draw(ctx context.Context, opt report.Options, write func(*report.Table) error) error {
	opt.Partial = o.partial
	tab, err := o.table(ctx, opt)
	if err != nil {
		return err
	}
	if err := write(tab); err != nil {
		return err
	}
	fmt.Fprintln(o.ErrOut, "wrote", o.out)
	return nil
}

// heatmapOptions are beluga plot heatmap's flags and argument.
type heatmapOptions struct {
	figureOptions
	width float64
}

func NewCmdPlotHeatmap() *cobra.Command {
	o := &heatmapOptions{}
	cmd := &cobra.Command{
		Use:   "heatmap SPEC|DIR -o FIG.png|svg|pdf",
		Short: "Draw Figure 1: per-functionality pass rates per task and score (seen, func, class, type)",
		Long: `heatmap draws BeLUGA's Figure 1 from the finished runs of an experiment: one
panel per task and score (seen, func, class, type); rows = IID baseline and every
configuration x method; columns = the suite score (Avg) then each
functionality's pass rate (numbered in suite order, the numbers coloured by test
type: MFT blue, INV red, DIR green, with a legend); one shared colour bar 0-100;
under the panels a key gives each number's full functionality name. The figure
is --width inches wide (6.5, a paper's text width, by default) with no text
smaller than 7 pt: narrower widths get narrower cells, and task panels that do
not fit side by side are stacked. The format follows the extension of -o. The
functionality numbers are the columns of "beluga report --pass-rates".`,
		Example: `  beluga plot heatmap specs/quickstart.yaml -o heatmap.png
  beluga plot heatmap runs/sent-full -o figure1.pdf
  beluga plot heatmap runs/sent-full -o figure1.pdf --width 3.25   # one column of a two-column paper`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.addFlags(cmd.Flags())
	cmd.Flags().Float64Var(&o.width, "width", report.PaperWidth, "figure width in inches (labels keep their sizes, at least 7 pt)")
	return cmd
}

func (o *heatmapOptions) run(ctx context.Context) error {
	// The figure needs no p-values: one trial keeps it fast.
	return o.draw(ctx, report.Options{Trials: 1}, func(tab *report.Table) error {
		return tab.WriteHeatmapFile(o.out, report.HeatmapOptions{Width: o.width})
	})
}

// learningCurveOptions are beluga plot learning-curve's flags and argument.
type learningCurveOptions struct {
	figureOptions
	metric string
}

func NewCmdPlotLearningCurve() *cobra.Command {
	o := &learningCurveOptions{}
	cmd := &cobra.Command{
		Use:   "learning-curve SPEC|DIR -o FIG.png|svg|pdf",
		Short: "Draw score against training-set size (grid key train_size), a band over seeds",
		Long: `learning-curve draws the finished runs of an experiment swept over the grid key
train_size: an i.i.d. metric of the test set (left; --metric, accuracy by default,
or one the task declares, such as macro_f1) and the suite score, the mean T_test
pass rate of the seen runs (right), against the training size on a log scale.
One line per task x configuration x method (and any method setting swept beside
it) through the mean over seeds; the shaded band runs from the lowest to the
highest seed (min-max). A point with a run that predicts one class for nearly
every input is ringed in black, one not above a constant predictor drawn hollow;
the majority class's value is a dashed grey line. The format follows the
extension of -o. "beluga report --learning-curve" writes the same points as a
table, with significance against the baseline row.`,
		Example: `  beluga plot learning-curve specs/learning-curve.yaml -o learning-curve.png
  beluga plot learning-curve runs/cold -o cold.pdf --metric macro_f1`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.metric, "metric", "accuracy", "i.i.d. metric of the left panel: accuracy, or one the task declares (macro_f1, f1)")
	return cmd
}

func (o *learningCurveOptions) run(ctx context.Context) error {
	title := strings.TrimSuffix(filepath.Base(o.arg), filepath.Ext(o.arg))
	// The figure shows no p-values: no tests keeps it fast.
	return o.draw(ctx, report.Options{Baseline: report.BaselineNone}, func(tab *report.Table) error {
		return tab.WriteLearningCurveFile(o.out, o.metric, title)
	})
}

// curvesOptions are beluga plot curves' flags and argument.
type curvesOptions struct {
	commandOptions
	dir, out, events string // dir: the run's directory, or its curve.jsonl
}

func NewCmdPlotCurves() *cobra.Command {
	o := &curvesOptions{}
	cmd := &cobra.Command{
		Use:   "curves RUN -o FIG.png|svg|pdf",
		Short: "Draw a run's training curve: loss per batch kind and learning rate by step",
		Long: `curves draws the training curve a run stored (RUN is the run's directory in
the store, or its curve.jsonl): the loss of every batch kind (MFT, INV, DIR,
i.i.d.) as faint points with a moving average, and the learning rate below.
With --tfevents DIR it also writes the curve as a TensorBoard event file into
DIR (tags loss/KIND and lr), so that "tensorboard --logdir" shows it.`,
		Example: `  beluga plot curves runs/quickstart/3f2a9c0b1d4e -o curve.png
  beluga plot curves runs/quickstart/3f2a9c0b1d4e --tfevents runs/quickstart/3f2a9c0b1d4e`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVarP(&o.out, "out", "o", "", "figure file (.png, .svg or .pdf)")
	cmd.Flags().StringVar(&o.events, "tfevents", "", "also write the curve as a TensorBoard event file into this directory")
	return cmd
}

func (o *curvesOptions) complete(cmd *cobra.Command, args []string) error {
	o.dir = args[0]
	return nil
}

func (o *curvesOptions) validate() error {
	if o.out == "" && o.events == "" {
		return errors.New("say what to write: -o FIG.png|svg|pdf and/or --tfevents DIR")
	}
	return nil
}

func (o *curvesOptions) run(context.Context) error {
	path, err := report.FindCurve(o.dir)
	if err != nil {
		return err
	}
	curve, err := report.ReadCurve(path)
	if err != nil {
		return err
	}
	if o.out != "" {
		if err := report.WriteCurvePlotFile(o.out, curve, runTitle(o.dir)); err != nil {
			return err
		}
		fmt.Fprintln(o.ErrOut, "wrote", o.out)
	}
	if o.events == "" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	ev, err := report.WriteCurveEvents(o.events, fi.ModTime(), curve)
	if err != nil {
		return err
	}
	fmt.Fprintln(o.ErrOut, "wrote", ev)
	return nil
}

// runTitle names a run for a plot: its label from the store's spec.json
// when the directory has one, else the path.
func runTitle(path string) string {
	dir := path
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		dir = filepath.Dir(path)
		if filepath.Base(dir) == "train" {
			dir = filepath.Dir(dir)
		}
	}
	if r, err := experiments.ReadRun(dir); err == nil {
		// The label without its swept settings, which overflow a title.
		r.Swept = nil
		return r.Label()
	}
	return path
}
