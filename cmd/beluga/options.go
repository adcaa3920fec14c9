package main

import (
	"context"

	"github.com/spf13/cobra"
)

// options is a command's options struct, as kubectl writes its commands:
// the struct holds the command's flags and streams, complete turns the
// flags and arguments into what the command works on, validate refuses
// what it cannot do before anything is read or written, and run does it.
// A command's constructor binds the flags to a fresh struct, so that two
// trees (two tests) never share one.
type options interface {
	complete(cmd *cobra.Command, args []string) error
	validate() error
	run(ctx context.Context) error
}

// commandRunE is the RunE of a command made of o: complete, validate, run.
func commandRunE(o options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.complete(cmd, args); err != nil {
			return err
		}
		if err := o.validate(); err != nil {
			return err
		}
		return o.run(cmd.Context())
	}
}
