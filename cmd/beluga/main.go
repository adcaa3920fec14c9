// Command beluga runs behavioural-learning experiments: it imports and splits
// behavioural test suites, fetches datasets, trains text classifiers on i.i.d.
// data plus suites, scores them with CheckList's semantics and writes
// BeLUGA's tables and figures.
//
// Each command group lives in its own file and registers itself with the root
// command in an init function; every command is a thin adapter from flags to
// a library call.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "beluga:", err)
		os.Exit(1)
	}
}
