// Package atomicfile writes files so that a reader never sees a half-written one:
// the content goes to a temporary file in the destination's directory, is synced,
// and is renamed over the destination only when everything succeeded.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write creates path atomically with the bytes fn writes. If fn or any file
// operation fails, the destination is left untouched and the temporary file is removed.
func Write(path string, fn func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = fn(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

// WriteFile is Write for content already in memory.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Writable reports whether Write could create every path ("" and "-" are
// skipped), without writing any: a command with several outputs checks them
// all first, so that a bad last path leaves no first file behind.
func Writable(paths ...string) error {
	for _, p := range paths {
		if p == "" || p == "-" {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return fmt.Errorf("cannot write %s: it is a directory", p)
		}
		// Write creates missing directories: check the nearest existing one.
		dir := filepath.Dir(p)
		for {
			st, err := os.Stat(dir)
			if err == nil {
				if !st.IsDir() {
					return fmt.Errorf("cannot write %s: %s is not a directory", p, dir)
				}
				break
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("cannot write %s: %w", p, err)
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
		f, err := os.CreateTemp(dir, ".write-check-*")
		if err != nil {
			return fmt.Errorf("cannot write %s: %w", p, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}
