package main

import "github.com/spf13/cobra"

// Command groups that several files add subcommands to. They are package
// variables so that each file's init can attach its commands without an
// ordering dependency between init functions.
var (
	suiteCmd = &cobra.Command{
		Use:   "suite",
		Short: "Import, inspect and split behavioural test suites",
	}
	dataCmd = &cobra.Command{
		Use:   "data",
		Short: "Fetch datasets, suites, vocabularies and checkpoints into the local cache",
	}
)

func init() {
	rootCmd.AddCommand(suiteCmd, dataCmd)
}
