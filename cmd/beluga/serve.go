package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/report/explore"
)

// serveOptions are beluga serve's flags and argument: the table's as
// beluga report has them, and the port.
type serveOptions struct {
	tableOptions
	port int
}

// NewCmdServe builds beluga serve.
func NewCmdServe() *cobra.Command {
	o := &serveOptions{}
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
		RunE: runE(o),
	}
	o.tableOptions.addFlags(cmd.Flags())
	cmd.Flags().IntVar(&o.port, "port", 8087, "port on 127.0.0.1 (0: any free port)")
	return cmd
}

func (o *serveOptions) run(ctx context.Context) error {
	var src *explore.Source
	var err error
	if report.IsTestDir(o.arg) {
		src, err = explore.FromTestDirs(o.arg)
	} else {
		src, err = o.source(ctx, explore.Options{Report: o.reportOptions()})
	}
	if err != nil {
		return err
	}
	return explore.Serve(ctx, src, o.port, o.ErrOut)
}
