package tokenize

import (
	"encoding/csv"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/sugarme/tokenizer/model/wordpiece"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// TestWordPieceModelMatchesSugarme checks beluga's WordPiece model — the
// greedy longest-match-first split of one word into pieces, [UNK] for a
// word it cannot split or longer than 100 characters — against
// sugarme/tokenizer's WordPiece model on every distinct word of real texts,
// for an uncased (bert-base-uncased) and a cased (mBERT) vocabulary.
// sugarme's model is right where its normaliser and pre-tokenizer are not
// (docs/tokenizers.md), so the words are ones both normalise to
// themselves: letters only, already lower case for the uncased vocabulary,
// no accents to strip.
func TestWordPieceModelMatchesSugarme(t *testing.T) {
	words := func(path string, column int, keep func(string) bool) []string {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r := csv.NewReader(f)
		r.Comma = ','
		if strings.HasSuffix(path, ".tsv") {
			r.Comma, r.LazyQuotes = '\t', true
		}
		rows, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		var out []string
		for _, row := range rows[1:] {
			for _, w := range strings.FieldsFunc(row[column], func(r rune) bool { return !unicode.IsLetter(r) }) {
				if !seen[w] && keep(w) {
					seen[w] = true
					out = append(out, w)
				}
			}
		}
		return out
	}
	lowerASCII := func(w string) bool { return strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 }
	arabic := func(w string) bool {
		return strings.IndexFunc(w, func(r rune) bool { return !unicode.Is(unicode.Arabic, r) || unicode.Is(unicode.Mn, r) }) < 0
	}
	cased := func(w string) bool { return lowerASCII(strings.ToLower(w)) }
	for _, tc := range []struct {
		name, vocab string
		words       []string
	}{
		{"bert-base-uncased", "data/vocab/bert-base-uncased-vocab.txt",
			words(shareddata.Path(t, "data/sst2/dev.tsv"), 0, lowerASCII)},
		{"mBERT cased", "data/tokenizers/google-bert__bert-base-multilingual-cased/vocab.txt",
			append(words(shareddata.Path(t, "data/hatecheck/test_suite_cases.csv"), 3, cased),
				words(shareddata.Path(t, "data/mhc-arabic/iid_ar_binary.csv"), 1, arabic)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vocab := shareddata.Path(t, tc.vocab)
			ours, err := NewWordPieceFromVocab(vocab, 0)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := wordpiece.NewWordPieceFromFile(vocab, "[UNK]")
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.words) < 1000 {
				t.Fatalf("only %d words", len(tc.words))
			}
			for _, w := range tc.words {
				enc, err := ours.Encode(w, "", false)
				if err != nil {
					t.Fatal(err)
				}
				got := enc.IDs[1 : len(enc.IDs)-1] // without [CLS] and [SEP]
				toks, err := theirs.Tokenize(w)
				if err != nil {
					t.Fatal(err)
				}
				want := make([]int, len(toks))
				for i, tk := range toks {
					want[i] = tk.Id
				}
				if !slices.Equal(got, want) {
					t.Errorf("%q: beluga %v, sugarme %v", w, got, want)
				}
			}
			t.Logf("%d distinct words agree", len(tc.words))
		})
	}
}
