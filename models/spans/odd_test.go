package spans

import (
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
)

// TestTokenizeOffsetsOddTexts: texts whose characters normalise to several
// (Hangul, accents), to nothing (combining marks, controls) or to a space,
// and special-token strings, keep offsets inside the text and in order.
func TestTokenizeOffsetsOddTexts(t *testing.T) {
	tk, _ := bertTokenizer(t, filepath.Join(fixture.Dir(t), "vocab.txt"))
	for _, text := range []string{
		"한국어 text", "ﬁne café", "x\u00a0y\u2009z", "[CLS] a [SEP] b", "a\x00b\u200bc", "e\u0301\u0301 ok",
		"😀 emoji", "   ", "", "東京 2020", "Skłodowska–Curie", "\u0301 lone mark",
	} {
		toks, err := tk.TokenizeOffsets(text)
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		n := len([]rune(text))
		prev := 0
		for _, tok := range toks {
			if tok.Start < 0 || tok.End > n || tok.End <= tok.Start || tok.End < prev {
				t.Errorf("%q: token %d at [%d,%d) after %d", text, tok.ID, tok.Start, tok.End, prev)
			}
			prev = tok.End
		}
	}
}
