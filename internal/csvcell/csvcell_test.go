package csvcell

import (
	"bytes"
	"encoding/csv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNeutralise(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// OWASP's six starting characters.
		{`=cmd|' /C calc'!A0`, `'=cmd|' /C calc'!A0`},
		{"+1+1", "'+1+1"},
		{"-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
		{"@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		// Numbers stay numbers.
		{"-0.25", "-0.25"},
		{"-3", "-3"},
		{"+7", "+7"},
		{"-1.5e-05", "-1.5e-05"},
		{"-2.5E+10", "-2.5E+10"},
		{"-.5", "-.5"},
		{"-5.", "-5."},
		{"-Inf", "-Inf"},
		{"+Inf", "+Inf"},
		// Sign-led text that only looks numeric.
		{"-", "'-"},
		{"-e5", "'-e5"},
		{"-1e", "'-1e"},
		{"-1.2.3", "'-1.2.3"},
		{"-NaN", "'-NaN"},
		{"-0x1p-2", "'-0x1p-2"},
		{"- negation", "'- negation"},
		// Harmless starts are untouched, formula characters later in a
		// cell included.
		{"", ""},
		{"negation: 1+1=2", "negation: 1+1=2"},
		{" =1", " =1"},
		{"'=1", "'=1"},
		{"0.25", "0.25"},
	} {
		if got := Neutralise(tc.in); got != tc.want {
			t.Errorf("Neutralise(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestWriterNeutralisesEveryCell writes hostile and numeric cells through
// both Write and WriteAll and reads them back: every text cell that could
// start a formula arrives behind a quote, numbers arrive as written, and
// the caller's record is not changed.
func TestWriterNeutralisesEveryCell(t *testing.T) {
	rec := []string{"=HYPERLINK(\"http://x\")", "-0.5", "a,\"b\"", "@x"}
	orig := append([]string(nil), rec...)
	var b bytes.Buffer
	w := NewWriter(&b)
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if err := w.WriteAll([][]string{rec}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(rec, "|") != strings.Join(orig, "|") {
		t.Errorf("Write changed its argument: %q", rec)
	}
	got, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"'=HYPERLINK(\"http://x\")", "-0.5", "a,\"b\"", "'@x"}
	if len(got) != 2 {
		t.Fatalf("%d records, want 2", len(got))
	}
	for _, r := range got {
		if strings.Join(r, "|") != strings.Join(want, "|") {
			t.Errorf("read back %q, want %q", r, want)
		}
	}
}

// TestEveryCSVWriterIsNeutralised keeps the rule in one place: no Go file
// of the module but this package's makes an encoding/csv Writer, so every
// CSV the project writes goes through Neutralise.
func TestEveryCSVWriterIsNeutralised(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from the test's directory: %v", err)
	}
	self, _ := filepath.Abs(".")
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "shared") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == self {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if bytes.Contains(b, []byte("csv.NewWriter(")) {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s makes an encoding/csv Writer: use csvcell.NewWriter, so that names cannot become formulas", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d Go files under %s", checked, root)
	}
}
