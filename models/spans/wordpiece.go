package spans

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/model/wordpiece"
	"github.com/sugarme/tokenizer/pretokenizer"
)

// WordPiece is an uncased BERT WordPiece tokenizer that keeps character
// offsets, built on sugarme/tokenizer's pre-tokenizer and WordPiece model.
// It normalises the text itself, one character at a time so that offsets
// map back, as BERT's BasicTokenizer does: control characters dropped, white
// space (Unicode space separators included) made a space, CJK ideographs set
// apart, lower case with accents stripped. sugarme's BertNormalizer keeps
// "é" (which then becomes [UNK]) and U+00A0 inside a word, and its offsets
// go wrong where it drops or inserts characters. It is safe for concurrent
// use.
type WordPiece struct {
	mu sync.Mutex
	tk *tokenizer.Tokenizer
	// CLS, SEP and PAD are the special ids of the vocabulary.
	CLS, SEP, PAD int
}

// NewWordPiece reads a BERT vocab.txt.
func NewWordPiece(vocabFile string) (*WordPiece, error) {
	if _, err := os.Stat(vocabFile); err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", vocabFile, err)
	}
	model, err := wordpiece.NewWordPieceFromFile(vocabFile, "[UNK]")
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", vocabFile, err)
	}
	tk := tokenizer.NewTokenizer(model)
	// No normalizer: TokenizeOffsets normalises, since sugarme's loses
	// offsets where it removes or inserts characters.
	tk.WithPreTokenizer(pretokenizer.NewBertPreTokenizer())
	tk.WithTruncation(nil)
	tk.WithPadding(nil)
	w := &WordPiece{tk: tk}
	for _, s := range []struct {
		tok string
		id  *int
	}{{"[CLS]", &w.CLS}, {"[SEP]", &w.SEP}, {"[PAD]", &w.PAD}} {
		id, ok := tk.TokenToId(s.tok)
		if !ok {
			return nil, fmt.Errorf("vocabulary %s: no %s token", vocabFile, s.tok)
		}
		*s.id = id
	}
	return w, nil
}

// VocabSize is the number of entries of the vocabulary (the size of a
// model's word embedding).
func (w *WordPiece) VocabSize() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tk.GetVocabSize(true)
}

// Config is BeLUGA's configuration with this vocabulary's special ids.
func (w *WordPiece) Config() Config {
	c := BeLUGA()
	c.CLS, c.SEP, c.PAD = w.CLS, w.SEP, w.PAD
	return c
}

// TokenizeOffsets implements Tokenizer.
func (w *WordPiece) TokenizeOffsets(text string) ([]Token, error) {
	var b strings.Builder
	var origin []int // origin[k]: the character of text that byte k of b came from
	ch := 0
	for _, r := range text {
		var s string
		switch {
		case r == 0 || r == 0xfffd || isControl(r):
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r):
			s = " "
		case isCJK(r):
			s = " " + string(r) + " "
		default:
			s = lowerStripAccents(r)
		}
		b.WriteString(s)
		for range len(s) {
			origin = append(origin, ch)
		}
		ch++
	}
	normalized := b.String()
	if strings.TrimSpace(normalized) == "" {
		return nil, nil
	}
	w.mu.Lock()
	enc, err := w.tk.EncodeSingle(normalized, false)
	w.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("tokenize %q: %w", text, err)
	}
	// sugarme's offsets are right for a word's first byte only (within a
	// word it counts characters as if they were bytes): a word's pieces are
	// placed one after the other from there, [UNK] spanning the whole word.
	out := make([]Token, len(enc.Ids))
	pos := 0
	for i, id := range enc.Ids {
		tok := enc.Tokens[i]
		if !strings.HasPrefix(tok, "##") {
			pos = enc.Offsets[i][0]
		}
		end := pos + len(strings.TrimPrefix(tok, "##"))
		if tok == "[UNK]" {
			end = wordEnd(normalized, pos)
		}
		if pos < 0 || end > len(normalized) || end <= pos || (tok != "[UNK]" && normalized[pos:end] != strings.TrimPrefix(tok, "##")) {
			return nil, fmt.Errorf("tokenize %q: cannot place token %d (%q) at byte %d", text, i, tok, pos)
		}
		out[i] = Token{ID: id, Start: origin[pos], End: origin[end-1] + 1}
		pos = end
	}
	return out, nil
}

// wordEnd returns the end of the word starting at byte from of s as BERT's
// pre-tokenizer delimits it: a punctuation character or a CJK ideograph
// alone, else up to the next white space, punctuation or ideograph.
func wordEnd(s string, from int) int {
	r, size := utf8.DecodeRuneInString(s[from:])
	if isBERTPunct(r) || isCJK(r) {
		return from + size
	}
	end := from
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		if unicode.IsSpace(r) || isBERTPunct(r) || isCJK(r) {
			break
		}
		end += size
	}
	return end
}

// isBERTPunct is BERT's _is_punctuation: ASCII non-alphanumeric symbols and
// Unicode punctuation.
func isBERTPunct(r rune) bool {
	return r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 || unicode.IsPunct(r)
}

// isControl is BERT's _is_control: categories C*, except tab, newline and
// carriage return (white space).
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isCJK is BERT's _is_chinese_char.
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

// lowerStripAccents is BERT's uncased normalisation of one character:
// lower case, canonical decomposition, combining marks (Mn) dropped.
func lowerStripAccents(r rune) string {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], unicode.ToLower(r))
	d := norm.NFD.Bytes(buf[:n])
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, string(d))
}
