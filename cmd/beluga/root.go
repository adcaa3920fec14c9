package main

import (
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// NewCmdBeluga builds the beluga command with every subcommand. Each call
// builds a fresh tree, so flags set in one run (a test, say) never carry
// into the next.
func NewCmdBeluga() *cobra.Command {
	var verbose bool
	root := &cobra.Command{
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
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log debug messages")
	root.Version = version()
	root.AddCommand(
		NewCmdClean(), NewCmdData(), NewCmdEval(), NewCmdFailures(), NewCmdMigrate(),
		NewCmdPlot(), NewCmdPredict(), NewCmdQuickstart(), NewCmdReport(), NewCmdRun(),
		NewCmdServe(), NewCmdStatus(), NewCmdSuite(), NewCmdTest(), NewCmdTokenizer(),
		NewCmdTrain(), NewCmdVerify(),
	)
	return root
}

// ioStreams are the streams a command reads and writes, as kubectl's
// genericiooptions.IOStreams: an options struct holds them instead of
// reaching for os.Stdin, os.Stdout and os.Stderr, so that a test (or a
// program that builds the tree) captures what one execution prints.
type ioStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// streamsOf is the command's streams: standard input, output and error
// unless SetIn, SetOut or SetErr named others on it or an ancestor.
func streamsOf(cmd *cobra.Command) ioStreams {
	return ioStreams{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), ErrOut: cmd.ErrOrStderr()}
}

// version is the module version and VCS revision the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " " + s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			if s.Value == "true" {
				v += "+dirty"
			}
		}
	}
	return v
}

// enumFlag completes a flag's values in the shells (beluga completion).
func enumFlag(cmd *cobra.Command, name string, values ...string) {
	cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// renamedFlags maps a command's former flag names to their current ones, so
// that scripts written for the old names keep working.
func renamedFlags(old map[string]string) func(*pflag.FlagSet, string) pflag.NormalizedName {
	return func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if n, ok := old[name]; ok {
			return pflag.NormalizedName(n)
		}
		return pflag.NormalizedName(name)
	}
}
