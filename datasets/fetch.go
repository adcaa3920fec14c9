package datasets

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

// File is one file of a dataset: where it lives in the cache (a path laid
// out as ../shared/data is), where it comes from, and its checksum.
type File struct {
	// Path inside the cache, e.g. "sst2/train.tsv".
	Path string
	// URL is the canonical public location. Empty for files that can only be
	// taken from a local directory.
	URL string
	// Member names the file inside a zip archive at URL; empty when URL
	// serves the file itself.
	Member string
	// SHA256 of the file (of the member, for archives), lower-case hex.
	SHA256 string
	// Size in bytes.
	Size int64
	// ArchiveSHA256 and ArchiveSize verify the archive at URL, for files
	// whose own checksum is not published (GLUE publishes QQP only as a
	// zip, whose checksum HuggingFace datasets records). SHA256 and Size are
	// then empty: the member is trusted as the verified archive holds it,
	// and a local copy (--from) is the archive itself, named as in URL, in
	// the directory of Path.
	ArchiveSHA256 string
	ArchiveSize   int64
}

// Dataset is a named set of files fetched together.
type Dataset struct {
	Name        string
	Description string
	Files       []File
}

// Registry lists the data beluga knows how to fetch. Checksums are those of
// the canonical files (and of the copies in ../shared/data).
var Registry = []Dataset{
	{"sst2", "GLUE SST-2 train and dev (Socher et al. 2013)", []File{
		{"sst2/train.tsv", "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip", "SST-2/train.tsv", "48eac26399f8456935f81dd9e3a745c1430adb6c62e233ccfe22db4a0d15d1d1", 3806081, "", 0},
		{"sst2/dev.tsv", "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip", "SST-2/dev.tsv", "54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0", 94931, "", 0},
	}},
	{"qqp", "GLUE QQP train and dev (Quora Question Pairs, GLUE's cleaned release)", []File{
		{Path: "qqp/train.tsv", URL: "https://dl.fbaipublicfiles.com/glue/data/QQP-clean.zip", Member: "QQP/train.tsv", ArchiveSHA256: "40e7c862c04eb26ee04b67fd900e76c45c6ba8e6d8fab4f8f1f8072a1a3fbae0", ArchiveSize: 41696084},
		{Path: "qqp/dev.tsv", URL: "https://dl.fbaipublicfiles.com/glue/data/QQP-clean.zip", Member: "QQP/dev.tsv", ArchiveSHA256: "40e7c862c04eb26ee04b67fd900e76c45c6ba8e6d8fab4f8f1f8072a1a3fbae0", ArchiveSize: 41696084},
	}},
	{"squad-train", "SQuAD v1.1 train set", []File{
		{"squad/train-v1.1.json", "https://rajpurkar.github.io/SQuAD-explorer/dataset/train-v1.1.json", "", "3527663986b8295af4f7fcdff1ba1ff3f72d07d61a20f487cb238a6ef92fd955", 30288272, "", 0},
	}},
	{"squad-dev", "SQuAD v1.1 dev set", []File{
		{"squad/dev-v1.1.json", "https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json", "", "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9", 4854279, "", 0},
	}},
	{"checklist-sentiment", "CheckList release suite: sentiment (Ribeiro et al. 2020)", []File{
		{"checklist/sentiment_suite.tar.gz", "https://raw.githubusercontent.com/marcotcr/checklist/master/release_suites/sentiment_suite.tar.gz", "", "d546320bd859e04fc3eb5f11b62ca96d7b19b29010b8925843cbfb8722091111", 2109760, "", 0},
	}},
	{"checklist-qqp", "CheckList release suite: QQP", []File{
		{"checklist/qqp_suite.tar.gz", "https://raw.githubusercontent.com/marcotcr/checklist/master/release_suites/qqp_suite.tar.gz", "", "60836d96a7f64b8006b78134a75f6664677a90318b0830768d971dbde35e64c4", 3902543, "", 0},
	}},
	{"checklist-squad", "CheckList release suite: SQuAD", []File{
		{"checklist/squad_suite.tar.gz", "https://raw.githubusercontent.com/marcotcr/checklist/master/release_suites/squad_suite.tar.gz", "", "2942d48eaa71cdd525416db253571207a6f64c1ec79ad3b2aa2dbda98d05253e", 3599964, "", 0},
	}},
	{"hatecheck", "HateCheck test cases (Röttger et al. 2021)", []File{
		{"hatecheck/test_suite_cases.csv", "https://raw.githubusercontent.com/paul-rottger/hatecheck-data/main/test_suite_cases.csv", "", "ecf0dc1e93fccc90b6f880e632b19e635c0f0a68b3157915a9e20b6938f121cf", 664630, "", 0},
	}},
	{"bert-vocab", "bert-base-uncased WordPiece vocabulary (also BERT-tiny/mini/small's)", []File{
		{"vocab/bert-base-uncased-vocab.txt", "https://huggingface.co/bert-base-uncased/resolve/main/vocab.txt", "", "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3", 231508, "", 0},
	}},
	{"glove-100d-50k", "GloVe 6B 100-d vectors, 50,000 most frequent words (local copies only: --from)", []File{
		{"glove/glove.6B.100d.top50k.txt.gz", "", "", "69e265a5411e369bdb88c8a4ee3bee9eef6c758eb0a054cfb3e1018ee410ae3d", 16544891, "", 0},
	}},
}

// Lookup returns the registered dataset called name.
func Lookup(name string) (Dataset, error) {
	for _, d := range Registry {
		if d.Name == name {
			return d, nil
		}
	}
	names := make([]string, len(Registry))
	for i, d := range Registry {
		names[i] = d.Name
	}
	return Dataset{}, fmt.Errorf("unknown dataset %q (known: %s)", name, strings.Join(names, ", "))
}

// DefaultCacheDir is $BELUGA_DATA, or beluga/ under the user cache directory.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv("BELUGA_DATA"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: set BELUGA_DATA: %w", err)
	}
	return filepath.Join(d, "beluga"), nil
}

// Cache is a directory of verified data files.
type Cache struct {
	Dir string
	// From, when set, is a local directory laid out like the cache (such as
	// ../shared/data) to take files from instead of the network.
	From string
	// Client downloads files; nil means http.DefaultClient.
	Client *http.Client
}

// Path returns where f lives in the cache.
func (c *Cache) Path(f File) string { return filepath.Join(c.Dir, filepath.FromSlash(f.Path)) }

// Cached reports whether f is in the cache with its size (the checksum was
// verified when it was written; a file verified through its archive has no
// size of its own to check).
func (c *Cache) Cached(f File) bool {
	st, err := os.Stat(c.Path(f))
	return err == nil && st.Mode().IsRegular() && (st.Size() == f.Size || f.ArchiveSHA256 != "")
}

// Ensure makes every file of d present in the cache, fetching the missing
// ones, and returns their paths in d's order.
func (c *Cache) Ensure(ctx context.Context, d Dataset) ([]string, error) {
	paths := make([]string, len(d.Files))
	archives := map[string][]byte{}
	for i, f := range d.Files {
		paths[i] = c.Path(f)
		if c.Cached(f) {
			continue
		}
		if err := c.fetch(ctx, f, archives); err != nil {
			return nil, fmt.Errorf("fetch %s: %w", d.Name, err)
		}
	}
	return paths, nil
}

// EnsureFile is Ensure for the file of dataset name whose cache path is rel.
func (c *Cache) EnsureFile(ctx context.Context, name, rel string) (string, error) {
	d, err := Lookup(name)
	if err != nil {
		return "", err
	}
	paths, err := c.Ensure(ctx, d)
	if err != nil {
		return "", err
	}
	for i, f := range d.Files {
		if f.Path == rel {
			return paths[i], nil
		}
	}
	return "", fmt.Errorf("dataset %s has no file %s", name, rel)
}

// ErrChecksum reports content that does not match its registered checksum.
var ErrChecksum = errors.New("checksum mismatch")

func (c *Cache) fetch(ctx context.Context, f File, archives map[string][]byte) error {
	var content []byte
	switch {
	case c.From != "" && f.ArchiveSHA256 != "":
		body, ok := archives[f.URL]
		if !ok {
			src := filepath.Join(c.From, filepath.FromSlash(path.Dir(f.Path)), path.Base(f.URL))
			b, err := os.ReadFile(src)
			if err != nil {
				return fmt.Errorf("local copy (the archive %s is what is checked): %w", path.Base(f.URL), err)
			}
			if err := verify(src, b, f.ArchiveSHA256, f.ArchiveSize); err != nil {
				return err
			}
			body = b
			archives[f.URL] = b
		}
		m, err := zipMember(body, f.Member)
		if err != nil {
			return fmt.Errorf("%s: %w", path.Base(f.URL), err)
		}
		content = m
	case c.From != "":
		src := filepath.Join(c.From, filepath.FromSlash(f.Path))
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("local copy: %w", err)
		}
		content = b
	case f.URL == "":
		return fmt.Errorf("%s has no public download; take it from a local copy with --from DIR", f.Path)
	default:
		body, ok := archives[f.URL]
		if !ok {
			b, err := c.download(ctx, f.URL)
			if err != nil {
				return err
			}
			if f.ArchiveSHA256 != "" {
				if err := verify(f.URL, b, f.ArchiveSHA256, f.ArchiveSize); err != nil {
					return err
				}
			}
			body = b
			if f.Member != "" {
				archives[f.URL] = b
			}
		}
		if f.Member == "" {
			content = body
		} else {
			m, err := zipMember(body, f.Member)
			if err != nil {
				return fmt.Errorf("%s: %w", f.URL, err)
			}
			content = m
		}
	}
	if f.SHA256 != "" {
		if err := verify(f.Path, content, f.SHA256, f.Size); err != nil {
			return err
		}
	} else if f.ArchiveSHA256 == "" {
		return fmt.Errorf("%s: no checksum registered", f.Path)
	}
	return atomicfile.WriteFile(c.Path(f), content)
}

// verify checks content against its registered sha256.
func verify(name string, content []byte, sha string, size int64) error {
	sum := sha256.Sum256(content)
	if got := hex.EncodeToString(sum[:]); got != sha {
		return fmt.Errorf("%s: %w: sha256 %s, want %s (%d bytes, want %d)", name, ErrChecksum, got, sha, len(content), size)
	}
	return nil
}

func (c *Cache) download(ctx context.Context, url string) ([]byte, error) {
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w (offline? take the files from a local copy with --from DIR)", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download %s: %s", url, resp.Status)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, resp.Body)
	if err != nil {
		return nil, fmt.Errorf("download %s: interrupted after %d bytes: %w", url, n, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return nil, fmt.Errorf("download %s: truncated: %d of %d bytes", url, n, resp.ContentLength)
	}
	return buf.Bytes(), nil
}

func zipMember(archive []byte, name string) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		return nil, fmt.Errorf("not a zip archive: %w", err)
	}
	for _, zf := range zr.File {
		if zf.Name == name {
			rc, err := zf.Open()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	return nil, fmt.Errorf("archive has no member %s", name)
}

// FileStatus describes one registered file in a cache.
type FileStatus struct {
	Dataset string
	File    File
	Path    string
	Cached  bool
}

// Status lists every registered file and whether it is cached, sorted by
// dataset then path.
func (c *Cache) Status() []FileStatus {
	var out []FileStatus
	for _, d := range Registry {
		for _, f := range d.Files {
			out = append(out, FileStatus{Dataset: d.Name, File: f, Path: c.Path(f), Cached: c.Cached(f)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Dataset < out[j].Dataset })
	return out
}
