package main

import (
	"context"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"testing"

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

// trainTestdata is package train's fixtures directory (tiny word vectors,
// the INTENT suite and data), absolute.
func trainTestdata(t testing.TB) string {
	t.Helper()
	td, err := filepath.Abs("../../train/testdata")
	if err != nil {
		t.Fatal(err)
	}
	return td
}

// writeFile writes text to path and returns the path.
func writeFile(t testing.TB, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// shippedSpec is the text of specs/NAME.
func shippedSpec(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "specs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readCSV reads a CSV file whole.
func readCSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}
