package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
)

// Identity is what the hub publishes about a checkpoint at a revision,
// known without its bytes: the commit the revision resolves to and, for
// each file beluga reads, its blob name (the sha256 of an LFS file, the
// git blob sha1 of any other). A git commit hash pins every file of the
// tree, LFS pointers (and so the weights' sha256) included, so the commit
// alone identifies the content (Digest); Files records what the commit
// pins for the files a run reads.
type Identity struct {
	Repo     string            `json:"repo"`
	Revision string            `json:"revision"`
	Commit   string            `json:"commit,omitempty"` // "" when unknown: not cached, offline, revision not a commit
	Files    map[string]string `json:"files,omitempty"`  // file name → blob name (etag)
	// Dir is the snapshot directory when the cache holds every file beluga
	// needs ("" otherwise: the runs fetch it).
	Dir string `json:"-"`
}

// Digest is the content identity of the checkpoint: the same from the hub's
// listing, from a hub cache made by beluga or by huggingface_hub, and from
// a spec that pins the commit; "" while the commit is unknown.
func (id Identity) Digest() string {
	if id.Commit == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("huggingface hub checkpoint " + id.Repo + "@" + id.Commit))
	return hex.EncodeToString(sum[:])
}

// Identify says what the hub publishes about ref without downloading any
// file: from the hub cache when it knows the revision (no network, no
// hashing: the cache names each blob by its etag), else from the hub's
// listing of the revision (GET /api/models/{repo}/revision/{rev}?blobs=true,
// which huggingface_hub's model_info(files_metadata=True) reads), unless
// the resolver is offline: then the identity has the commit only when ref
// pins one, and no files.
func (r *Resolver) Identify(ctx context.Context, ref string) (Identity, error) {
	hr, err := ParseRef(ref)
	if err != nil {
		return Identity{}, fmt.Errorf("model %s: %w", ref, err)
	}
	id := Identity{Repo: hr.Repo, Revision: hr.Revision}
	dir, missing, err := r.lookup(hr)
	if err != nil {
		return id, err
	}
	if dir != "" {
		id.Commit = filepath.Base(dir)
		id.Files = cachedFiles(dir)
		if len(missing) == 0 {
			id.Dir = dir
		}
		return id, nil
	}
	if IsCommit(hr.Revision) {
		id.Commit = hr.Revision
	}
	if r.Offline {
		return id, nil
	}
	return r.listed(ctx, id)
}

// cachedFiles names the blob of each file a snapshot links to (a copy
// instead of a link, as on file systems without symbolic links, is not
// named: its blob is not known without hashing it).
func cachedFiles(dir string) map[string]string {
	files := map[string]string{}
	groups := append(append([][]string{}, wantFiles...), [][]string{optionalFiles}...)
	for _, g := range groups {
		for _, name := range g {
			if target, err := os.Readlink(filepath.Join(dir, name)); err == nil {
				files[name] = filepath.Base(target)
			}
		}
	}
	if len(files) == 0 {
		return nil
	}
	return files
}

// listed asks the hub for the revision's commit and its files' blobs.
func (r *Resolver) listed(ctx context.Context, id Identity) (Identity, error) {
	target := r.endpoint() + "/api/models/" + id.Repo + "/revision/" + url.PathEscape(id.Revision) + "?blobs=true"
	req, err := r.request(ctx, http.MethodGet, target)
	if err != nil {
		return id, err
	}
	resp, err := r.client().Do(req)
	if err != nil {
		return id, fmt.Errorf("model %s: %s: %w (offline? set HF_HUB_OFFLINE=1: runs are then listed with the checkpoint not fetched)", id.Repo, target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return id, fmt.Errorf("model %s@%s: %w", id.Repo, id.Revision, statusErrorOrStatus(target, resp))
	}
	var info struct {
		SHA      string `json:"sha"`
		Siblings []struct {
			Name   string `json:"rfilename"`
			BlobID string `json:"blobId"`
			LFS    *struct {
				SHA256 string `json:"sha256"`
			} `json:"lfs"`
		} `json:"siblings"`
	}
	// A listing is a few kB; a bigger answer is not the hub's.
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&info); err != nil {
		return id, fmt.Errorf("model %s@%s: %s: %w", id.Repo, id.Revision, target, err)
	}
	if !IsCommit(info.SHA) {
		return id, fmt.Errorf("model %s@%s: %s: no commit hash in the answer (sha %q)", id.Repo, id.Revision, target, info.SHA)
	}
	if id.Commit != "" && info.SHA != id.Commit {
		return id, fmt.Errorf("model %s@%s: the hub answered for commit %s", id.Repo, id.Revision, info.SHA)
	}
	id.Commit = info.SHA
	blobs := map[string]string{}
	for _, s := range info.Siblings {
		blobs[s.Name] = s.BlobID
		if s.LFS != nil && s.LFS.SHA256 != "" {
			blobs[s.Name] = s.LFS.SHA256
		}
	}
	// The files beluga would fetch: the first of each group the hub has,
	// and the optional ones.
	id.Files = map[string]string{}
	for _, g := range wantFiles {
		for _, name := range g {
			if b, ok := blobs[name]; ok {
				id.Files[name] = b
				break
			}
		}
	}
	for _, name := range optionalFiles {
		if b, ok := blobs[name]; ok {
			id.Files[name] = b
		}
	}
	return id, nil
}
