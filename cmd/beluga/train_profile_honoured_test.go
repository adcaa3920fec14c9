package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/train"
)

// beluga train records what the profile a spec names fills, and no step
// of the command overrides a value after the profile has filled it: with a
// profile whose every value differs from BeLUGA's, the recorded spec is
// the library's fill of the same spec, and LP-FT's phases last the
// profile's probing epochs. The command used to write BeLUGA's 1.5 probing
// epochs over the profile's after filling.
func TestTrainHonoursTheProfile(t *testing.T) {
	other := train.BeLUGA
	other.Name = "test-other"
	other.Exceptions = nil
	other.Classification = train.RunDefaults{
		MaxLength:  48,
		Hyper:      train.Hyper{Epochs: 2, BatchSize: 4, LR: 7e-5},
		IIDHyper:   train.Hyper{Epochs: 4, BatchSize: 6, LR: 9e-5},
		ProbeHyper: train.Hyper{Epochs: 2.5, BatchSize: 5, LR: 3e-3},
	}
	train.Profiles = append(train.Profiles, &other)
	t.Cleanup(func() {
		train.Profiles = slices.DeleteFunc(train.Profiles, func(p *train.Profile) bool { return p == &other })
	})

	dir := t.TempDir()
	specFile := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(specFile, []byte("profile: test-other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	// The suite is missing, so the run fails after recording its resolved
	// spec.
	args := []string{"train", "--spec", specFile, "--task", "sentiment", "--configuration", "iid+t", "--method", "lp-ft",
		"--suite", filepath.Join(dir, "missing.jsonl"), "--iid-train", "train.tsv", "--iid-dev", "dev.tsv", "--out", out}
	got := recordedSpec(t, out, args...)
	want := train.RunSpec{Profile: other.Name, Task: "sentiment", Configuration: train.ConfigIIDPlusT, Method: "lp-ft"}
	if err := want.FillDefaults(); err != nil {
		t.Fatal(err)
	}
	if got.Profile != other.Name || got.MaxLength != want.MaxLength || got.Hyper != want.Hyper || got.IIDHyper != want.IIDHyper || got.ProbeHyper != want.ProbeHyper {
		t.Errorf("beluga train recorded profile %q, max_length %d, hyper %+v, iid_hyper %+v, probe_hyper %+v;\nthe profile fills %d, %+v, %+v, %+v",
			got.Profile, got.MaxLength, got.Hyper, got.IIDHyper, got.ProbeHyper, want.MaxLength, want.Hyper, want.IIDHyper, want.ProbeHyper)
	}
	if e := got.Effective(); e.Hyper.Epochs != 2.5 || e.ProbeHyper.Epochs != 2.5 {
		t.Errorf("LP-FT trains %v and %v epochs, want the profile's probing epochs, 2.5, for each phase", e.ProbeHyper.Epochs, e.Hyper.Epochs)
	}
}

// recordedSpec runs beluga train with args, which name a missing suite so
// that the run fails after recording its resolved spec in out, and returns
// that spec.
func recordedSpec(t *testing.T, out string, args ...string) train.RunSpec {
	t.Helper()
	if _, err := execute(t, args...); err == nil {
		t.Fatal("a missing suite was not refused")
	}
	b, err := os.ReadFile(filepath.Join(out, "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got train.RunSpec
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	return got
}
