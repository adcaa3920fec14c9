package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// commandOptions are what the options structs of part B's commands embed:
// the streams and arguments of the execution, a complete that takes them
// from the command being executed, and a validate that checks nothing. A
// struct with more to complete defines its own complete, which calls setUp
// first; one with something to check defines its own validate.
type commandOptions struct {
	ioStreams
	args []string
}

// setUp takes the streams and arguments of the command being executed.
func (o *commandOptions) setUp(cmd *cobra.Command, args []string) {
	o.ioStreams, o.args = streamsOf(cmd), args
}

func (o *commandOptions) complete(cmd *cobra.Command, args []string) error {
	o.setUp(cmd, args)
	return nil
}

func (o *commandOptions) validate() error { return nil }

// checkFlag refuses a value of --flag that is not one of values, naming
// them: the one message of every flag that takes one of a few words.
func checkFlag(flag, value string, values ...string) error {
	if slices.Contains(values, value) {
		return nil
	}
	want := values[len(values)-1]
	if len(values) > 1 {
		want = strings.Join(values[:len(values)-1], ", ") + " or " + want
	}
	return fmt.Errorf("unknown --%s %q (want %s)", flag, value, want)
}
