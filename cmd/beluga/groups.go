package main

import "github.com/spf13/cobra"

// newGroup builds a command that only groups its subcommands (beluga
// suite, data, tokenizer): run alone, it prints its help.
func newGroup(use, short string, subcommands ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	cmd.AddCommand(subcommands...)
	return cmd
}

// NewCmdSuite builds beluga suite: importing, inspecting, splitting and
// authoring behavioural test suites.
func NewCmdSuite() *cobra.Command {
	return newGroup("suite", "Import, inspect and split behavioural test suites",
		NewCmdSuiteImport(), NewCmdSuiteStats(), NewCmdSuiteInputs(), NewCmdSuiteSplit(),
		NewCmdSuiteTemplate(), NewCmdSuiteSuggest(), NewCmdSuitePerturb(), NewCmdSuiteGenerate())
}
