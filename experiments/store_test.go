package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// VerifyPart accepts a run's files as done recorded them and names the
// file at fault otherwise: edited in place, missing, or added after done.
func TestVerifyPart(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(dir string)
		want string // "" for no error
	}{
		{"as written", func(string) {}, ""},
		{"edited in place", func(dir string) {
			os.WriteFile(filepath.Join(dir, "train", "model", "weights"), []byte("WXYZ"), 0o644)
		}, "weights is not what the run's done recorded"},
		{"missing", func(dir string) { os.Remove(filepath.Join(dir, "train", "model", "config.json")) }, "config.json is missing"},
		{"added", func(dir string) {
			os.WriteFile(filepath.Join(dir, "train", "model", "extra.bin"), []byte("x"), 0o644)
		}, "extra.bin is not one of the files"},
		{"another part edited", func(dir string) { os.WriteFile(filepath.Join(dir, ResultFile), []byte("{}"), 0o644) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "abc")
			model := filepath.Join(dir, "train", "model")
			os.MkdirAll(model, 0o755)
			os.WriteFile(filepath.Join(model, "weights"), []byte("wxyz"), 0o644)
			os.WriteFile(filepath.Join(model, "config.json"), []byte("{}"), 0o644)
			os.WriteFile(filepath.Join(dir, ResultFile), []byte(`{"a":1}`), 0o644)
			if err := writeDone(dir); err != nil {
				t.Fatal(err)
			}
			tc.edit(dir)
			for _, d := range []*Digests{nil, {}} {
				err := VerifyPart(dir, BaselineModel, d)
				if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
					t.Errorf("VerifyPart = %v, want %q", err, tc.want)
				}
			}
		})
	}
}
