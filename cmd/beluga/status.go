package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/experiments"
)

func init() {
	var all bool
	var out string
	cmd := &cobra.Command{
		Use:   "status SPEC|STORE",
		Short: "Show how many runs of an experiment are done, running, failed, incomplete or missing",
		Long: `status reads every run's state from the run store: done ("done" written),
running (claimed by a live process), failed (the last attempt recorded why),
incomplete (interrupted) or missing (never launched). Failed runs are listed
with their reasons, and done runs that failed a sanity check (a constant
predictor, a suite loss that never fell; marked ` + flagMarker + `) with what
was seen; --all lists every run.`,
		Example: `  beluga status specs/sent-full.yaml
  beluga status specs/quickstart.yaml --all
  beluga status quickstart-out`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, runs, err := sweepOf(args[0], out)
			if err != nil {
				return err
			}
			st := experiments.StatusOf(store, runs)
			w := cmd.OutOrStdout()
			flagged := ""
			if st.Flagged > 0 {
				flagged = fmt.Sprintf(" (%d flagged %s)", st.Flagged, flagMarker)
			}
			fmt.Fprintf(w, "%s: %s: %d done%s, %d running, %d failed, %d incomplete, %d missing\n", store.Dir, plural(len(runs), "run"),
				st.Counts[experiments.Done], flagged, st.Counts[experiments.Running], st.Counts[experiments.Failed],
				st.Counts[experiments.Incomplete], st.Counts[experiments.Missing])
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			for _, r := range st.Runs {
				if all || r.State == experiments.Failed || len(r.Flags) > 0 {
					marker, why := "", r.Reason
					if len(r.Flags) > 0 {
						marker, why = flagMarker, experiments.FlagSummary(r.Flags)
					}
					// One row a run: a reason of several lines is joined.
					why = strings.ReplaceAll(strings.TrimSpace(why), "\n", "; ")
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, marker, r.Spec.Label(), why)
				}
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "list every run, not only the failed ones")
	cmd.Flags().StringVarP(&out, "store", "o", "", "run store directory (default: the spec's out)")
	// --store, as report, serve, plot and failures name the store; --out
	// was its first name here.
	cmd.Flags().SetNormalizeFunc(renamedFlags(map[string]string{"out": "store"}))
	rootCmd.AddCommand(cmd)
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
