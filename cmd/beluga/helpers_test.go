package main

import (
	"context"
	"io"

	"github.com/beluga-nlp/beluga/experiments"
)

// loadRuns expands a spec as beluga run does (datasets through the data
// cache, files taken from fromDir when set; nothing downloaded).
func loadRuns(spec, fromDir string) (*experiments.Spec, []experiments.Run, error) {
	in, err := newInputs(fromDir, true)
	if err != nil {
		return nil, nil, err
	}
	sw, err := experiments.OpenSweep(context.Background(), spec, "", in)
	if err != nil {
		return nil, nil, err
	}
	return sw.Spec, sw.Runs, nil
}

// storeOf is a spec's run store.
func storeOf(spec *experiments.Spec) *experiments.Store {
	return &experiments.Store{Dir: spec.OutDir()}
}

// sweepOf is the store and runs of a spec or store directory, as the
// commands that read a store see them.
func sweepOf(arg, store string) (*experiments.Store, []experiments.Run, error) {
	sw, err := openSweep(context.Background(), io.Discard, arg, store)
	if err != nil {
		return nil, nil, err
	}
	return sw.Store, sw.Runs, nil
}
