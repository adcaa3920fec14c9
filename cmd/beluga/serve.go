package main

import (
	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/report/explore"
)

func init() {
	var (
		store  string
		port   int
		trials int
	)
	cmd := &cobra.Command{
		Use:   "serve SPEC|STORE",
		Short: "Show a run store's table, heatmap, test cases and runs in the browser (127.0.0.1 only)",
		Long: `serve reads the finished runs of an experiment (its spec, or a run store
directory) and serves the page that beluga report --format html writes, on
127.0.0.1 only. The test cases of a functionality are read from the run
directories when it is opened and sent a page at a time, so a store of the
full SENT grid (1,198 runs) opens at once.`,
		Example: `  beluga serve quickstart-out                # the store beluga quickstart wrote
  beluga serve specs/quickstart.yaml          # the store beluga run specs/quickstart.yaml wrote
  beluga serve runs/sent-full --port 8089`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := loadSource(args[0], store, explore.Options{Report: report.Options{Trials: trials}})
			if err != nil {
				return err
			}
			return explore.Serve(cmd.Context(), src, port, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&store, "store", "", "run store directory (default: the spec's out)")
	cmd.Flags().IntVar(&port, "port", 8087, "port on 127.0.0.1 (0: any free port)")
	cmd.Flags().IntVar(&trials, "trials", report.DefaultTrials, "approximate randomisation trials of the table's p-values")
	rootCmd.AddCommand(cmd)
}
