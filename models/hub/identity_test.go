package hub

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdentifyWithoutTheBytes: a checkpoint's identity comes from the hub
// cache (the commit refs/main names, the blobs the snapshot links to) or,
// online, from the hub's listing of the revision, and is the same from
// either; offline and uncached it is known only from a pinned commit.
func TestIdentifyWithoutTheBytes(t *testing.T) {
	const commit = "86b5e0934494bd15c9632b12f734a8a67f723594"
	const weights = "4c7a1e8b1cd8bbf2e5b1d0c56c0e5f9d3a9ea5c4dd4e7c6b5f8d1a7e9b3c2d10"
	listing := `{"sha": "` + commit + `", "siblings": [
		{"rfilename": "config.json", "blobId": "45a2321a7ecfdaaf60a6c1fd7f5463994cc8907d"},
		{"rfilename": "model.safetensors", "blobId": "ffffffffffffffffffffffffffffffffffffffff", "lfs": {"sha256": "` + weights + `", "size": 7}},
		{"rfilename": "pytorch_model.bin", "blobId": "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", "lfs": {"sha256": "` + strings.Repeat("e", 64) + `", "size": 7}},
		{"rfilename": "vocab.txt", "blobId": "fb140275c155a9c7c5a3b3e0e77a9e839594a938"}]}`
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.String())
		if r.URL.Path == "/api/models/org/name/revision/main" && r.URL.Query().Get("blobs") == "true" {
			w.Write([]byte(listing))
			return
		}
		w.Header().Set("X-Error-Code", "RevisionNotFound")
		http.NotFound(w, r)
	}))
	defer srv.Close()

	// A cache as huggingface_hub leaves it.
	cached := t.TempDir()
	repoDir := filepath.Join(cached, "models--org--name")
	snap := filepath.Join(repoDir, "snapshots", commit)
	os.MkdirAll(filepath.Join(repoDir, "blobs"), 0o755)
	os.MkdirAll(snap, 0o755)
	os.MkdirAll(filepath.Join(repoDir, "refs"), 0o755)
	os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(commit), 0o644)
	for name, blob := range map[string]string{"config.json": "45a2321a7ecfdaaf60a6c1fd7f5463994cc8907d", "model.safetensors": weights, "vocab.txt": "fb140275c155a9c7c5a3b3e0e77a9e839594a938"} {
		os.WriteFile(filepath.Join(repoDir, "blobs", blob), []byte("x"), 0o644)
		if err := os.Symlink(filepath.Join("..", "..", "blobs", blob), filepath.Join(snap, name)); err != nil {
			t.Fatal(err)
		}
	}

	online, err := (&Resolver{CacheDir: t.TempDir(), Endpoint: srv.URL}).Identify(context.Background(), "org/name")
	if err != nil {
		t.Fatal(err)
	}
	if online.Commit != commit || online.Files["model.safetensors"] != weights || online.Files["pytorch_model.bin"] != "" || online.Dir != "" {
		t.Fatalf("online: %+v: want the commit, the safetensors' sha256, not the .bin beluga does not read, no local dir", online)
	}
	for _, c := range []struct {
		name, cache, ref string
		wantDigest       string
		wantDir          bool
	}{
		{"cached", cached, "org/name", online.Digest(), true},
		{"cached, pinned", cached, "org/name@" + commit, online.Digest(), true},
		{"uncached, pinned", t.TempDir(), "org/name@" + commit, online.Digest(), false},
		{"uncached, a branch", t.TempDir(), "org/name", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, err := (&Resolver{CacheDir: c.cache, Endpoint: srv.URL, Offline: true}).Identify(context.Background(), c.ref)
			if err != nil {
				t.Fatal(err)
			}
			if id.Digest() != c.wantDigest || (id.Dir != "") != c.wantDir {
				t.Errorf("digest %q dir %q, want %q (dir: %v)", id.Digest(), id.Dir, c.wantDigest, c.wantDir)
			}
			if c.wantDir && id.Files["model.safetensors"] != weights {
				t.Errorf("files %v: want the blobs the snapshot links to", id.Files)
			}
		})
	}
	if len(asked) != 1 {
		t.Errorf("the hub was asked %v, want the one online listing", asked)
	}
	if _, err := (&Resolver{CacheDir: t.TempDir(), Endpoint: srv.URL}).Identify(context.Background(), "org/name@v9"); err == nil || !strings.Contains(err.Error(), "revision not found") {
		t.Errorf("an unknown revision: %v", err)
	}
}
