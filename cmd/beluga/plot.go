package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/report"
)

// NewCmdPlot builds beluga plot and its subcommands.
func NewCmdPlot() *cobra.Command {
	plotCmd := &cobra.Command{
		Use:   "plot",
		Short: "Draw BeLUGA's figures from a run store",
	}
	var out, store string
	var width float64
	var partial bool
	heatmap := &cobra.Command{
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("say where to write the figure: -o FIG.png|svg|pdf")
			}
			// The figure needs no p-values: one trial keeps it fast.
			tab, err := loadTable(cmd.Context(), cmd.ErrOrStderr(), args[0], store, report.Options{Trials: 1, Partial: partial})
			if err != nil {
				return err
			}
			if err := tab.WriteHeatmapFile(out, report.HeatmapOptions{Width: width}); err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "wrote", out)
			return nil
		},
	}
	heatmap.Flags().StringVarP(&out, "out", "o", "", "figure file (.png, .svg or .pdf)")
	heatmap.Flags().StringVar(&store, "store", "", "run store directory (default: the spec's out)")
	heatmap.Flags().Float64Var(&width, "width", report.PaperWidth, "figure width in inches (labels keep their sizes, at least 7 pt)")
	heatmap.Flags().BoolVar(&partial, "partial", false, "draw the figure of a sweep with runs not done (as beluga report --partial)")
	plotCmd.AddCommand(heatmap)

	var curveOut, events string
	curves := &cobra.Command{
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if curveOut == "" && events == "" {
				return errors.New("say what to write: -o FIG.png|svg|pdf and/or --tfevents DIR")
			}
			path, err := report.FindCurve(args[0])
			if err != nil {
				return err
			}
			curve, err := report.ReadCurve(path)
			if err != nil {
				return err
			}
			if curveOut != "" {
				if err := report.WriteCurvePlotFile(curveOut, curve, runTitle(args[0])); err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "wrote", curveOut)
			}
			if events != "" {
				fi, err := os.Stat(path)
				if err != nil {
					return err
				}
				ev, err := report.WriteCurveEvents(events, fi.ModTime(), curve)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "wrote", ev)
			}
			return nil
		},
	}
	curves.Flags().StringVarP(&curveOut, "out", "o", "", "figure file (.png, .svg or .pdf)")
	curves.Flags().StringVar(&events, "tfevents", "", "also write the curve as a TensorBoard event file into this directory")
	plotCmd.AddCommand(curves)

	var lcOut, lcStore, lcMetric string
	var lcPartial bool
	learning := &cobra.Command{
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if lcOut == "" {
				return errors.New("say where to write the figure: -o FIG.png|svg|pdf")
			}
			// The figure shows no p-values: no tests keeps it fast.
			tab, err := loadTable(cmd.Context(), cmd.ErrOrStderr(), args[0], lcStore, report.Options{Baseline: report.BaselineNone, Partial: lcPartial})
			if err != nil {
				return err
			}
			title := strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			if err := tab.WriteLearningCurveFile(lcOut, lcMetric, title); err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "wrote", lcOut)
			return nil
		},
	}
	learning.Flags().StringVarP(&lcOut, "out", "o", "", "figure file (.png, .svg or .pdf)")
	learning.Flags().StringVar(&lcStore, "store", "", "run store directory (default: the spec's out)")
	learning.Flags().BoolVar(&lcPartial, "partial", false, "draw the curves of a sweep with runs not done (as beluga report --partial)")
	learning.Flags().StringVar(&lcMetric, "metric", "accuracy", "i.i.d. metric of the left panel: accuracy, or one the task declares (macro_f1, f1)")
	plotCmd.AddCommand(learning)
	return plotCmd
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
