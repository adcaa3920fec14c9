package experiments

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models/hub"
	"github.com/beluga-nlp/beluga/train"
)

// A run's hub checkpoint, identified by its commit, is what the runner
// trains from: the cache's snapshot at that commit, never a branch's newer
// one; a run whose checkpoint's identity is provisional never starts.
func TestRunnerStartsFromTheIdentifiedCommit(t *testing.T) {
	const old, newer = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	cache := t.TempDir()
	repoDir := filepath.Join(cache, "models--org--name")
	for _, c := range []string{old, newer} {
		snap := filepath.Join(repoDir, "snapshots", c)
		os.MkdirAll(snap, 0o755)
		for _, f := range []string{"config.json", "model.safetensors", "vocab.txt"} {
			if err := os.WriteFile(filepath.Join(snap, f), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.MkdirAll(filepath.Join(repoDir, "refs"), 0o755)
	os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(newer), 0o644)
	runner := &TrainRunner{Inputs: &Inputs{Hub: &hub.Resolver{CacheDir: cache, Offline: true}}}

	run := Run{Train: train.RunSpec{Model: train.ModelSpec{Kind: "bert", Path: "org/name@" + old}}}
	run.Inputs = []Input{{Field: "model.path", Path: "org/name@" + old, Name: "org/name", Commit: old, SHA256: "x"}}
	s, err := runner.Spec(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(repoDir, "snapshots", old); s.Model.Path != want {
		t.Errorf("model.path %s, want the identified commit's snapshot %s", s.Model.Path, want)
	}

	run.Inputs[0].Commit, run.Inputs[0].Pending = "", "checkpoint not fetched (org/name: …)"
	if _, err := runner.Spec(context.Background(), run); err == nil || !strings.Contains(err.Error(), "checkpoint not fetched") {
		t.Errorf("a provisional identity: %v, want a refusal", err)
	}
}
