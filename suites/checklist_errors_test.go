package suites

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

func TestImportTinyPickle(t *testing.T) {
	s, err := ImportCheckList("testdata/tiny_suite.pkl")
	if err != nil {
		t.Fatal(err)
	}
	if s.Task != "sentiment" || len(s.Functionalities) != 3 {
		t.Fatalf("task %q with %d functionalities, want sentiment with 3", s.Task, len(s.Functionalities))
	}
	words := s.Functionalities[0]
	if words.Expect.Kind != ExpectEq || len(words.Cases) != 2 || words.Cases[1].Labels[0].Class != 0 {
		t.Errorf("unknown MFT imported as %+v", words)
	}
	pairs := s.Functionalities[1]
	if in := pairs.Cases[0].Inputs[0]; !in.IsPair || in.Pair != "is it large?" {
		t.Errorf("pair input imported as %+v", in)
	}
	inv := s.Functionalities[2]
	if inv.Type != INV || inv.Expect.Kind != ExpectInv || inv.Expect.Tolerance != 0.1 || len(inv.Cases[1].Inputs) != 3 {
		t.Errorf("INV imported as %+v", inv)
	}
}

// TestImportDillShaped reads a suite pickled as the released ones are
// (numpy labels and scalars, Munch metadata, dill function records) through
// CheckList's allow-list; gopickle's importer read it to the same bytes.
func TestImportDillShaped(t *testing.T) {
	s, err := ImportCheckList("testdata/dill_shaped.pkl")
	if err != nil {
		t.Fatal(err)
	}
	if s.Task != "sentiment" || len(s.Functionalities) != 3 {
		t.Fatalf("task %q with %d functionalities", s.Task, len(s.Functionalities))
	}
	words := s.Functionalities[0]
	if got := string(words.Cases[0].Meta) + string(words.Cases[2].Meta); got != `{"n":1,"word":"good"}{"word":"fine","x":0.5}` {
		t.Errorf("Munch meta read as %s", got)
	}
	if words.Cases[1].Meta != nil || words.Cases[0].Labels[0].Class != 2 || words.Cases[2].Labels[0].Class != 1 {
		t.Errorf("numpy scalar labels or empty meta read as %+v", words.Cases)
	}
	inv := s.Functionalities[1]
	if l := inv.Cases[1].Labels; len(l) != 3 || l[0].Class != 0 || inv.Cases[0].Labels[1].Class != 1 {
		t.Errorf("numpy array labels read as %+v", inv.Cases)
	}
	if l := s.Functionalities[2].Cases[0].Labels; len(l) != 1 || l[0].Class != 2 {
		t.Errorf("one numpy scalar label for every case read as %+v", l)
	}
}

func TestImportErrors(t *testing.T) {
	good, err := os.ReadFile("testdata/tiny_suite.pkl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.pkl")
	if err := os.WriteFile(truncated, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	notPickle := filepath.Join(dir, "text.pkl")
	os.WriteFile(notPickle, []byte("hello, world\n"), 0o644)
	tests := []struct {
		path string
		want []string
	}{
		{truncated, []string{"truncated.pkl", "truncated pickle"}},
		{notPickle, []string{"text.pkl", "pickle"}},
		{"testdata/unknown_class.pkl", []string{"unknown_class.pkl", "global checklist.test_types.FOO is not allowed in a CheckList suite"}},
		{"testdata/unknown_inv.pkl", []string{"unknown_inv.pkl", `test "my own invariance"`, "unknown expectation", "native format"}},
		{filepath.Join(dir, "missing.tar.gz"), []string{"missing.tar.gz", "no such file"}},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			_, err := ImportCheckList(tc.path)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := ImportCheckList("testdata/unknown_inv.pkl"); !errors.Is(err, ErrUnknownExpectation) {
		t.Errorf("unknown INV error %v is not ErrUnknownExpectation", err)
	}
}

func FuzzImportPickle(f *testing.F) {
	// Seeds: the fixtures (dill_shaped.pkl names every global CheckList's
	// allow-list lets through, as the released suites do) and the hostile
	// pickles.
	for _, name := range []string{"tiny_suite.pkl", "dill_shaped.pkl", "unknown_class.pkl", "unknown_inv.pkl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, h := range hostileCheckList("/nonexistent/pwned") {
		f.Add([]byte(h.pickle))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := unpickle(data)
		if err != nil {
			return
		}
		s, err := suiteFromPickle(obj, len(data))
		if err != nil {
			return
		}
		for _, fn := range s.Functionalities {
			for _, c := range fn.Cases {
				if len(c.Inputs) == 0 {
					t.Fatalf("functionality %q case %d imported without inputs", fn.Name, c.ID)
				}
			}
		}
	})
}

func BenchmarkImportSentimentPickle(b *testing.B) {
	path := shareddata.Path(b, "data/checklist/sentiment_suite.tar.gz")
	for i := 0; i < b.N; i++ {
		if _, err := ImportCheckList(path); err != nil {
			b.Fatal(err)
		}
	}
}
