//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteThroughNonRegular: a FIFO, a device node and a link to one are
// written through, never replaced by a regular file; "-" is refused.
func TestWriteThroughNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // opening for reading waits for the writer
		got <- string(b)
	}()
	if err := WriteFile(fifo, []byte("through the pipe")); err != nil {
		t.Fatalf("WriteFile(fifo) = %v", err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", st.Mode(), err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("the FIFO's reader got %q", s)
	}
	if err := Writable(fifo); err != nil {
		t.Errorf("Writable(fifo) = %v", err)
	}

	// A scratch null device (mknod needs root; /dev/null itself is
	// never touched by a test).
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3 /* major 1, minor 3: a null device */); err != nil {
		t.Logf("no scratch device node (mknod needs root: %v): checking through a link to /dev/null, read-only", err)
	} else {
		if err := WriteFile(null, []byte("discarded")); err != nil {
			t.Fatalf("WriteFile(device) = %v", err)
		}
		st, err := os.Lstat(null)
		if err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("the device node was replaced: %v %v", st.Mode(), err)
		}
	}
	// A link to a device (/dev/stdout is one) stays a link.
	link := filepath.Join(dir, "stdout")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("discarded")); err != nil {
		t.Fatalf("WriteFile(link to /dev/null) = %v", err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link to a device was replaced: %v %v", st.Mode(), err)
	}
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no device any more: %v %v", st.Mode(), err)
	}

	if err := WriteFile("-", []byte("x")); err == nil || !strings.Contains(err.Error(), "standard output") {
		t.Errorf(`WriteFile("-") = %v, want a refusal naming standard output`, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 && len(entries) != 2 {
		t.Errorf("Write left files behind: %v", entries)
	}
}

// TestWriteThroughSendsNothingOnFailure: a write through a device that
// fails half-way sends nothing (the bytes are staged first).
func TestWriteThroughSendsNothingOnFailure(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	// No reader is started: a write that reached the FIFO would block.
	err := Write(fifo, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write error = %v, want %v", err, boom)
	}
}

func TestRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.md")
	os.WriteFile(file, nil, 0o644)
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	for path, want := range map[string]bool{
		file: true, filepath.Join(dir, "new.md"): true,
		"/dev/null": false, fifo: false, "-": false, "": false, dir: false,
	} {
		if got := Regular(path); got != want {
			t.Errorf("Regular(%q) = %v, want %v", path, got, want)
		}
	}
}
