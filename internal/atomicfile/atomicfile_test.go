package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesOnlyOnSuccess(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "out.txt")
	if err := WriteFile(path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write error = %v, want %v", err, boom)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "first" {
		t.Errorf("content after failed write = %q, want %q", got, "first")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after a failed write, want 1 (no temporary left)", len(entries))
	}
}

func TestWritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(dir, "out.json"), true},
		{filepath.Join(dir, "new", "deeper", "out.json"), true},
		{"-", true},
		{"", true},
		{filepath.Join(file, "out.json"), false},
		{dir, false},
	} {
		err := Writable(filepath.Join(dir, "a.json"), tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("Writable(%q) = %v, want ok %v", tc.path, err, tc.ok)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("Writable left files behind: %v", entries)
	}
}
