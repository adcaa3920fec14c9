package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
)

// failuresOptions are beluga failures' flags and streams, and the case
// file an execution finds.
type failuresOptions struct {
	commandOptions
	functionality, store string

	cases string
}

// NewCmdFailures builds beluga failures.
func NewCmdFailures() *cobra.Command {
	o := &failuresOptions{}
	cmd := &cobra.Command{
		Use:   "failures RUN",
		Short: "List a run's failing suite cases per functionality, with their texts, expectations and predictions",
		Long: `failures reads a run's cases.jsonl and lists, per functionality in suite
order, how many scored cases failed and what the functionality expects, then
every failing case's inputs (for INV and DIR the original, then its
perturbations) with the prediction, its probability and the expected label.
RUN is a run directory (STORE/ID), a run ID with --store, or a case file
(beluga eval --cases). The same fields are in cases.jsonl for jq or pandas.`,
		Example: `  beluga failures hatecheck-out/56375fed45bd
  beluga failures 56375fed45bd --store hatecheck-out --functionality slur_h
  jq -c 'select(.verdict == "fail") | [.functionality, .inputs[0].text, .inputs[0].pred]' hatecheck-out/56375fed45bd/train/cases.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.functionality, "functionality", "", "list this functionality only")
	cmd.Flags().StringVar(&o.store, "store", "", "run store directory (or experiment spec) a run ID is looked up in")
	return cmd
}

// complete finds the run's case file: --store is a store directory or
// the experiment spec whose store it is.
func (o *failuresOptions) complete(*cobra.Command, []string) error {
	store := o.store
	if st, err := os.Stat(store); err == nil && !st.IsDir() {
		spec, err := experiments.LoadSpec(store)
		if err != nil {
			return err
		}
		store = spec.OutDir()
	}
	var err error
	o.cases, err = experiments.RunCases(o.args[0], store)
	return err
}

// run lists the failing cases.
func (o *failuresOptions) run(context.Context) error {
	cases, err := metrics.ReadCases(o.cases)
	if err != nil {
		return err
	}
	return metrics.WriteFailures(o.Out, cases, o.functionality)
}
