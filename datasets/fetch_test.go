package datasets

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestFetch(t *testing.T) {
	good := []byte("sentence\tlabel\nfine\t1\n")
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.Create("SST-2/dev.tsv")
	w.Write(good)
	zw.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/good.tsv", func(w http.ResponseWriter, r *http.Request) { w.Write(good) })
	mux.HandleFunc("/data.zip", func(w http.ResponseWriter, r *http.Request) { w.Write(zbuf.Bytes()) })
	mux.HandleFunc("/corrupt.tsv", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Replace(good, []byte("fine"), []byte("FINE"), 1))
	})
	mux.HandleFunc("/truncated.tsv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write(good[:10])
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// A port nothing listens on: the "network is missing" case.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + ln.Addr().String() + "/good.tsv"
	ln.Close()

	file := func(url, member string) Dataset {
		return Dataset{Name: "t", Files: []File{{Path: "t/file.tsv", URL: url, Member: member, SHA256: sha(good), Size: int64(len(good))}}}
	}
	tests := []struct {
		name string
		d    Dataset
		want string // "" = success
	}{
		{"download", file(srv.URL+"/good.tsv", ""), ""},
		{"zip member", file(srv.URL+"/data.zip", "SST-2/dev.tsv"), ""},
		{"missing member", file(srv.URL+"/data.zip", "SST-2/train.tsv"), "no member SST-2/train.tsv"},
		{"corrupted", file(srv.URL+"/corrupt.tsv", ""), "checksum mismatch"},
		{"truncated", file(srv.URL+"/truncated.tsv", ""), "good.tsv"},
		{"no network", file(deadURL, ""), "--from DIR"},
		{"not found", file(srv.URL+"/nothing", ""), "404"},
	}
	tests[4].want = "truncated" // the client notices the short body either way
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cache{Dir: t.TempDir()}
			paths, err := c.Ensure(context.Background(), tc.d)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(paths[0])
				if err != nil || !bytes.Equal(b, good) {
					t.Fatalf("cached %q (%v), want %q", b, err, good)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			var left []string
			filepath.Walk(c.Dir, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					left = append(left, p)
				}
				return nil
			})
			if len(left) > 0 {
				t.Errorf("failed fetch left files in the cache: %v", left)
			}
		})
	}
}

func TestFetchChecksumIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) }))
	defer srv.Close()
	c := &Cache{Dir: t.TempDir()}
	_, err := c.Ensure(context.Background(), Dataset{Name: "t", Files: []File{{Path: "x", URL: srv.URL, SHA256: sha([]byte("y")), Size: 1}}})
	if !errors.Is(err, ErrChecksum) {
		t.Errorf("error %v is not ErrChecksum", err)
	}
}

func TestFetchFromSharedLayout(t *testing.T) {
	from := shareddata.Path(t, "data")
	c := &Cache{Dir: t.TempDir(), From: from}
	// ../shared/data has no copy of these (see its MANIFEST.md).
	absent := map[string]bool{"qqp": true, "squad-train": true}
	for _, d := range Registry {
		if absent[d.Name] {
			continue
		}
		if _, err := c.Ensure(context.Background(), d); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
	}
	for _, st := range c.Status() {
		if !st.Cached && !absent[st.Dataset] {
			t.Errorf("%s not cached after fetching from %s", st.File.Path, from)
		}
	}
}

func TestFetchFromDirVerifiesChecksums(t *testing.T) {
	from := t.TempDir()
	os.MkdirAll(filepath.Join(from, "vocab"), 0o755)
	os.WriteFile(filepath.Join(from, "vocab", "bert-base-uncased-vocab.txt"), []byte("[PAD]\n"), 0o644)
	c := &Cache{Dir: t.TempDir(), From: from}
	_, err := c.EnsureFile(context.Background(), "bert-vocab", "vocab/bert-base-uncased-vocab.txt")
	if !errors.Is(err, ErrChecksum) {
		t.Errorf("error %v is not ErrChecksum", err)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "vocab")); !os.IsNotExist(err) {
		t.Errorf("a rejected local copy left a directory or file in the cache")
	}
}

// GLUE publishes QQP only as a zip whose checksum is known: the archive is
// verified, then its members are cached.
func TestFetchVerifiedThroughArchive(t *testing.T) {
	train := []byte("id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n1\t2\t3\tHow old?\tWhat age?\t1\n")
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.Create("QQP/train.tsv")
	w.Write(train)
	zw.Close()
	archive := zbuf.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/QQP-clean.zip" {
			w.Write(archive)
			return
		}
		w.Write(append(append([]byte{}, archive...), 0)) // a different archive
	}))
	defer srv.Close()
	d := func(url, sum string) Dataset {
		return Dataset{Name: "qqp", Files: []File{{Path: "qqp/train.tsv", URL: url, Member: "QQP/train.tsv", ArchiveSHA256: sum, ArchiveSize: int64(len(archive))}}}
	}
	c := &Cache{Dir: t.TempDir()}
	paths, err := c.Ensure(context.Background(), d(srv.URL+"/QQP-clean.zip", sha(archive)))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadQQP(paths[0]); len(got) != 1 || got[0].Pair != "What age?" {
		t.Errorf("cached member reads as %+v", got)
	}
	if !c.Cached(d(srv.URL+"/QQP-clean.zip", sha(archive)).Files[0]) {
		t.Error("the member does not count as cached")
	}
	c2 := &Cache{Dir: t.TempDir()}
	if _, err := c2.Ensure(context.Background(), d(srv.URL+"/other.zip", sha(archive))); !errors.Is(err, ErrChecksum) {
		t.Errorf("a different archive: %v, want ErrChecksum", err)
	}
	// A local copy is the archive itself, beside the member's path.
	from := t.TempDir()
	os.MkdirAll(filepath.Join(from, "qqp"), 0o755)
	os.WriteFile(filepath.Join(from, "qqp", "QQP-clean.zip"), archive, 0o644)
	c3 := &Cache{Dir: t.TempDir(), From: from}
	if _, err := c3.Ensure(context.Background(), d("https://example.invalid/QQP-clean.zip", sha(archive))); err != nil {
		t.Errorf("from a local archive: %v", err)
	}
	os.WriteFile(filepath.Join(from, "qqp", "QQP-clean.zip"), archive[:len(archive)-1], 0o644)
	c4 := &Cache{Dir: t.TempDir(), From: from}
	if _, err := c4.Ensure(context.Background(), d("https://example.invalid/QQP-clean.zip", sha(archive))); !errors.Is(err, ErrChecksum) {
		t.Errorf("a damaged local archive: %v, want ErrChecksum", err)
	}
}

func TestRegistryHasChecksums(t *testing.T) {
	for _, d := range Registry {
		for _, f := range d.Files {
			if len(f.SHA256) != 64 && len(f.ArchiveSHA256) != 64 {
				t.Errorf("%s %s: no sha256", d.Name, f.Path)
			}
		}
	}
	for _, name := range []string{"qqp", "squad-train"} {
		if _, err := Lookup(name); err != nil {
			t.Error(err)
		}
	}
}
