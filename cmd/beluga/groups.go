package main

import "github.com/spf13/cobra"

// NewCmdSuite builds beluga suite: importing, inspecting, splitting and
// authoring behavioural test suites.
func NewCmdSuite() *cobra.Command {
	suiteCmd := &cobra.Command{
		Use:   "suite",
		Short: "Import, inspect and split behavioural test suites",
	}
	suiteCmd.AddCommand(
		NewCmdSuiteImport(), NewCmdSuiteStats(), NewCmdSuiteInputs(), NewCmdSuiteSplit(),
		NewCmdSuiteTemplate(), NewCmdSuiteSuggest(), NewCmdSuitePerturb(), NewCmdSuiteGenerate(),
	)
	return suiteCmd
}
