package targz

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/hostiletest"
)

// TestExtractBounded: a .tar.gz of 260 KB whose member is 256 MiB of
// zeros (made at test time) is refused from its declared size when the
// space left is smaller, before anything is written; a small archive
// extracts.
func TestExtractBounded(t *testing.T) {
	old := freeSpace
	freeSpace = func(string) (uint64, error) { return 64 << 20, nil }
	t.Cleanup(func() { freeSpace = old })
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	if err := tw.WriteHeader(&tar.Header{Name: "model/pytorch_model.bin", Mode: 0o644, Size: 256 << 20, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.tar.gz")
	if err := os.WriteFile(bomb, hostiletest.GzipZeros(hdr.Bytes()[:512], 257), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Extract(bomb)
	want := "member model/pytorch_model.bin (268435456 bytes) brings the extraction to 268435456 bytes, more than the 67108864 free in"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), bomb) {
		t.Fatalf("error %v, want it to name the archive and say %q", err, want)
	}

	var small bytes.Buffer
	tw = tar.NewWriter(&small)
	tw.WriteHeader(&tar.Header{Name: "m/config.json", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg})
	tw.Write([]byte("{}"))
	tw.Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(small.Bytes())
	zw.Close()
	ok := filepath.Join(dir, "ok.tar.gz")
	os.WriteFile(ok, gz.Bytes(), 0o644)
	out, err := Extract(ok)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(out)
	if b, err := os.ReadFile(filepath.Join(out, "m", "config.json")); err != nil || string(b) != "{}" {
		t.Fatalf("extracted %q, %v", b, err)
	}
}
