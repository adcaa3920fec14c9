// Command beluga runs behavioural-learning experiments: it imports and splits
// behavioural test suites, fetches datasets, trains text classifiers on i.i.d.
// data plus suites, scores them with CheckList's semantics and writes
// BeLUGA's tables and figures.
//
// Each command lives in its own file and is built by a NewCmdX constructor;
// NewCmdBeluga assembles the tree. Every command is a thin adapter from
// flags to a library call.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// SIGINT and SIGTERM cancel the command's context: training stops
	// within one update, an unfinished run is left without done and its
	// claim released. A second signal kills at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := NewCmdBeluga().ExecuteContext(ctx)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			err = fmt.Errorf("interrupted: %w", err)
		}
		fmt.Fprintln(os.Stderr, "beluga:", err)
		os.Exit(1)
	}
}
