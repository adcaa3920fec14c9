package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// options is a command's options struct, as kubectl writes its commands:
// the struct holds the command's flags and streams, complete turns the
// flags and arguments into what the command works on, validate refuses
// what it cannot do before anything is read or written, and run does it.
// A command's constructor binds the flags to a fresh struct, so that two
// trees (two tests) never share one. Every options struct embeds
// commandOptions, which gives it the streams and arguments of the
// execution and, unless it has its own, a complete and a validate that do
// nothing.
type options interface {
	common() *commandOptions
	complete(cmd *cobra.Command, args []string) error
	validate() error
	run(ctx context.Context) error
}

// runE is the RunE of a command made of o: it gives o the
// command's streams and arguments, then completes, validates and runs it.
func runE(o options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		b := o.common()
		b.ioStreams, b.args = streamsOf(cmd), args
		if err := o.complete(cmd, args); err != nil {
			return err
		}
		if err := o.validate(); err != nil {
			return err
		}
		return o.run(cmd.Context())
	}
}

// commandOptions are what every options struct embeds: the streams and
// arguments of the execution (set by runE).
type commandOptions struct {
	ioStreams
	args []string
}

func (o *commandOptions) common() *commandOptions { return o }

func (o *commandOptions) complete(*cobra.Command, []string) error { return nil }

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
