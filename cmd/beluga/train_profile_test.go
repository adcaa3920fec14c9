package main

import (
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/train"
)

// beluga train takes what its flags leave out from the profile for the task
// and configuration, as beluga run does: READ's 384-token features and
// SQuAD's hyper-parameters, QQP's LP row from the initial model. Before the
// profile, beluga train gave every task sentiment's values.
func TestTrainTakesTheProfilesDefaults(t *testing.T) {
	tests := []struct {
		task, config string
		maxLength    int
		hyper, probe train.Hyper
	}{
		{"sentiment", "iid+t", 128, train.Hyper{Epochs: 1, BatchSize: 8, LR: 2e-5}, train.Hyper{Epochs: 1.5, BatchSize: 8, LR: 1e-3}},
		{"qqp", "iid+t", 128, train.Hyper{Epochs: 1, BatchSize: 8, LR: 2e-5}, train.Hyper{Epochs: 1.5, BatchSize: 16, LR: 1e-3}},
		{"squad", "iid+t", 384, train.Hyper{Epochs: 2, BatchSize: 3, LR: 3e-5}, train.Hyper{Epochs: 1.5, BatchSize: 3, LR: 5e-4}},
		{"squad", "iid-(iid+t)", 384, train.Hyper{Epochs: 2, BatchSize: 3, LR: 3e-5}, train.Hyper{Epochs: 1.5, BatchSize: 3, LR: 1e-3}},
	}
	for _, tc := range tests {
		t.Run(tc.task+" "+tc.config, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			// The suite is missing, so the run fails after recording its
			// resolved spec.
			args := []string{"train", "--task", tc.task, "--configuration", tc.config, "--method", "lp-ft",
				"--suite", filepath.Join(t.TempDir(), "missing.jsonl"), "--iid-train", "train.tsv", "--iid-dev", "dev.tsv", "--out", out}
			if tc.config != "iid+t" {
				args = append(args, "--from-iid", t.TempDir())
			}
			got := recordedSpec(t, out, args...)
			if got.MaxLength != tc.maxLength || got.Hyper != tc.hyper || got.ProbeHyper != tc.probe {
				t.Errorf("beluga train recorded max_length %d, hyper %+v, probe %+v; want %d, %+v, %+v", got.MaxLength, got.Hyper, got.ProbeHyper, tc.maxLength, tc.hyper, tc.probe)
			}
			// The sweep runner resolves the same run to the same values.
			d, err := got.Defaults()
			if err != nil {
				t.Fatal(err)
			}
			if got.Profile != train.DefaultProfile || got.Kind == "" {
				t.Errorf("beluga train recorded profile %q, kind %q: want both named", got.Profile, got.Kind)
			}
			if d.MaxLength != got.MaxLength || d.Hyper != got.Hyper || d.ProbeHyper != got.ProbeHyper {
				t.Errorf("the profile says %d %+v %+v", d.MaxLength, d.Hyper, d.ProbeHyper)
			}
		})
	}
}
