package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

// fileMeta is what the hub says about a file before it is downloaded (the
// headers huggingface_hub's get_hf_file_metadata reads).
type fileMeta struct {
	Commit   string // X-Repo-Commit
	ETag     string // X-Linked-Etag for LFS files, else ETag, unquoted
	Size     int64  // X-Linked-Size, else Content-Length; -1 unknown
	Location string // where the bytes are: the redirect target, or the resolve URL
}

// repoLocks serialises downloads of one repository within a process.
var repoLocks sync.Map

// errEntryNotFound reports a file the repository does not have.
var errEntryNotFound = errors.New("no such file in the repository")

// download fetches the files of ref that the cache lacks and returns the
// snapshot directory. config.json is asked for first: the commit the hub
// answers with pins every other file, so a branch moving meanwhile cannot
// mix two versions of a model.
func (r *Resolver) download(ctx context.Context, ref Ref) (string, error) {
	// Runs of one sweep resolve the same model at once: one downloads, the
	// others then find it in the cache.
	mu, _ := repoLocks.LoadOrStore(r.RepoDir(ref.Repo), &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if dir, missing, err := r.lookup(ref); err == nil && len(missing) == 0 {
		return dir, nil
	}
	commit := ""
	if IsCommit(ref.Revision) {
		commit = ref.Revision
	}
	groups := append([][]string{}, wantFiles...)
	for _, name := range optionalFiles {
		groups = append(groups, []string{name})
	}
	for gi, g := range groups {
		required := gi < len(wantFiles)
		got := ""
		for _, name := range g {
			if commit != "" {
				snap := filepath.Join(r.RepoDir(ref.Repo), "snapshots", commit)
				if firstPresent(snap, []string{name}) != "" {
					got = name
					break
				}
				if _, err := os.Stat(filepath.Join(r.RepoDir(ref.Repo), ".no_exist", commit, name)); err == nil {
					continue
				}
			}
			rev := ref.Revision
			if commit != "" {
				rev = commit
			}
			meta, err := r.head(ctx, ref.Repo, rev, name)
			if errors.Is(err, errEntryNotFound) {
				if IsCommit(meta.Commit) {
					r.markAbsent(ref.Repo, meta.Commit, name)
				}
				continue
			}
			if err != nil {
				return "", fmt.Errorf("model %s: %w", ref, err)
			}
			if commit == "" {
				if !IsCommit(meta.Commit) {
					return "", fmt.Errorf("model %s: the hub's answer for %s has no commit hash (X-Repo-Commit %q)", ref, name, meta.Commit)
				}
				commit = meta.Commit
			}
			if meta.Commit != "" && meta.Commit != commit {
				return "", fmt.Errorf("model %s: %s answered from commit %s, want %s", ref, name, meta.Commit, commit)
			}
			if err := r.fetchFile(ctx, ref, commit, name, meta); err != nil {
				return "", fmt.Errorf("model %s: %w", ref, err)
			}
			got = name
			break
		}
		if required && got == "" {
			return "", fmt.Errorf("model %s: the hub has none of %s at commit %s", ref, strings.Join(g, ", "), commit)
		}
		// A sharded checkpoint's index brings its shards.
		snap := filepath.Join(r.RepoDir(ref.Repo), "snapshots", commit)
		shards, err := shardsOf(snap, got)
		if err != nil {
			return "", fmt.Errorf("model %s: %w", ref, err)
		}
		for _, shard := range shards {
			if firstPresent(snap, []string{shard}) != "" {
				continue
			}
			meta, err := r.head(ctx, ref.Repo, commit, shard)
			if err != nil {
				return "", fmt.Errorf("model %s: shard %s: %w", ref, shard, err)
			}
			if err := r.fetchFile(ctx, ref, commit, shard, meta); err != nil {
				return "", fmt.Errorf("model %s: %w", ref, err)
			}
		}
	}
	if ref.Revision != commit {
		// huggingface_hub records which commit a branch or tag named.
		if err := atomicfile.WriteFile(filepath.Join(r.RepoDir(ref.Repo), "refs", filepath.FromSlash(ref.Revision)), []byte(commit)); err != nil {
			return "", fmt.Errorf("hub cache: %w", err)
		}
	}
	return filepath.Join(r.RepoDir(ref.Repo), "snapshots", commit), nil
}

func (r *Resolver) resolveURL(repo, rev, name string) string {
	return r.endpoint() + "/" + repo + "/resolve/" + url.PathEscape(rev) + "/" + name
}

func (r *Resolver) client() *http.Client {
	if r.Client != nil {
		return r.Client
	}
	return http.DefaultClient
}

// authorise adds the token to requests for the hub itself, never to the
// storage a file redirects to.
func (r *Resolver) authorise(req *http.Request) {
	ep, err := url.Parse(r.endpoint())
	if r.Token != "" && err == nil && req.URL.Host == ep.Host {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
}

// request is a request to the hub or its storage as beluga sends every
// one: with its User-Agent, and authorised (authorise).
func (r *Resolver) request(ctx context.Context, method, target string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "beluga")
	r.authorise(req)
	return req, nil
}

// head asks the hub about a file, following relative redirects (a renamed
// repository) but not absolute ones (the storage of LFS files), whose
// headers carry the file's metadata.
func (r *Resolver) head(ctx context.Context, repo, rev, name string) (fileMeta, error) {
	target := r.resolveURL(repo, rev, name)
	noFollow := *r.client()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for hops := 0; ; hops++ {
		req, err := r.request(ctx, http.MethodHead, target)
		if err != nil {
			return fileMeta{}, err
		}
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := noFollow.Do(req)
		if err != nil {
			return fileMeta{}, fmt.Errorf("%s: %w (offline? set HF_HUB_OFFLINE=1 and use a cached or local model)", target, err)
		}
		resp.Body.Close()
		meta := fileMeta{
			Commit:   resp.Header.Get("X-Repo-Commit"),
			ETag:     normaliseETag(firstNonEmpty(resp.Header.Get("X-Linked-Etag"), resp.Header.Get("ETag"))),
			Size:     -1,
			Location: target,
		}
		if s := firstNonEmpty(resp.Header.Get("X-Linked-Size"), resp.Header.Get("Content-Length")); s != "" {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				meta.Size = n
			}
		}
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			loc, err := resp.Location()
			if err != nil {
				return meta, fmt.Errorf("%s: redirect without a location", target)
			}
			if resp.Header.Get("Location") != "" && !strings.Contains(resp.Header.Get("Location"), "://") && hops < 10 {
				target = loc.String()
				continue
			}
			meta.Location = loc.String()
		case resp.StatusCode == http.StatusOK:
		default:
			return meta, statusError(target, resp)
		}
		if meta.ETag == "" {
			return meta, fmt.Errorf("%s: the hub sent no ETag: cannot place the file in the cache", target)
		}
		return meta, nil
	}
}

// statusError explains a refused request with the hub's X-Error-Code.
func statusError(target string, resp *http.Response) error {
	code := resp.Header.Get("X-Error-Code")
	switch {
	case code == "EntryNotFound":
		return errEntryNotFound
	case code == "RevisionNotFound":
		return fmt.Errorf("%s: revision not found", target)
	case code == "GatedRepo":
		return fmt.Errorf("%s: %s: a gated model: accept its conditions on the hub and set HF_TOKEN", target, resp.Status)
	case code == "RepoNotFound" || resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s: %s: repository not found (private or gated models need HF_TOKEN)", target, resp.Status)
	case resp.StatusCode == http.StatusNotFound:
		return errEntryNotFound
	}
	return fmt.Errorf("%s: %s", target, resp.Status)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// normaliseETag strips a weak marker and the quotes (huggingface_hub's
// _normalize_etag), leaving the blob's name.
func normaliseETag(e string) string {
	return strings.Trim(strings.TrimPrefix(e, "W/"), `"`)
}

// markAbsent writes .no_exist/{commit}/{name}, as huggingface_hub does, so
// that the next resolution (and an offline one) knows not to ask again.
func (r *Resolver) markAbsent(repo, commit, name string) {
	p := filepath.Join(r.RepoDir(repo), ".no_exist", commit, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
		if f, err := os.Create(p); err == nil {
			f.Close()
		}
	}
}

// fetchFile makes snapshots/{commit}/{name} a link to its blob, downloading
// the blob unless another snapshot already brought it.
func (r *Resolver) fetchFile(ctx context.Context, ref Ref, commit, name string, meta fileMeta) error {
	if strings.ContainsAny(meta.ETag, `/\`) || meta.ETag == "." || meta.ETag == ".." {
		return fmt.Errorf("%s: unusable ETag %q", name, meta.ETag)
	}
	blob := filepath.Join(r.RepoDir(ref.Repo), "blobs", meta.ETag)
	if st, err := os.Stat(blob); err != nil || (meta.Size >= 0 && st.Size() != meta.Size) {
		if err := r.fetchBlob(ctx, name, blob, meta); err != nil {
			return err
		}
	}
	pointer := filepath.Join(r.RepoDir(ref.Repo), "snapshots", commit, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(pointer), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(pointer), blob)
	if err != nil {
		return err
	}
	reserve, err := os.CreateTemp(filepath.Dir(pointer), "."+filepath.Base(pointer)+".tmp-link-*")
	if err != nil {
		return err
	}
	tmp := reserve.Name()
	reserve.Close()
	os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		// Without symbolic links (some Windows setups) huggingface_hub
		// copies the blob; so does beluga.
		b, rerr := os.ReadFile(blob)
		if rerr != nil {
			return rerr
		}
		return atomicfile.WriteFile(pointer, b)
	}
	return os.Rename(tmp, pointer)
}

// fetchBlob downloads meta.Location into blob through blob.incomplete,
// checking the size and, where the ETag is a content hash, the content.
func (r *Resolver) fetchBlob(ctx context.Context, name, blob string, meta fileMeta) (err error) {
	req, err := r.request(ctx, http.MethodGet, meta.Location)
	if err != nil {
		return err
	}
	resp, err := r.client().Do(req)
	if err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download %s: %w", name, statusErrorOrStatus(meta.Location, resp))
	}
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		return err
	}
	// A name of its own: another process (or run) may be fetching the
	// same blob; each writes its own file and the renames agree.
	f, err := os.CreateTemp(filepath.Dir(blob), filepath.Base(blob)+".incomplete-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	size := meta.Size
	if size < 0 {
		size = resp.ContentLength
	}
	h := contentHash(meta.ETag, size)
	pr := r.newProgress(name, size)
	n, err := io.Copy(io.MultiWriter(f, h, pr), resp.Body)
	pr.done(err)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("download %s: truncated: the connection closed after %d of %d bytes", name, n, size)
	}
	if err != nil {
		return fmt.Errorf("download %s: interrupted after %d bytes: %w", name, n, err)
	}
	if size >= 0 && n != size {
		return fmt.Errorf("download %s: truncated: %d of %d bytes", name, n, size)
	}
	if want := strings.ToLower(meta.ETag); h.check && hex.EncodeToString(h.Sum(nil)) != want {
		return fmt.Errorf("download %s: content does not match its ETag %s (corrupted download)", name, meta.ETag)
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, blob)
}

func statusErrorOrStatus(target string, resp *http.Response) error {
	err := statusError(target, resp)
	if errors.Is(err, errEntryNotFound) {
		return fmt.Errorf("%s: %s", target, resp.Status)
	}
	return err
}

// etagHash checks content against an ETag that is its hash: the sha256 of
// an LFS file, or the git blob sha1 ("blob {size}\x00" + content).
type etagHash struct {
	hash.Hash
	check bool
}

func contentHash(etag string, size int64) *etagHash {
	switch {
	case len(etag) == 64 && isHex(etag):
		return &etagHash{sha256.New(), true}
	case len(etag) == 40 && isHex(etag) && size >= 0:
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", size)
		return &etagHash{h, true}
	}
	return &etagHash{sha256.New(), false}
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// progress reports one download: a bar redrawn on a terminal, else a log
// line when it starts and when it ends.
type progress struct {
	r            *Resolver
	name         string
	total, n     int64
	bar          bool
	start, drawn time.Time
}

func (r *Resolver) newProgress(name string, total int64) *progress {
	p := &progress{r: r, name: name, total: total, start: time.Now()}
	if f, ok := r.Progress.(*os.File); ok {
		st, err := f.Stat()
		p.bar = err == nil && st.Mode()&os.ModeCharDevice != 0
	}
	if !p.bar {
		r.logger().Info("downloading", "file", name, "bytes", total)
	}
	return p
}

func (p *progress) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if p.bar && time.Since(p.drawn) > 100*time.Millisecond {
		p.draw()
	}
	return len(b), nil
}

func (p *progress) draw() {
	p.drawn = time.Now()
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = int(width * p.n / p.total)
	}
	fmt.Fprintf(p.r.Progress, "\r%-20s [%s%s] %.1f/%.1f MB   ", p.name, strings.Repeat("#", filled),
		strings.Repeat(" ", width-filled), float64(p.n)/1e6, float64(p.total)/1e6)
}

func (p *progress) done(err error) {
	if p.bar {
		p.draw()
		fmt.Fprintln(p.r.Progress)
		return
	}
	if err == nil {
		p.r.logger().Info("downloaded", "file", p.name, "bytes", p.n, "seconds", time.Since(p.start).Round(time.Millisecond).Seconds())
	}
}
