package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

var verbose bool

var rootCmd = &cobra.Command{
	Use:   "beluga",
	Short: "Behavioural learning experiments: train on test suites, measure what generalises",
	Long: `beluga trains text classifiers on i.i.d. data plus CheckList-style behavioural
test suites and measures whether what a model learns from a suite generalises to
functionalities, functionality classes and test types it never saw (BeLUGA).`,
	SilenceUsage:  true,
	SilenceErrors: true,
	PersistentPreRun: func(cmd *cobra.Command, args []string) {
		level := slog.LevelInfo
		if verbose {
			level = slog.LevelDebug
		}
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	},
}

func init() {
	rootCmd.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log debug messages")
}
