package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/experiments"
)

// cleanOptions are beluga clean's flags and argument.
type cleanOptions struct {
	storeArg
	incomplete, damaged, sweeps bool

	states []experiments.State
}

// NewCmdClean builds beluga clean.
func NewCmdClean() *cobra.Command {
	o := &cleanOptions{}
	cmd := &cobra.Command{
		Use:   "clean SPEC|STORE --incomplete|--damaged|--sweeps",
		Short: "Remove the directories of interrupted, failed or damaged runs of an experiment",
		Long: `clean --incomplete removes the run directories of an experiment that hold no
"done" and no live claim: interrupted and failed runs. clean --damaged removes
those whose files are not what their "done" recorded (beluga status lists
them; beluga verify checks every file). Finished runs and runs a live process
is working on are never touched. (beluga run redoes such runs from scratch
anyway; clean is for tidying a store or retrying failures afresh.)

clean --sweeps forgets the sweeps recorded in the store that no spec names any
more: those of a spec file since deleted, and every older sweep of a spec (a
store named by its directory is its latest sweep: beluga report STORE and
beluga status STORE say which). Run directories stay.`,
		Example: `  beluga clean specs/sent-full.yaml --incomplete
  beluga clean quickstart-out --damaged
  beluga clean quickstart-out --sweeps`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().BoolVar(&o.incomplete, "incomplete", false, "remove interrupted and failed runs")
	cmd.Flags().BoolVar(&o.damaged, "damaged", false, "remove runs whose files are not what their done marker recorded")
	cmd.Flags().BoolVar(&o.sweeps, "sweeps", false, "forget the sweeps no spec names (a spec file gone, an older sweep of a spec): a store named by its directory is its latest sweep; no run directory is removed")
	// --store, as report, serve, plot and failures name the store; --out
	// was its first name here.
	o.addStoreFlag(cmd.Flags(), "o")
	return cmd
}

// complete turns the flags into the states of the runs to remove.
func (o *cleanOptions) complete(cmd *cobra.Command, args []string) error {
	if o.incomplete {
		o.states = append(o.states, experiments.Incomplete, experiments.Failed)
	}
	if o.damaged {
		o.states = append(o.states, experiments.Damaged)
	}
	return o.storeArg.complete(cmd, args)
}

func (o *cleanOptions) validate() error {
	if len(o.states) == 0 && !o.sweeps {
		return errors.New("say what to clean: --incomplete, --damaged, --sweeps or several")
	}
	return nil
}

func (o *cleanOptions) run(ctx context.Context) error {
	if o.sweeps {
		if err := o.forgetSweeps(); err != nil {
			return err
		}
		if len(o.states) == 0 {
			return nil
		}
	}
	sw, err := o.open(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, len(sw.Runs))
	for i, r := range sw.Runs {
		ids[i] = r.ID()
	}
	n, err := sw.Store.Clean(ids, o.states...)
	var what []string
	if o.incomplete {
		what = append(what, "incomplete or failed")
	}
	if o.damaged {
		what = append(what, "damaged")
	}
	fmt.Fprintf(o.Out, "removed %s from %s\n", plural(n, strings.Join(what, " or ")+" run"), experiments.ShortPath(sw.Store.Dir))
	return err
}

// forgetSweeps is clean --sweeps: the store's sweeps no spec names are
// forgotten (experiments.Store.ForgetSweeps), each said.
func (o *cleanOptions) forgetSweeps() error {
	w := o.Out
	dir := o.store
	if dir == "" {
		if st, err := os.Stat(o.arg); err == nil && st.IsDir() {
			dir = o.arg
		} else {
			spec, err := experiments.LoadSpec(o.arg)
			if err != nil {
				return err
			}
			dir = spec.OutDir()
		}
	}
	store := &experiments.Store{Dir: dir}
	kept, forgot, err := store.ForgetSweeps()
	if err != nil {
		return err
	}
	for _, r := range forgot {
		fmt.Fprintf(w, "forgot the sweep of %s (%s, %d runs)\n", experiments.ShortPath(r.Spec), r.At.Format("2006-01-02 15:04 UTC"), len(r.Runs))
	}
	fmt.Fprintf(w, "%s: %d %s kept, %d forgotten (run directories untouched: clean --incomplete and --damaged remove those)\n",
		experiments.ShortPath(dir), len(kept), map[bool]string{true: "sweep", false: "sweeps"}[len(kept) == 1], len(forgot))
	return nil
}
