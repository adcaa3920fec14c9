package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

func init() {
	var incomplete bool
	var out string
	cmd := &cobra.Command{
		Use:   "clean SPEC|STORE --incomplete",
		Short: "Remove the directories of interrupted and failed runs of an experiment",
		Long: `clean --incomplete removes the run directories of an experiment that hold no
"done" and no live claim: interrupted and failed runs. Finished runs and runs a
live process is working on are never touched. (beluga run redoes such runs from
scratch anyway; clean is for tidying a store or retrying failures afresh.)`,
		Example: `  beluga clean specs/sent-full.yaml --incomplete`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !incomplete {
				return errors.New("say what to clean: --incomplete")
			}
			store, runs, err := sweepOf(args[0], out)
			if err != nil {
				return err
			}
			ids := make([]string, len(runs))
			for i, r := range runs {
				ids[i] = r.ID()
			}
			n, err := store.CleanIncomplete(ids)
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s from %s\n", plural(n, "incomplete or failed run"), store.Dir)
			return err
		},
	}
	cmd.Flags().BoolVar(&incomplete, "incomplete", false, "remove interrupted and failed runs")
	cmd.Flags().StringVarP(&out, "store", "o", "", "run store directory (default: the spec's out)")
	// --store, as report, serve, plot and failures name the store; --out
	// was its first name here.
	cmd.Flags().SetNormalizeFunc(renamedFlags(map[string]string{"out": "store"}))
	rootCmd.AddCommand(cmd)
}
