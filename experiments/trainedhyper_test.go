package experiments

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/train"
)

// TestTrainedHyper: a run reused with beluga train --hyper-from gives the
// hyper-parameters it trained with — its search's choice when it searched,
// not the defaults its spec.json was written with before the search — and
// a run that is not done, or that records none, is refused.
func TestTrainedHyper(t *testing.T) {
	defaults := train.Hyper{Epochs: 3, BatchSize: 16, LR: 2e-5, Loss: train.LossOptions{DetachINV: true}}
	chosen := train.Hyper{Epochs: 1, BatchSize: 4, LR: 0.05, Loss: train.LossOptions{DetachINV: true}}
	spec := train.RunSpec{Task: "sentiment", Hyper: defaults}
	// done makes a finished run directory the way beluga train --out does
	// (RunOne writes spec.json, then fn the run's files).
	done := func(t *testing.T, spec any, files map[string]any) string {
		dir := filepath.Join(t.TempDir(), "run")
		err := RunOne(context.Background(), dir, spec, func(_ context.Context, dir string) error {
			for name, v := range files {
				if err := writeJSON(filepath.Join(dir, name), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	failed := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "run")
		err := RunOne(context.Background(), dir, spec, func(context.Context, string) error { return errors.New("no trial trained") })
		if err == nil {
			t.Fatal("the failing run did not fail")
		}
		return dir
	}
	for _, tc := range []struct {
		name    string
		dir     func(t *testing.T) string
		want    train.Hyper
		wantErr string
	}{
		{"beluga train", func(t *testing.T) string { return done(t, spec, nil) }, defaults, ""},
		{"beluga train --search", func(t *testing.T) string {
			return done(t, spec, map[string]any{SearchFile: SearchRecord{Chosen: chosen}})
		}, chosen, ""},
		{"a sweep's run", func(t *testing.T) string {
			trained := spec
			trained.Hyper = chosen
			return done(t, Run{Task: "SENT", Train: spec}, map[string]any{TrainSpecFile: trained})
		}, chosen, ""},
		{"trailing slash", func(t *testing.T) string {
			return done(t, spec, map[string]any{SearchFile: SearchRecord{Chosen: chosen}}) + "/"
		}, chosen, ""},
		{"failed search", failed, train.Hyper{}, "is failed"},
		{"no run", func(t *testing.T) string { return t.TempDir() + "/none" }, train.Hyper{}, "is missing"},
		{"a sweep's trial", func(t *testing.T) string { return done(t, Run{Task: "SENT", Train: spec}, nil) }, train.Hyper{}, "records no suite-phase hyper-parameters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := TrainedHyper(tc.dir(t))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h != tc.want {
				t.Errorf("hyper %+v, want %+v", h, tc.want)
			}
		})
	}
}
