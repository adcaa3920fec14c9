package suites

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadTruncatedGzipSaysSo(t *testing.T) {
	s := &Suite{Name: "tiny", Functionalities: []*Functionality{{
		Name: "f", Class: "C", Type: MFT, Expect: DefaultExpectation(MFT),
	}}}
	for i := 0; i < 300; i++ {
		s.Functionalities[0].Cases = append(s.Functionalities[0].Cases,
			&Case{ID: i, Inputs: []Input{{Text: strings.Repeat("a fine test sentence ", 3)}}, Labels: []Label{ClassLabel(1)}})
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl.gz")
	if err := Save(good, s); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(good); err != nil {
		t.Fatalf("the whole file does not load: %v", err)
	}
	b, _ := os.ReadFile(good)
	for _, n := range []int{len(b) / 2, len(b) - 9} {
		cut := filepath.Join(dir, "cut.jsonl.gz")
		os.WriteFile(cut, b[:n], 0o644)
		_, err := Load(cut)
		if err == nil || !strings.Contains(err.Error(), "gzip stream is truncated") || !strings.Contains(err.Error(), "cut.jsonl.gz") {
			t.Errorf("cut to %d of %d bytes: %v, want a truncated-gzip error naming the file", n, len(b), err)
		}
	}
}
