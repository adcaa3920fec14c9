// Package atomicfile writes files so that a reader never sees a half-written one:
// the content goes to a temporary file in the destination's directory, is synced,
// and is renamed over the destination only when everything succeeded.
//
// Only a regular file (or a path where nothing is yet) is replaced that way.
// A destination that is something else — a device such as /dev/null or a
// terminal, a FIFO, a socket — is written through: renaming a file over it
// would replace the device itself (as root, /dev/null would become a
// regular file for the whole machine). Its bytes are staged in a temporary
// file first, so that a failed write still sends nothing. A symbolic link is
// replaced like a regular file unless it leads to such a destination
// (/dev/stdout).
// "-" is refused: it names standard output, which only the command itself
// can write (it has the writer), never a file called "-".
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
// operation fails, the destination is left untouched and the temporary file
// is removed. A destination that is not a regular file is written through
// (see the package documentation).
func Write(path string, fn func(w io.Writer) error) (err error) {
	special, err := resolve(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if special {
		dir = "" // the system's temporary directory: /dev is no place for it
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil || special {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = fn(tmp); err != nil {
		return err
	}
	if special {
		return copyThrough(tmp, path)
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

// resolve checks that Write can write path and says whether it is an
// existing file other than a regular one, or a link to one (written
// through, never replaced).
func resolve(path string) (special bool, err error) {
	if path == "-" {
		return false, fmt.Errorf(`cannot write "-": it names standard output, which this output cannot go to; give a file name`)
	}
	if path == "" {
		return false, errors.New("cannot write: no file name given")
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cannot write %s: %w", path, err)
	}
	if st.IsDir() {
		return false, fmt.Errorf("cannot write %s: it is a directory", path)
	}
	// A link to a device is opened, not resolved: /dev/stdout leads to
	// /proc/self/fd/1, which leads to a pipe that has no path.
	return !st.Mode().IsRegular(), nil
}

// copyThrough sends the staged bytes to the non-regular file at path (a
// device, a FIFO: opening a FIFO waits for its reader, as a shell's
// redirection does). It never creates or truncates a file.
func copyThrough(staged *os.File, path string) error {
	if _, err := staged.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := io.Copy(f, staged); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
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

// Regular reports whether path is a file Write replaces (a regular file,
// or nothing yet): a command deriving side files from an output's name
// ("out.md" → "out-pvalues.csv") derives them only then, never from
// /dev/null or a FIFO.
func Regular(path string) bool {
	if path == "" || path == "-" {
		return false
	}
	st, err := os.Stat(path)
	return errors.Is(err, fs.ErrNotExist) || (err == nil && st.Mode().IsRegular())
}

// Writable reports whether Write could create every path ("" and "-" are
// skipped), without writing any: a command with several outputs checks them
// all first, so that a bad last path leaves no first file behind.
func Writable(paths ...string) error {
	for _, p := range paths {
		if p == "" || p == "-" {
			continue
		}
		special, err := resolve(p)
		if err != nil {
			return err
		}
		if special {
			// Written through: it must be open for writing to us.
			if err := canWrite(p); err != nil {
				return fmt.Errorf("cannot write %s: %w", p, err)
			}
			continue
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
