package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/suites"
)

func init() {
	importCmd := &cobra.Command{
		Use:   "import",
		Short: "Convert a suite from another format into beluga's JSON-lines format",
	}
	var out string
	checklist := &cobra.Command{
		Use:   "checklist PATH",
		Short: "Import a CheckList suite pickle (.pkl or the published .tar.gz)",
		Example: `  beluga suite import checklist sentiment_suite.tar.gz -o sentiment.jsonl.gz
  beluga suite import checklist qqp_suite.pkl -o qqp.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return importSuite(cmd.OutOrStdout(), suites.ImportCheckList, args[0], out)
		},
	}
	hatecheck := &cobra.Command{
		Use:     "hatecheck PATH",
		Short:   "Import HateCheck's test_suite_cases.csv (all MFT, classes from name prefixes)",
		Example: `  beluga suite import hatecheck test_suite_cases.csv -o hatecheck.jsonl`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return importSuite(cmd.OutOrStdout(), suites.ImportHateCheck, args[0], out)
		},
	}
	for _, c := range []*cobra.Command{checklist, hatecheck} {
		c.Flags().StringVarP(&out, "out", "o", "", "output suite (.jsonl or .jsonl.gz)")
		c.MarkFlagRequired("out")
		importCmd.AddCommand(c)
	}

	var format string
	stats := &cobra.Command{
		Use:   "stats SUITE",
		Short: "Count classes, functionalities, test cases, inputs and split sizes",
		Example: `  beluga suite stats sentiment.jsonl.gz
  beluga suite stats sentiment.jsonl.gz --format csv > sentiment-stats.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := suites.Open(args[0])
			if err != nil {
				return err
			}
			return writeStats(cmd.OutOrStdout(), suites.Summarise(s), format)
		},
	}
	stats.Flags().StringVar(&format, "format", "table", "output format: table, csv or json")
	suiteCmd.AddCommand(importCmd, stats)
}

func importSuite(w io.Writer, read func(string) (*suites.Suite, error), in, out string) error {
	s, err := read(in)
	if err != nil {
		return err
	}
	if err := suites.Save(out, s); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s: %s, %s\n", out, plural(len(s.Functionalities), "functionality"), plural(s.NumCases(), "test case"))
	return nil
}

var splitOrder = []suites.Split{suites.SplitTrain, suites.SplitValidation, suites.SplitTest}

func writeStats(w io.Writer, st suites.Stats, format string) error {
	hasSplits := len(st.Splits) > 0
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	case "csv":
		cw := csv.NewWriter(w)
		head := []string{"class", "functionality", "type", "cases", "inputs"}
		if hasSplits {
			for _, sp := range splitOrder {
				head = append(head, string(sp)+"_cases", string(sp)+"_inputs")
			}
		}
		cw.Write(head)
		for _, f := range st.Functionalities {
			row := []string{f.Class, f.Name, string(f.Type), strconv.Itoa(f.Cases), strconv.Itoa(f.Inputs)}
			if hasSplits {
				for _, sp := range splitOrder {
					row = append(row, strconv.Itoa(f.Splits[sp].Cases), strconv.Itoa(f.Splits[sp].Inputs))
				}
			}
			cw.Write(row)
		}
		cw.Flush()
		return cw.Error()
	case "table":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		head := "class\tfunctionality\ttype\tcases\tinputs\t"
		if hasSplits {
			head += "train\tvalidation\ttest\t"
		}
		fmt.Fprintln(tw, head)
		for _, f := range st.Functionalities {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t", f.Class, f.Name, f.Type, f.Cases, f.Inputs)
			if hasSplits {
				for _, sp := range splitOrder {
					fmt.Fprintf(tw, "%d\t", f.Splits[sp].Cases)
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		fmt.Fprintf(w, "\n%s: %d functionalities, %d classes, %d MFT / %d INV / %d DIR, %d test cases, %d inputs\n",
			st.Suite, len(st.Functionalities), st.Classes, st.Types[suites.MFT], st.Types[suites.INV], st.Types[suites.DIR], st.Cases, st.Inputs)
		if hasSplits {
			for _, sp := range splitOrder {
				fmt.Fprintf(w, "  %s: %d test cases, %d inputs\n", sp, st.Splits[sp].Cases, st.Splits[sp].Inputs)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown --format %q (want table, csv or json)", format)
}
