package datasets

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/memlimit"
)

// A gzip file that inflates past the memory limit is refused while it is
// read, naming the file and the limit, not read whole until the
// allocation fails: a few kilobytes of gzip here inflate to 16 MiB of
// rows against a 4 MiB limit.
func TestGzipInflatingPastTheMemoryLimitIsRefused(t *testing.T) {
	old := memlimit.Limit
	memlimit.Limit = func() (uint64, string) { return 4 << 20, "the test's limit" }
	t.Cleanup(func() { memlimit.Limit = old })
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	row := []byte("a,b\n")
	for range (16 << 20) / len(row) {
		zw.Write(row)
	}
	zw.Close()
	path := filepath.Join(t.TempDir(), "bomb.csv.gz")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadTable(path, Dialect{})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "the test's limit") {
		t.Fatalf("a %d-byte gzip inflating to 16 MiB against a 4 MiB limit: %v, want the file and the limit named", gz.Len(), err)
	}
	// Under the limit the same file reads.
	memlimit.Limit = func() (uint64, string) { return 64 << 20, "the test's limit" }
	tab, err := ReadTable(path, Dialect{})
	if err != nil || len(tab.Rows) == 0 {
		t.Fatalf("under the limit: %v", err)
	}
}
