package tokenize

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/beluga-nlp/beluga/internal/hostiletest"
)

// replaceByTransform is the replacement as HuggingFace's
// NormalizedString::replace performs it, one transform_range per match
// (later matches first): the reference replaceAll's single pass must agree
// with, alignment included.
func replaceByTransform(t ntext, re *regexp.Regexp, content string) ntext {
	ms := re.FindAllStringIndex(t.s, -1)
	var dest []change
	for _, r := range content {
		dest = append(dest, change{r, 1})
	}
	for k := len(ms) - 1; k >= 0; k-- {
		m := ms[k]
		t = t.transform(m[0], m[1], dest, utf8.RuneCountInString(t.s[m[0]:m[1]]))
	}
	return t
}

func TestReplaceAllMatchesTransform(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "b", " ", "  ", "é", "中", "\t", "x̃", "😀"}
	patterns := []string{` {2,}`, `\s+`, `a`, `b*`, `^`, `$`, `é|中`, `x̃`, `.`}
	contents := []string{"", " ", "▁", "[UNK]", "ab中"}
	for i := 0; i < 400; i++ {
		var sb strings.Builder
		for n := rng.Intn(12); n > 0; n-- {
			sb.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		text, base := sb.String(), rng.Intn(5)
		re := regexp.MustCompile(patterns[rng.Intn(len(patterns))])
		content := contents[rng.Intn(len(contents))]
		// A text that went through a normaliser before: its alignment is
		// no longer one span per character.
		in := newNText(text, base)
		if rng.Intn(2) == 0 {
			in = unicodeNormalize(in, 0)
			in, _ = replaceAll(in, regexp.MustCompile(`b`), "bb")
		}
		want := replaceByTransform(in, re, content)
		got, err := replaceAll(in, re, content)
		if err != nil {
			t.Fatal(err)
		}
		if got.s != want.s || !reflect.DeepEqual(got.align, want.align) || got.base != want.base {
			t.Fatalf("replace %q by %q in %q (base %d):\n got %q %v\nwant %q %v", re, content, text, base, got.s, got.align, want.s, want.align)
		}
	}
}

// TestReplaceAllOnePass: replacing n matches in an n-character text
// allocates in proportion to the text, not to the matches times the text
// (transform per match copied the whole text each time: 77 s for 256 k
// characters). An allocation count, not a timing.
func TestReplaceAllOnePass(t *testing.T) {
	text := newNText(strings.Repeat("a ", 8<<10), 0) // 16 KiB, 8 k matches
	re := regexp.MustCompile(` `)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := replaceAll(text, re, "▁")
	runtime.ReadMemStats(&after)
	if err != nil || out.s != strings.Repeat("a▁", 8<<10) {
		t.Fatalf("replaced to %.20q…, %v", out.s, err)
	}
	// The output's bytes and spans (9 bytes per byte), and room.
	if got, bound := after.TotalAlloc-before.TotalAlloc, uint64(64*len(out.s)); got > bound {
		t.Errorf("replacing %d matches in %d bytes allocated %d bytes, more than %d: not one pass", 8<<10, len(text.s), got, bound)
	}
}

// doublingTokenizer is a tokenizer.json whose normaliser is n Replaces,
// each doubling every "a".
func doublingTokenizer(n int) []byte {
	var steps []string
	for i := 0; i < n; i++ {
		steps = append(steps, `{"type":"Replace","pattern":{"String":"a"},"content":"aa"}`)
	}
	return []byte(fmt.Sprintf(`{"normalizer":{"type":"Sequence","normalizers":[%s]},"pre_tokenizer":{"type":"WhitespaceSplit"},
		"model":{"type":"WordLevel","vocab":{"[UNK]":0,"a":1},"unk_token":"[UNK]"}}`, strings.Join(steps, ",")))
}

// TestHostileNormaliser: 34 chained Replaces that each double the text
// (2^34 times its length) are refused at the Replace that passes the
// bound on normalised length, under ulimit -v; a text within the bound
// tokenises.
func TestHostileNormaliser(t *testing.T) {
	hostiletest.Run(t, func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "tokenizer.json")
		if err := os.WriteFile(p, doublingTokenizer(34), 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := NewHF(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Encode(strings.Repeat("a", 1000), "", false)
		want := `normalizer Replace("a" → "aa") would make 32000 bytes of a 1000-byte text, more than the 16× (+1024) bound on normalised text`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want %q", err, want)
		}
		h3, err := parseHF(doublingTokenizer(3), 0)
		if err != nil {
			t.Fatal(err)
		}
		if e, err := h3.Encode("a a", "", false); err != nil || len(e.IDs) != 2 {
			t.Fatalf("three doublings of a short text: %v, %v", e.IDs, err)
		}
	})
}

// TestTokenisingStops: cancelling the context (as SIGTERM does) stops the
// statistics and the cache's tokenising before the next text.
func TestTokenisingStops(t *testing.T) {
	tk, err := parseHF(smallTokenizerJSONs()[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ComputeStats(ctx, tk, []string{"hello", "world"}, nil); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped after 0 of 2 texts") {
		t.Errorf("statistics: %v", err)
	}
	c, err := NewCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Encode(ctx, tk, []Input{{Text: "hello"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cache: %v", err)
	}
	if _, err := os.Stat(c.Path(tk, []Input{{Text: "hello"}})); err == nil {
		t.Error("a cancelled tokenising left a cache file")
	}
}

// BenchmarkReplaceAll replaces the 128 k spaces of a 256 k-character text
// (the case: 77 s by transform per match).
func BenchmarkReplaceAll(b *testing.B) {
	text := newNText(strings.Repeat("a ", 128<<10), 0)
	re := regexp.MustCompile(` `)
	for i := 0; i < b.N; i++ {
		if _, err := replaceAll(text, re, "▁"); err != nil {
			b.Fatal(err)
		}
	}
}
