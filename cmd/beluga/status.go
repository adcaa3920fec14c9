package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/termtext"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/train"
)

// statusOptions are beluga status's flags and argument.
type statusOptions struct {
	storeArg
	all, sizes bool
}

// NewCmdStatus builds beluga status.
func NewCmdStatus() *cobra.Command {
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status SPEC|STORE",
		Short: "Show how many runs of an experiment are done, running, failed, incomplete, stale, damaged or missing",
		Long: `status reads every run's state from the run store: done ("done" written, and the
files it records there, the ones reports read with their content), running
(claimed by a live process), failed (the last attempt recorded why), incomplete
(interrupted), damaged (a file done records is missing, truncated or edited:
beluga run redoes it, beluga clean --damaged removes it), stale (its inputs
changed since it ran: a suite re-imported, a tokenizer rewritten; the line
says which and how) or missing (never launched). Failed, damaged and stale runs
are listed with why, and done runs that failed a sanity check (a constant
predictor, a suite loss that never fell; marked ` + flagMarker + `) with what
was seen; --all lists every run. beluga verify checks every file's content.
--sizes lists every run with what it trains on: its i.i.d. training rows and
suite training cases, as its train/trained.json records them, or, for a run
not done, as its spec draws them from the data now ("planned": the suite and
i.i.d. files are read, no model is loaded) — the seen run beside each fold.`,
		Example: `  beluga status specs/sent-full.yaml
  beluga status specs/quickstart.yaml --all
  beluga status specs/mhc-arabic.yaml --sizes
  beluga status quickstart-out`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "list every run, not only the failed, damaged, stale and flagged ones")
	cmd.Flags().BoolVar(&o.sizes, "sizes", false, "list every run with the i.i.d. rows and suite cases it trains on")
	// --store, as report, serve, plot and failures name the store; --out
	// was its first name here.
	o.addStoreFlag(cmd.Flags(), "o")
	return cmd
}

func (o *statusOptions) run(ctx context.Context) error {
	w := o.Out
	sw, err := o.open(ctx)
	if err != nil {
		return err
	}
	if sw.Note != "" {
		fmt.Fprintln(w, sw.Note)
	}
	st := experiments.StatusOf(sw.Store, sw.Runs, sw.Inputs)
	sw.Inputs.Digests.SaveOrWarn(o.ErrOut)
	flagged := ""
	if st.Flagged > 0 {
		flagged = fmt.Sprintf(" (%d flagged %s)", st.Flagged, flagMarker)
	}
	c := st.Counts
	fmt.Fprintf(w, "%s: %s: %d done%s, %d running, %d failed, %d incomplete, %d stale, %d damaged, %d missing\n", experiments.ShortPath(sw.Store.Dir), plural(len(sw.Runs), "run"),
		c[experiments.Done], flagged, c[experiments.Running], c[experiments.Failed], c[experiments.Incomplete], c[experiments.Stale], c[experiments.Damaged], c[experiments.Missing])
	for _, r := range st.Runs {
		if r.State == experiments.NotFetched {
			fmt.Fprintf(w, "%d runs: %s\n", c[experiments.NotFetched], oneLine(r.Reason))
			break
		}
	}
	if _, err := os.Stat(sw.Store.Dir); errors.Is(err, os.ErrNotExist) && c[experiments.Missing] > 0 {
		// Every run is missing because nothing was written there: most often
		// the runs went to another store (beluga quickstart writes
		// ./quickstart-out, a spec's out: is relative to the spec's folder).
		fmt.Fprintf(w, "(no run store at %s yet: if the runs were written elsewhere, add --store DIR)\n", experiments.ShortPath(sw.Store.Dir))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	memo := map[string]*train.Trained{} // --sizes: the data drawn once per draw
	for _, r := range st.Runs {
		listed := r.State == experiments.Failed || r.State == experiments.Damaged || r.State == experiments.Stale || len(r.Flags) > 0
		if !o.all && !o.sizes && !listed {
			continue
		}
		marker, why := "", r.Reason
		if len(r.Flags) > 0 {
			marker, why = flagMarker, metrics.FlagSummary(r.Flags)
		}
		if o.sizes {
			z, ok, err := experiments.SizesOf(sw.Store, r.Spec, memo)
			switch {
			case err != nil:
				return fmt.Errorf("run %s: %w", r.ID, err)
			case ok:
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, marker, z, termtext.Name(r.Spec.Label()), oneLine(why))
			default:
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, marker, "-", termtext.Name(r.Spec.Label()), oneLine(why))
			}
			continue
		}
		// One row a run: a reason of several lines is joined.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, marker, termtext.Name(r.Spec.Label()), oneLine(why))
	}
	return tw.Flush()
}

// flagMarker marks a run with failed sanity checks in status listings.
const flagMarker = "!"

// plural writes n and the noun, in the plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if s, ok := strings.CutSuffix(noun, "ity"); ok {
		return fmt.Sprintf("%d %sities", n, s)
	}
	if strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun) // classes
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
