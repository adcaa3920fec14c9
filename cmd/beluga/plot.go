package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/report"
)

func init() {
	plotCmd := &cobra.Command{
		Use:   "plot",
		Short: "Draw BeLUGA's figures from a run store",
	}
	var out string
	heatmap := &cobra.Command{
		Use:   "heatmap SPEC|DIR -o FIG.png|svg|pdf",
		Short: "Draw Figure 1: per-functionality pass rates per task and score (seen, func, class, type)",
		Long: `heatmap draws BeLUGA's Figure 1 from the finished runs of an experiment: one
panel per task and score (seen, func, class, type); rows = IID baseline and every
configuration x method; columns = the suite score (Avg) then each
functionality's pass rate (numbered in suite order; tick labels coloured by test
type: MFT blue, INV red, DIR green); one shared colour bar 0-100. The format
follows the extension of -o. The functionality numbers are the columns of
"beluga report --pass-rates".`,
		Example: `  beluga plot heatmap specs/quickstart.yaml -o heatmap.png
  beluga plot heatmap runs/sent-full -o figure1.pdf`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("say where to write the figure: -o FIG.png|svg|pdf")
			}
			// The figure needs no p-values: one trial keeps it fast.
			tab, err := loadTable(args[0], report.Options{Trials: 1})
			if err != nil {
				return err
			}
			if err := tab.WriteHeatmapFile(out); err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "wrote", out)
			return nil
		},
	}
	heatmap.Flags().StringVarP(&out, "out", "o", "", "figure file (.png, .svg or .pdf)")
	plotCmd.AddCommand(heatmap)
	rootCmd.AddCommand(plotCmd)
}
