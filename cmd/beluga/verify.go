package main

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/experiments"
)

// verifyOptions are beluga verify's flags and argument.
type verifyOptions struct {
	storeArg
}

// NewCmdVerify builds beluga verify.
func NewCmdVerify() *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify SPEC|STORE",
		Short: "Check every file of every finished run against the digests its done marker recorded",
		Long: `verify reads every file of every finished run of an experiment (its spec, or a
run store directory) — results, predictions, cases, curves, models — and
checks its size and SHA-256 against what the run's "done" recorded when it
finished. beluga status checks the sizes of them all and the content of the
files reports read; verify reads everything, models included. A run whose
files do not match is damaged: it is listed with the file at fault, and the
command exits non-zero (beluga run redoes it; beluga clean --damaged removes
it).`,
		Example: `  beluga verify quickstart-out
  beluga verify specs/sent-full.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.addStoreFlag(cmd.Flags(), "o")
	return cmd
}

func (o *verifyOptions) run(ctx context.Context) error {
	w := o.Out
	// A store that is not there has nothing to verify: "0 checked" would
	// read as a clean bill of health.
	sw, err := o.read(ctx)
	if err != nil {
		return err
	}
	ids, err := sw.Store.Dirs()
	if err != nil {
		return err
	}
	checked, damaged := sw.Store.Verify(ids)
	for _, id := range slices.Sorted(maps.Keys(damaged)) {
		fmt.Fprintf(w, "%s\tdamaged\t%s\n", id, oneLine(damaged[id]))
	}
	fmt.Fprintf(w, "%s: %s checked, %d damaged\n", experiments.ShortPath(sw.Store.Dir), plural(checked, "finished run"), len(damaged))
	if len(damaged) > 0 {
		return fmt.Errorf("%s damaged (beluga run redoes them; beluga clean --damaged removes them)", plural(len(damaged), "run"))
	}
	return nil
}
