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
	for _, d := range Registry {
		if _, err := c.Ensure(context.Background(), d); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
	}
	for _, st := range c.Status() {
		if !st.Cached {
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
