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
	"syscall"
)

// freeSpace is the bytes an unprivileged user may still write in dir's
// file system. A variable, so that tests can lower it.
var freeSpace = func(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// Extract extracts a .tar.gz into a new temporary directory and returns
// it; the caller removes it when done. Entries that would escape the
// directory are refused, and so is an archive whose members (a few
// megabytes of gzip can declare gigabytes of zeros) would not fit in the
// space left where it is extracted: each member's declared size is checked
// before it is written, and no member is written past it.
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
	free, err := freeSpace(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("archive %s: %w", path, err)
	}
	var total uint64
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
			total += uint64(h.Size) // tar refuses negative sizes
			if total > free {
				os.RemoveAll(dir)
				return "", fmt.Errorf("archive %s: member %s (%d bytes) brings the extraction to %d bytes, more than the %d free in %s", path, h.Name, h.Size, total, free, filepath.Dir(dir))
			}
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
