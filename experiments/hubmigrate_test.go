package experiments

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models/hub"
)

const (
	commitUsed  = "1111111111111111111111111111111111111111"
	commitNewer = "2222222222222222222222222222222222222222"
)

// fakeHubCache lays out org/name in huggingface_hub's cache layout (blobs
// named by their git sha1, snapshots linking to them) at each commit with
// its files' contents, refs/main at main.
func fakeHubCache(t *testing.T, cache, main string, commits map[string]map[string]string) {
	t.Helper()
	repo := filepath.Join(cache, "models--org--name")
	for commit, files := range commits {
		snap := filepath.Join(repo, "snapshots", commit)
		for _, d := range []string{filepath.Join(repo, "blobs"), snap, filepath.Join(repo, "refs")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, content := range files {
			sum := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content)))
			blob := hex.EncodeToString(sum[:])
			if err := os.WriteFile(filepath.Join(repo, "blobs", blob), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join("..", "..", "blobs", blob), filepath.Join(snap, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bertFiles are a checkpoint's files as the runner reads them (their
// content only tells commits apart).
func bertFiles(tag string) map[string]string {
	return map[string]string{"config.json": `{"model_type": "bert", "tag": "` + tag + `"}`, "model.safetensors": "weights " + tag, "vocab.txt": "[PAD]\n[UNK]\n" + tag + "\n"}
}

// hubStore executes a sweep of a checkpoint named by hub id (org/name at
// commitUsed, main) through an offline resolver of cache, then rewrites
// every record as a beluga before hub.Identity wrote it: the checkpoint's
// input is its snapshot's path and its files' digest, no commit or files,
// and the run IDs are those this gives. It returns the store and today's
// runs.
func hubStore(t *testing.T, cache string) (*Store, []Run) {
	t.Helper()
	s, err := ParseSpec([]byte("tasks: [{name: SENT, folds: {type: [MFT, INV]}}]\nmodel: {name: bert, checkpoint: org/name}\nconfigurations: [IID-T]\nmethods: [vanilla]\nscores: [type]\nseeds: [1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	in := &Inputs{Hub: &hub.Resolver{CacheDir: cache, Offline: true}}
	runs, err := Expand(context.Background(), s, in)
	if err != nil {
		t.Fatal(err)
	}
	store := &Store{Dir: t.TempDir()}
	if sum, err := Execute(context.Background(), store, runs, fakeRunner{}, Options{Jobs: 1, Logger: discardLogger()}); err != nil || sum.Err() != nil {
		t.Fatal(err, sum.Err())
	}
	snap := filepath.Join(cache, "models--org--name", "snapshots", commitUsed)
	digest, size, err := in.digests().Path(snap)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]string{} // today's ID → the older beluga's
	var sweep []Run
	for _, r := range runs { // baselines before the runs that start from them
		o := r
		o.Inputs = append([]Input(nil), r.Inputs...)
		hubs := 0
		for i, x := range o.Inputs {
			if x.Commit != "" {
				o.Inputs[i] = Input{Field: x.Field, Path: snap, Name: "org/name", SHA256: digest, Size: size}
				hubs++
			}
		}
		if hubs != 1 {
			t.Fatalf("run %s has %d hub checkpoint inputs, want 1: %+v", r.Label(), hubs, r.Inputs)
		}
		if r.From != "" {
			o.From = old[r.From]
		}
		if err := o.seal(); err != nil {
			t.Fatal(err)
		}
		if o.ID() == r.ID() {
			t.Fatalf("run %s: the older record has today's ID", r.Label())
		}
		old[r.ID()] = o.ID()
		sweep = append(sweep, o)
		dir := store.RunDir(o.ID())
		if err := os.Rename(store.RunDir(r.ID()), dir); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(filepath.Join(dir, SpecFile), o); err != nil {
			t.Fatal(err)
		}
		if err := writeDone(dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeJSON(filepath.Join(store.Dir, SweepFile), sweep); err != nil {
		t.Fatal(err)
	}
	return store, runs
}

// An older store of a hub checkpoint is re-keyed to the checkpoint's
// commit when the hub cache holds a snapshot with the very files it
// recorded — that commit, though main has moved on since — and nothing is
// retrained: every run is done under today's ID, its record naming the
// commit. A cache that lacks those files leaves the runs as they are and
// says so: no commit is guessed from main or from the recorded path.
func TestMigrateGivesOlderHubCheckpointsTheirCommit(t *testing.T) {
	for _, c := range []struct {
		name    string
		commits map[string]map[string]string
		moved   bool
	}{
		{"the used commit cached", map[string]map[string]string{commitUsed: bertFiles("used"), commitNewer: bertFiles("newer")}, true},
		{"only a newer commit cached", map[string]map[string]string{commitNewer: bertFiles("newer")}, false},
		{"the used commit's path with other files", map[string]map[string]string{commitUsed: bertFiles("edited"), commitNewer: bertFiles("newer")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The store is written with the used commit at main; the cache
			// migrate reads is then laid out as the case says.
			cache := t.TempDir()
			fakeHubCache(t, cache, commitUsed, map[string]map[string]string{commitUsed: bertFiles("used")})
			store, runs := hubStore(t, cache)
			if !store.NeedsMigrate() {
				t.Fatal("a store of older hub checkpoint records does not need migrating")
			}
			for _, r := range runs {
				if store.State(r.ID()) == Done {
					t.Fatalf("run %s is done under today's ID before migrating", r.Label())
				}
			}
			if err := os.RemoveAll(cache); err != nil {
				t.Fatal(err)
			}
			fakeHubCache(t, cache, commitNewer, c.commits)
			// main is now commitNewer; the runs read commitUsed.
			m, err := Migrate(context.Background(), store, &Inputs{Hub: &hub.Resolver{CacheDir: cache, Offline: true}})
			if err != nil {
				t.Fatal(err)
			}
			if !c.moved {
				if len(m.Moved) != 0 || len(m.Failed) != len(runs) {
					t.Fatalf("moved %v, failed %d of %d runs; want none moved, every run said", m.Moved, len(m.Failed), len(runs))
				}
				for old, why := range m.Failed {
					if !strings.Contains(why, "no snapshot of it in the hub cache") || !strings.Contains(why, "org/name") {
						t.Errorf("run %s: %q, want it to say the cache has no snapshot with its files", old, why)
					}
					if _, err := os.Stat(store.RunDir(old)); err != nil {
						t.Errorf("run %s was not left as it is: %v", old, err)
					}
				}
				if !store.NeedsMigrate() {
					t.Error("the store no longer needs migrating, though no run was")
				}
				return
			}
			if len(m.Failed) != 0 || len(m.Moved) != len(runs) || len(m.Damaged) != 0 {
				t.Fatalf("moved %d of %d, failed %v, damaged %v", len(m.Moved), len(runs), m.Failed, m.Damaged)
			}
			for _, r := range runs {
				if store.State(r.ID()) != Done {
					t.Errorf("run %s is not done under today's ID %s after migrating", r.Label(), r.ID())
					continue
				}
				got, err := ReadRun(store.RunDir(r.ID()))
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range got.Inputs {
					if x.Name == "org/name" && (x.Commit != commitUsed || len(x.Files) != 3) {
						t.Errorf("run %s records checkpoint %+v, want commit %s and its files", r.Label(), x, commitUsed)
					}
				}
				if err := verifyRun(store.RunDir(r.ID()), true); err != nil {
					t.Errorf("run %s: %v", r.Label(), err)
				}
			}
			if store.NeedsMigrate() {
				t.Error("the migrated store still needs migrating")
			}
		})
	}
}
