package experimentstest

import (
	"io"
	"log/slog"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
)

// TrainSweep parses a spec and executes every run into a fresh store as
// beluga run does (experiments.Sweep.Execute: the trainer's checks, then
// the runs, two at a time), failing t on any error: the real pipeline, for
// tests that train tiny models end to end.
func TrainSweep(t testing.TB, yaml string) (*experiments.Store, []experiments.Run) {
	t.Helper()
	spec, err := experiments.ParseSpec([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	spec.Out = t.TempDir()
	sw, err := experiments.SweepOf(t.Context(), spec, &experiments.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := sw.Execute(t.Context(), experiments.SweepOptions{Options: experiments.Options{Jobs: 2, Logger: quiet}}); err != nil {
		t.Fatal(err)
	}
	return sw.Store, sw.Runs
}
