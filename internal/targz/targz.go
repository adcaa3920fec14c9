// Package targz extracts .tar.gz archives, as model checkpoints and
// fixtures are often distributed.
package targz

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Extract extracts a .tar.gz into a new temporary directory and returns
// it; the caller removes it when done. Entries that would escape the
// directory are refused.
func Extract(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", path, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", path, err)
	}
	dir, err := os.MkdirTemp("", "beluga-checkpoint-*")
	if err != nil {
		return "", err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return dir, nil
		}
		if err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("archive %s: %w", path, err)
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			os.RemoveAll(dir)
			return "", fmt.Errorf("archive %s: unsafe path %q in archive", path, h.Name)
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				os.RemoveAll(dir)
				return "", err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				os.RemoveAll(dir)
				return "", err
			}
			out, err := os.Create(target)
			if err != nil {
				os.RemoveAll(dir)
				return "", err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.RemoveAll(dir)
				return "", fmt.Errorf("archive %s: %s: %w", path, h.Name, err)
			}
		}
	}
}
