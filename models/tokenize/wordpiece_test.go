package tokenize

import (
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/suites"
)

func smallWordPiece(t testing.TB, maxLength int) (*WordPiece, []string) {
	t.Helper()
	path := filepath.Join("testdata", "vocab-small.txt")
	w, err := NewWordPieceFromVocab(path, maxLength)
	if err != nil {
		t.Fatal(err)
	}
	words, err := ReadVocab(path)
	if err != nil {
		t.Fatal(err)
	}
	return w, words
}

// TestWordPieceNormalisation pins BertNormalizer's and BertPreTokenizer's
// rules one at a time.
func TestWordPieceNormalisation(t *testing.T) {
	w, words := smallWordPiece(t, 0)
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"lower-case and accents", "Café au LAIT", []string{"cafe", "au", "lait"}},
		{"precomposed vs combining", "cafe\u0301", []string{"cafe"}},
		{"punctuation isolated", "hello,world!", []string{"hello", ",", "world", "!"}},
		{"apostrophe", "don't", []string{"don", "'", "t"}},
		{"Chinese characters are words", "中文abc", []string{"中", "文", "abc"}},
		{"control and format characters removed", "a\x00b\u200bc\x7f", []string{"abc"}},
		{"vertical tab is a control, not a space", "a\vb\fc", []string{"abc"}},
		{"unicode whitespace splits", "hello\u00a0world\u3000!", []string{"hello", "world", "!"}},
		{"special tokens matched raw", "[MASK] is[SEP]", []string{"[MASK]", "is", "[SEP]"}},
		{"lower-cased special token is text", "[mask]", []string{"[UNK]", "[UNK]", "[UNK]"}},
		{"greedy longest match", "unaffable", []string{"un", "##aff", "##able"}},
		{"no split means unknown", "unaffablex", []string{"[UNK]"}},
		{"dotted capital I loses its dot", "İzmir", []string{"i", "##zmir"}},
		{"too long a word is unknown", strings.Repeat("a", 101), []string{"[UNK]"}},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, _ := w.Encode(tc.text, "", false)
			var got []string
			for _, id := range enc.IDs[1 : len(enc.IDs)-1] {
				got = append(got, words[id])
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%q: got %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestTruncateLongestFirst(t *testing.T) {
	for _, tc := range []struct {
		na, nb, limit int
		pair          bool
		wantA, wantB  int
	}{
		{10, 0, 4, false, 4, 0},
		{3, 0, 4, false, 3, 0},
		{3, 4, 10, true, 3, 4},
		{2, 20, 10, true, 2, 8}, // only the longer gives up tokens
		{20, 2, 10, true, 8, 2},
		{20, 30, 9, true, 4, 5}, // both: the longer keeps the odd one
		{30, 20, 9, true, 5, 4},
		{6, 6, 9, true, 4, 5}, // a tie: the second is "longer"
	} {
		a, b := truncateLongestFirst(tc.na, tc.nb, tc.limit, tc.pair)
		if a != tc.wantA || b != tc.wantB {
			t.Errorf("truncate(%d, %d, %d, %v) = %d, %d, want %d, %d", tc.na, tc.nb, tc.limit, tc.pair, a, b, tc.wantA, tc.wantB)
		}
	}
}

// uncasedForm is what an uncased BERT sees of a span of text.
func uncasedForm(s string) string {
	s = norm.NFD.String(strings.ToLower(s))
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// TestOffsetsRoundTrip checks on the fixture's texts and pairs that each
// token's offsets cover exactly the text it was made from, in order.
func TestOffsetsRoundTrip(t *testing.T) {
	exp := fixture.Load(t)
	dir := fixture.Dir(t)
	tk, err := NewWordPieceFromVocab(filepath.Join(dir, "vocab.txt"), 0)
	if err != nil {
		t.Fatal(err)
	}
	words, err := ReadVocab(filepath.Join(dir, "vocab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(enc []int, types []int, offs []Offset, texts [2]string) {
		t.Helper()
		last := [2]int{}
		for i, id := range enc {
			tok, o := words[id], offs[i]
			if i == 0 || tok == "[SEP]" {
				if o != (Offset{}) {
					t.Errorf("special token %s has offsets %v", tok, o)
				}
				continue
			}
			src := texts[types[i]]
			if o.Start < last[types[i]] || o.End <= o.Start || o.End > len(src) {
				t.Fatalf("%q: token %d %q has offsets %v after %d", src, i, tok, o, last[types[i]])
			}
			last[types[i]] = o.End
			if span := uncasedForm(src[o.Start:o.End]); tok != "[UNK]" && span != strings.TrimPrefix(tok, "##") {
				t.Errorf("%q: token %q covers %q", src, tok, src[o.Start:o.End])
			}
		}
	}
	for _, x := range exp.Texts {
		enc, offs := tk.EncodeWithOffsets(x.Text, "", false)
		check(enc.IDs, enc.TypeIDs, offs, [2]string{x.Text})
	}
	for _, p := range exp.Pairs {
		enc, offs := tk.EncodeWithOffsets(p.A, p.B, true)
		check(enc.IDs, enc.TypeIDs, offs, [2]string{p.A, p.B})
	}
}

func TestOffsetsNonASCII(t *testing.T) {
	w, _ := smallWordPiece(t, 0)
	text := "Café, 中!"
	_, offs := w.EncodeWithOffsets(text, "", false)
	want := []Offset{{}, {0, 5}, {5, 6}, {7, 10}, {10, 11}, {}}
	if !reflect.DeepEqual(offs, want) {
		t.Fatalf("byte offsets %v, want %v", offs, want)
	}
	runes := RuneOffsets(text, offs)
	wantRunes := []Offset{{}, {0, 4}, {4, 5}, {6, 7}, {7, 8}, {}}
	if !reflect.DeepEqual(runes, wantRunes) {
		t.Fatalf("rune offsets %v, want %v", runes, wantRunes)
	}
}

func TestWordPieceConcurrent(t *testing.T) {
	w, _ := smallWordPiece(t, 8)
	want, _ := w.Encode("Café au lait, unaffable", "hello world", true)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				got, _ := w.Encode("Café au lait, unaffable", "hello world", true)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("concurrent encoding %v, want %v", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestFingerprint(t *testing.T) {
	a, _ := smallWordPiece(t, 64)
	b, _ := smallWordPiece(t, 64)
	c, _ := smallWordPiece(t, 128)
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("the same tokenizer has two fingerprints")
	}
	if a.Fingerprint() == c.Fingerprint() {
		t.Error("the fingerprint ignores the maximum length")
	}
}

var sentimentInputs struct {
	once   sync.Once
	inputs []Input
	err    error
}

// sentimentSuiteInputs returns every input of CheckList's sentiment suite.
func sentimentSuiteInputs(b *testing.B) []Input {
	path := shareddata.Path(b, "data/checklist/sentiment_suite.tar.gz")
	sentimentInputs.once.Do(func() {
		s, err := suites.ImportCheckList(path)
		if err != nil {
			sentimentInputs.err = err
			return
		}
		for _, f := range s.Functionalities {
			for _, c := range f.Cases {
				for _, in := range c.Inputs {
					sentimentInputs.inputs = append(sentimentInputs.inputs, Input(in))
				}
			}
		}
	})
	if sentimentInputs.err != nil {
		b.Fatal(sentimentInputs.err)
	}
	return sentimentInputs.inputs
}

// BenchmarkWordPieceSentimentSuite encodes the sentiment suite's inputs,
// with a fresh word cache each time (cold) and with a warm one.
func BenchmarkWordPieceSentimentSuite(b *testing.B) {
	inputs := sentimentSuiteInputs(b)
	vocab := shareddata.Path(b, "data/vocab/bert-base-uncased-vocab.txt")
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "warm"
		}
		b.Run(name, func(b *testing.B) {
			tk, err := NewWordPieceFromVocab(vocab, 128)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !warm {
					b.StopTimer()
					tk.words = map[string][]piece{}
					b.StartTimer()
				}
				for _, in := range inputs {
					if _, err := tk.Encode(in.Text, in.Pair, in.IsPair); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(inputs)), "µs/input")
		})
	}
}

// TestLowercaseKeepingAccents covers BertNormalizer with strip_accents
// false: accents stay, and U+0130 lower-cases to i + combining dot as in Rust.
func TestLowercaseKeepingAccents(t *testing.T) {
	vocab := map[string]int32{"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "i\u0307": 3, "café": 4, "cafe": 5}
	w, err := newWordPiece(vocab, nil, "[UNK]", "[CLS]", "[SEP]", "##", 100,
		normOptions{cleanText: true, chineseChars: true, lowercase: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := w.Encode("İ Café", "", false)
	if want := []int{1, 3, 4, 2}; !reflect.DeepEqual(enc.IDs, want) {
		t.Errorf("ids %v, want %v", enc.IDs, want)
	}
}
