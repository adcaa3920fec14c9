package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/report/explore"
)

// NewCmdServe builds beluga serve.
func NewCmdServe() *cobra.Command {
	var (
		store, bootstrap string
		gAccuracy, base  string
		port, trials     int
		resamples        int
		seed             uint32
		ci               float64
		partial          bool
	)
	cmd := &cobra.Command{
		Use:   "serve SPEC|STORE|TEST_FOLDER",
		Short: "Show a run store's table, heatmap, test cases and runs in the browser (127.0.0.1 only)",
		Long: `serve reads the finished runs of an experiment (its spec, or a run store
directory) and serves the page that beluga report --format html writes, on
127.0.0.1 only. The test cases of a functionality are read from the run
directories when it is opened and sent a page at a time, so a store of the
full SENT grid (1,198 runs) opens at once. --ci, --resamples, --bootstrap and
--seed are beluga report's: the table's bootstrap intervals; so are
--baseline and --g-accuracy. The server answers only requests addressed to
the address it bound (127.0.0.1:PORT, or localhost:PORT): any other Host is
refused with 421, so that a page elsewhere cannot read the store through a
DNS rebinding. A folder beluga test wrote is served as its test report.`,
		Example: `  beluga serve quickstart-out                # the store beluga quickstart wrote
  beluga serve specs/quickstart.yaml          # the store beluga run specs/quickstart.yaml wrote
  beluga serve runs/sent-full --port 8089
  beluga serve sst2-test                      # the folder beluga test wrote`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if trials < 1 || resamples < 0 {
				return fmt.Errorf("--trials %d, --resamples %d: want at least 1 trial and no negative resamples", trials, resamples)
			}
			if report.IsTestDir(args[0]) {
				src, err := explore.FromTestDirs(args[0])
				if err != nil {
					return err
				}
				return explore.Serve(cmd.Context(), src, port, cmd.ErrOrStderr())
			}
			opt := report.Options{Trials: trials, Seed: seed, CI: ci, Resamples: resamples, Bootstrap: bootstrap, GAccuracy: gAccuracy, Baseline: base, Partial: partial}
			if !cmd.Flags().Changed("baseline") {
				opt.Baseline = specBaseline(args[0])
			}
			src, err := loadSource(cmd.Context(), args[0], store, explore.Options{Report: opt})
			if err != nil {
				return err
			}
			return explore.Serve(cmd.Context(), src, port, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&store, "store", "", "run store directory (default: the spec's out)")
	cmd.Flags().IntVar(&port, "port", 8087, "port on 127.0.0.1 (0: any free port)")
	cmd.Flags().IntVar(&trials, "trials", report.DefaultTrials, "approximate randomisation trials of the table's p-values")
	cmd.Flags().Uint32Var(&seed, "seed", report.DefaultSeed, "seed of the randomisation and the bootstrap (BeLUGA: 42; 0 also means 42)")
	cmd.Flags().Float64Var(&ci, "ci", 0, "add bootstrap confidence intervals at this level in percent, e.g. 95 (as beluga report --ci)")
	cmd.Flags().StringVar(&bootstrap, "bootstrap", report.DefaultBootstrap, "what --ci resamples: hierarchical (functionalities, then cases) or cases (cases within each functionality)")
	cmd.Flags().IntVar(&resamples, "resamples", metrics.DefaultResamples, "bootstrap resamples (B)")
	cmd.Flags().BoolVar(&partial, "partial", false, "show a sweep with runs not done, marking the cells they leave incomplete (as beluga report --partial)")
	cmd.Flags().StringVar(&gAccuracy, "g-accuracy", report.GAccuracySeen, "i.i.d. score of a held-out G: seen (the seen run's, BeLUGA's) or fold (the fold runs' own)")
	cmd.Flags().StringVar(&base, "baseline", "", `row every other is tested against: "IID train_size=4000", "IID+T: L2", or none (default: the spec's baseline:, else the IID row, of several the largest train_size)`)
	return cmd
}
