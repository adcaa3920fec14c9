package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/report"
)

func init() {
	var (
		format, out, pvalues, passRates string
		trials                          int
		seed                            uint64
	)
	cmd := &cobra.Command{
		Use:   "report SPEC|DIR",
		Short: "Write Table 3 (G scores per task and score, significance vs the IID baseline) from a run store",
		Long: `report reads the finished runs of an experiment (its spec, or a run store
directory) and writes BeLUGA's Table 3: rows = IID baseline, then configuration
x method; columns = i.i.d. score per task, G_seen / G_func / G_class / G_type per
task, Avg. The best value per column is bold. In LaTeX, cells significantly
above / below the baseline (p < 0.05: McNemar's exact test for i.i.d. scores,
approximate randomisation for G) are PineGreen / red; with -o the p-values go
to a companion CSV next to the table. --pass-rates writes every row's
per-functionality pass rates.`,
		Example: `  beluga report specs/quickstart.yaml
  beluga report runs/sent-full --format latex -o table3.tex
  beluga report specs/sent-full.yaml --format csv -o table3.csv --pass-rates pass-rates.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tab, err := loadTable(args[0], report.Options{Trials: trials, Seed: seed})
			if err != nil {
				return err
			}
			var write func(io.Writer) error
			switch format {
			case "md", "markdown":
				write = tab.WriteMarkdown
			case "latex", "tex":
				write = tab.WriteLaTeX
			case "csv":
				write = tab.WriteCSV
			default:
				return fmt.Errorf("unknown --format %q (want md, latex or csv)", format)
			}
			if out == "" || out == "-" {
				if err := write(cmd.OutOrStdout()); err != nil {
					return err
				}
			} else {
				if err := atomicfile.Write(out, write); err != nil {
					return err
				}
				if pvalues == "" {
					pvalues = strings.TrimSuffix(out, filepath.Ext(out)) + "-pvalues.csv"
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "wrote", out)
			}
			if pvalues != "" {
				if err := atomicfile.Write(pvalues, tab.WritePValuesCSV); err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "wrote", pvalues)
			}
			if passRates != "" {
				if err := atomicfile.Write(passRates, tab.WritePassRatesCSV); err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "wrote", passRates)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "md", "table format: md, latex or csv")
	cmd.Flags().StringVarP(&out, "out", "o", "", "output file (default standard output)")
	cmd.Flags().StringVar(&pvalues, "pvalues", "", "CSV of p-values against the baseline (default: next to -o as NAME-pvalues.csv)")
	cmd.Flags().StringVar(&passRates, "pass-rates", "", "CSV of per-functionality pass rates")
	cmd.Flags().IntVar(&trials, "trials", 10000, "approximate randomisation trials")
	cmd.Flags().Uint64Var(&seed, "seed", 42, "seed of the randomisation")
	rootCmd.AddCommand(cmd)
}

// loadTable builds Table 3 from an experiment spec (its done runs) or from a
// run store directory (all its done runs).
func loadTable(arg string, opt report.Options) (*report.Table, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return report.FromDir(arg, opt)
	}
	spec, runs, err := loadRuns(arg)
	if err != nil {
		return nil, err
	}
	return report.FromStore(storeOf(spec), runs, opt)
}
