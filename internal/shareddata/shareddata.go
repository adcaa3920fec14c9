// Package shareddata locates the read-only data folder that sits beside the
// project as ../shared/data on developer machines and in CI. Tests and
// benchmarks that need real suites or datasets ask it for a path and skip
// cleanly when the folder is absent.
package shareddata

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Root returns the shared folder (the one holding data/ and fixtures/), taken
// from $BELUGA_SHARED when set, else ../shared beside the module root. ok is
// false when no such folder exists.
func Root() (dir string, ok bool) {
	if d := os.Getenv("BELUGA_SHARED"); d != "" {
		return d, isDir(d)
	}
	_, file, _, _ := runtime.Caller(0)
	// file is <module>/internal/shareddata/shareddata.go.
	d := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared")
	return filepath.Clean(d), isDir(d)
}

// Path returns the path of rel inside the shared folder, or skips tb with the
// reason when it does not exist.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	root, ok := Root()
	if !ok {
		tb.Skipf("shared data folder not found (looked for %s); set BELUGA_SHARED to run this test", root)
	}
	p := filepath.Join(root, rel)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("shared file %s not available: %v", p, err)
	}
	return p
}

func isDir(d string) bool {
	st, err := os.Stat(d)
	return err == nil && st.IsDir()
}
