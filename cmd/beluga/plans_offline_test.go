package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// fakeCheckpoint is a hub checkpoint as the hub lists it: its commit and
// files; the LFS file's blob is its sha256, the others' their git sha1.
var fakeCheckpoint = struct {
	repo, commit string
	files        map[string]string // name → content
	lfs          map[string]bool
}{
	repo:   "google-bert/bert-base-uncased",
	commit: "86b5e0934494bd15c9632b12f734a8a67f723594",
	files: map[string]string{
		"config.json":       `{"model_type": "bert"}`,
		"model.safetensors": "weights",
		"vocab.txt":         "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n",
		"tf_model.h5":       "weights beluga does not read",
	},
	lfs: map[string]bool{"model.safetensors": true, "tf_model.h5": true},
}

// blobName is the name the hub (X-Linked-Etag, ETag) and its cache give a
// file's blob: an LFS file's sha256, else its git blob sha1 (here a stand-in
// of the right shape: only its agreement between hub and cache matters).
func blobName(name, content string) string {
	if fakeCheckpoint.lfs[name] {
		s := sha256.Sum256([]byte(content))
		return hex.EncodeToString(s[:])
	}
	s := sha256.Sum256([]byte("blob " + content))
	return hex.EncodeToString(s[:20])
}

// fakeHub answers the hub's listing of a revision (GET
// /api/models/{repo}/revision/{rev}?blobs=true) for fakeCheckpoint; any
// other request fails the test: planning never downloads.
func fakeHub(t *testing.T, asked *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		want := "/api/models/" + fakeCheckpoint.repo + "/revision/main"
		if r.Method != http.MethodGet || r.URL.Path != want || r.URL.Query().Get("blobs") != "true" {
			t.Errorf("the hub was asked %s %s, want GET %s?blobs=true only", r.Method, r.URL, want)
			http.NotFound(w, r)
			return
		}
		type lfs struct {
			SHA256 string `json:"sha256"`
			Size   int    `json:"size"`
		}
		type sibling struct {
			Name   string `json:"rfilename"`
			BlobID string `json:"blobId"`
			LFS    *lfs   `json:"lfs,omitempty"`
		}
		info := struct {
			ID       string    `json:"id"`
			SHA      string    `json:"sha"`
			Siblings []sibling `json:"siblings"`
		}{ID: fakeCheckpoint.repo, SHA: fakeCheckpoint.commit}
		for name, content := range fakeCheckpoint.files {
			s := sibling{Name: name, BlobID: blobName(name, content)}
			if fakeCheckpoint.lfs[name] {
				// An LFS file's blobId is its pointer's sha1; the sha256 is
				// in lfs, and names the cache's blob.
				s.BlobID = "0000000000000000000000000000000000000000"
				s.LFS = &lfs{SHA256: blobName(name, content), Size: len(content)}
			}
			info.Siblings = append(info.Siblings, s)
		}
		json.NewEncoder(w).Encode(info)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fakeHFCache lays fakeCheckpoint out as huggingface_hub's cache does:
// blobs named by their etag, the snapshot's files links to them,
// refs/main the commit.
func fakeHFCache(t *testing.T) string {
	cache := t.TempDir()
	repoDir := filepath.Join(cache, "models--"+strings.ReplaceAll(fakeCheckpoint.repo, "/", "--"))
	snap := filepath.Join(repoDir, "snapshots", fakeCheckpoint.commit)
	for _, d := range []string{filepath.Join(repoDir, "blobs"), snap, filepath.Join(repoDir, "refs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range fakeCheckpoint.files {
		if name == "tf_model.h5" {
			continue // transformers fetches only what it loads
		}
		blob := blobName(name, content)
		if err := os.WriteFile(filepath.Join(repoDir, "blobs", blob), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..", "..", "blobs", blob), filepath.Join(snap, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(fakeCheckpoint.commit), 0o644); err != nil {
		t.Fatal(err)
	}
	return cache
}

// TestFullPlanWithoutTheCheckpoint: beluga run specs/sent-full.yaml
// --dry-run needs none of bert-base's bytes. Offline with an empty hub
// cache it lists the whole plan, each run's state saying the checkpoint is
// not fetched; online it asks the hub's listing only (nothing downloaded);
// offline with the checkpoint in the hub cache, and offline from a spec that
// pins the commit, the IDs are the online ones.
func TestFullPlanWithoutTheCheckpoint(t *testing.T) {
	data := shareddata.Path(t, "data")
	t.Setenv("BELUGA_DATA", t.TempDir())
	spec, err := os.ReadFile(filepath.Join("..", "..", "specs", "sent-full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "sent-full.yaml")
	pinned := filepath.Join(dir, "sent-full-pinned.yaml")
	ref := "path: " + fakeCheckpoint.repo
	if !strings.Contains(string(spec), ref+"\n") {
		t.Fatalf("specs/sent-full.yaml has no %q", ref)
	}
	for path, text := range map[string]string{
		plain:  string(spec),
		pinned: strings.Replace(string(spec), ref+"\n", ref+"@"+fakeCheckpoint.commit+"\n", 1),
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var asked atomic.Int32
	hubURL := fakeHub(t, &asked).URL

	plan := func(t *testing.T, spec, cache string, offline bool) (ids, states []string, out string) {
		t.Helper()
		t.Setenv("HF_HUB_CACHE", cache)
		t.Setenv("HF_ENDPOINT", hubURL)
		t.Setenv("HF_HUB_OFFLINE", map[bool]string{true: "1", false: ""}[offline])
		out, err := execute(t, "run", spec, "--dry-run", "--from", data)
		if err != nil {
			t.Fatalf("beluga run %s --dry-run: %v\n%s", filepath.Base(spec), err, out)
		}
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			if m := runIDLine.FindStringSubmatch(sc.Text()); m != nil {
				ids = append(ids, m[1])
				states = append(states, strings.TrimSpace(sc.Text()[len(m[0]):]))
			}
		}
		return ids, states, out
	}

	const runs = 1198 // the spec's comment: the paper's plan
	ids, states, out := plan(t, plain, t.TempDir(), true)
	if len(ids) != runs || !strings.Contains(out, "1198 runs into ") {
		t.Fatalf("offline, nothing cached: %d runs listed, want %d:\n%.2000s", len(ids), runs, out)
	}
	for i, s := range states {
		if !strings.HasPrefix(s, "checkpoint not fetched ") {
			t.Fatalf("offline, nothing cached: run %s's state is %q, want checkpoint not fetched", ids[i], s)
		}
	}
	if !strings.Contains(out, "1198 runs: checkpoint not fetched (google-bert/bert-base-uncased: not in the hub cache") {
		t.Errorf("offline, nothing cached: the listing does not say why the IDs are provisional:\n%.3000s", out[len(out)-min(len(out), 3000):])
	}
	// A run of a provisional ID never starts: nothing is written.
	store := filepath.Join(t.TempDir(), "store")
	if out, err := execute(t, "run", plain, "--from", data, "--store", store); err == nil || !strings.Contains(err.Error(), "checkpoint not fetched") {
		t.Errorf("beluga run offline, nothing cached: %v, want a refusal saying the checkpoint is not fetched\n%.2000s", err, out)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("beluga run refused, yet %s was made (%v)", store, err)
	}
	if asked.Load() != 0 {
		t.Fatalf("offline: the hub was asked %d times", asked.Load())
	}

	online, onlineStates, out := plan(t, plain, t.TempDir(), false)
	if len(online) != runs || asked.Load() != 1 {
		t.Fatalf("online: %d runs, the hub asked %d times (want %d, 1):\n%.2000s", len(online), asked.Load(), runs, out)
	}
	// Listed, not downloaded: the runs say so, their IDs are exact.
	if !strings.HasPrefix(onlineStates[0], "checkpoint not fetched ") || strings.Contains(out, "provisional") {
		t.Errorf("online, nothing cached: run %s's state is %q, want checkpoint not fetched (and no provisional IDs):\n%.3000s", online[0], onlineStates[0], out[len(out)-min(len(out), 3000):])
	}
	if strings.Join(online, " ") == strings.Join(ids, " ") {
		t.Errorf("online: the IDs are the provisional ones")
	}

	for _, c := range []struct {
		name, spec string
		cached     bool
	}{
		{"offline, the checkpoint in the HF cache", plain, true},
		{"offline, the spec pins the commit", pinned, false},
		{"offline, pinned and cached", pinned, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			if c.cached {
				cache = fakeHFCache(t)
			}
			got, states, out := plan(t, c.spec, cache, true)
			if d := lineDiff(strings.Join(online, "\n"), strings.Join(got, "\n")); d != "" {
				t.Errorf("the IDs are not the online ones:\n%s", d)
			}
			if fetched := !strings.HasPrefix(states[0], "checkpoint not fetched "); fetched != c.cached || strings.Contains(out, "provisional") {
				t.Errorf("cached %v: run %s's state is %q:\n%.3000s", c.cached, got[0], states[0], out[len(out)-min(len(out), 3000):])
			}
			if !c.cached {
				// Offline, a checkpoint not here is said once, before any run.
				store := filepath.Join(t.TempDir(), "store")
				if _, err := execute(t, "run", c.spec, "--from", data, "--store", store); err == nil || !strings.Contains(err.Error(), "checkpoint not fetched") {
					t.Errorf("beluga run: %v, want a refusal saying the checkpoint is not fetched", err)
				}
				if _, err := os.Stat(store); !os.IsNotExist(err) {
					t.Errorf("beluga run refused, yet %s was made (%v)", store, err)
				}
			}
		})
	}
	if asked.Load() != 1 {
		t.Errorf("offline: the hub was asked (%d requests in all, want the online one)", asked.Load())
	}
}
