package experimentstest

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
)

// TrainSweep parses a spec, checks it with package train's runner, expands
// it and executes every run into a fresh store, failing t on any error:
// the real pipeline, for tests that train tiny models end to end.
func TrainSweep(t testing.TB, yaml string) (*experiments.Store, []experiments.Run) {
	t.Helper()
	spec, err := experiments.ParseSpec([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	store := &experiments.Store{Dir: t.TempDir()}
	runner := &experiments.TrainRunner{Store: store}
	if err := runner.Check(spec); err != nil {
		t.Fatal(err)
	}
	runs, err := experiments.Expand(context.Background(), spec, &experiments.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sum, err := experiments.Execute(context.Background(), store, runs, runner, experiments.Options{Jobs: 2, Logger: quiet})
	if err != nil || sum.Err() != nil {
		t.Fatal(err, sum.Err())
	}
	return store, runs
}
