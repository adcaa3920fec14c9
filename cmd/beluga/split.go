package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// suiteSplitOptions are beluga suite split's flags and streams.
type suiteSplitOptions struct {
	suiteFileOptions
	group, stratify string
	seed            uint32
}

// NewCmdSuiteSplit builds beluga suite split.
func NewCmdSuiteSplit() *cobra.Command {
	o := &suiteSplitOptions{}
	cmd := &cobra.Command{
		Use:   "split SUITE",
		Short: "Assign BeLUGA's per-functionality 50/25/25 split of test cases (T_train / T_val / T_test)",
		Long: `split assigns every test case to train, validation or test exactly as BeLUGA does:
per functionality, sklearn's train_test_split(test_size=0.5, random_state=SEED) twice over
the sorted test-case ids, with numpy's legacy random stream. All inputs of a case stay together,
and so do the cases of a group (the suite format's group field; --group COLUMN makes the
cases that share a metadata value, such as a template, a group): a suite with groups is split
by the one grouping rule of i.i.d. files (each group whole, stratified by functionality, with
BeLUGA's sizes as nearly as whole groups allow). beluga suite stats --group COLUMN reports the
values the splits share.

--stratify COLUMN keeps the sizes of BeLUGA's split but, within each functionality, gives each
value of the metadata column (the cases without one count as a value) its share of the
functionality's train, validation and test cases, within one case: each value's share of T_test
is then its share of the suite, within one case per functionality. Hold such a column out
(scores: ["meta:target_ident"]) on a stratified split: BeLUGA's gives every functionality of one
size the same positions, and a suite that lists its identities in a fixed cycle (HateCheck) gives
them very different shares of T_test. beluga suite stats --by COLUMN shows the counts.`,
		Example: `  beluga suite split sentiment.jsonl.gz -o sentiment-split.jsonl.gz
  beluga suite split sentiment_suite.tar.gz -o sentiment.jsonl.gz --seed 7
  beluga suite split mhc_arabic.jsonl -o mhc_arabic-split.jsonl --group templ_id
  beluga suite split hatecheck.jsonl -o hatecheck-strat.jsonl --stratify target_ident`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.suiteFileOptions.bind(cmd)
	cmd.Flags().Uint32Var(&o.seed, "seed", splits.BeLUGASeed, "random_state of the split")
	cmd.Flags().StringVar(&o.stratify, "stratify", "", "metadata column whose values keep their suite share of every part (target_ident)")
	cmd.Flags().StringVar(&o.group, "group", "", "metadata column whose cases stay in one split (a template: templ_id)")
	return cmd
}

// run splits the suite (grouped by --group, stratified by --stratify) and
// writes it.
func (o *suiteSplitOptions) run(context.Context) error {
	s, err := suites.Open(o.in())
	if err != nil {
		return err
	}
	if o.group != "" {
		if n := splits.GroupByMeta(s, o.group); n == 0 {
			return fmt.Errorf("--group %s: no case of %s has a value in this metadata column", o.group, o.in())
		}
	}
	if o.stratify != "" {
		if len(splits.Balance(s, o.stratify)) == 0 {
			return fmt.Errorf("--stratify %s: no case of %s has a value in this metadata column", o.stratify, o.in())
		}
		splits.AssignStratified(s, o.seed, o.stratify)
	} else {
		splits.Assign(s, o.seed)
	}
	if err := suites.Save(o.out, s); err != nil {
		return err
	}
	st := suites.Summarise(s)
	fmt.Fprintf(o.Out, "wrote %s: train %d, validation %d, test %d test cases\n", o.out,
		st.Splits[suites.SplitTrain].Cases, st.Splits[suites.SplitValidation].Cases, st.Splits[suites.SplitTest].Cases)
	return nil
}
