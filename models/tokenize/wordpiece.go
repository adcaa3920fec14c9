package tokenize

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// This file is HuggingFace's BERT pipeline in one pass over a text:
// BertNormalizer (clean_text, handle_chinese_chars, strip_accents, lowercase,
// in that order), BertPreTokenizer (split on whitespace, isolate
// punctuation) and the WordPiece model, keeping for each normalised byte the
// byte range of the original character it came from, for the offsets.

// scanner is the per-call scratch of tokens: the word being built, in
// normalised bytes, and each byte's original range.
type scanner struct {
	word       []byte
	start, end []int32
	rbuf       []byte // one rune, to decompose it
	dbuf       []byte // its canonical decomposition
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

// tokens appends the WordPiece tokens of text to dst, offsets being byte
// ranges in text. Special tokens are matched in the raw text first, as
// HuggingFace matches its (unnormalised) added tokens.
func (w *WordPiece) tokens(dst []token, text string) []token {
	sc := scanners.Get().(*scanner)
	defer scanners.Put(sc)
	base := 0
	for len(text) > 0 {
		pos, sp := w.nextSpecial(text)
		if sp == nil {
			return w.segment(dst, sc, text, base)
		}
		dst = w.segment(dst, sc, text[:pos], base)
		end := pos + len(sp.text)
		dst = append(dst, token{int32(sp.id), int32(base + pos), int32(base + end)})
		text, base = text[end:], base+end
	}
	return dst
}

// nextSpecial finds the earliest special token in text, the longest where
// several start there.
func (w *WordPiece) nextSpecial(text string) (int, *specialToken) {
	best, bestPos := (*specialToken)(nil), len(text)
	for i := range w.special {
		s := &w.special[i]
		if s.text == "" {
			continue
		}
		if p := strings.Index(text[:min(len(text), bestPos+len(s.text))], s.text); p >= 0 && p < bestPos {
			best, bestPos = s, p
		}
	}
	return bestPos, best
}

// segment normalises, pre-tokenises and splits text (which starts at byte
// base of the caller's text) into dst.
func (w *WordPiece) segment(dst []token, sc *scanner, text string, base int) []token {
	sc.word, sc.start, sc.end = sc.word[:0], sc.start[:0], sc.end[:0]
	no := &w.norm
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				dst = w.flush(dst, sc)
			case c < 0x20 || c == 0x7f:
				// Other ASCII controls: removed by clean_text; else part of
				// the word, except the whitespace among them.
				if !no.cleanText {
					if c == '\v' || c == '\f' {
						dst = w.flush(dst, sc)
					} else {
						sc.add(c, base+i, base+i+1)
					}
				}
			case asciiPunct[c]:
				dst = w.flush(dst, sc)
				sc.add(c, base+i, base+i+1)
				dst = w.flush(dst, sc)
			default:
				if no.lowercase && 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				sc.add(c, base+i, base+i+1)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		dst = w.rune(dst, sc, r, base+i, base+i+size)
		i += size
	}
	return w.flush(dst, sc)
}

// rune normalises and pre-tokenises one non-ASCII character at [from, to).
func (w *WordPiece) rune(dst []token, sc *scanner, r rune, from, to int) []token {
	no := &w.norm
	if no.cleanText && (r == utf8.RuneError || isControl(r)) {
		return dst
	}
	if unicode.IsSpace(r) {
		return w.flush(dst, sc)
	}
	chinese := no.chineseChars && isChinese(r)
	if chinese {
		dst = w.flush(dst, sc)
	}
	emit := func(r rune) {
		if no.lowercase {
			if r == 'İ' {
				// Rust's to_lowercase, which BertNormalizer uses, maps U+0130
				// to two characters; Go's to one.
				dst = w.addRune(dst, sc, 'i', from, to)
				dst = w.addRune(dst, sc, '\u0307', from, to)
				return
			}
			r = unicode.ToLower(r)
		}
		dst = w.addRune(dst, sc, r, from, to)
	}
	if no.stripAccents {
		sc.rbuf = utf8.AppendRune(sc.rbuf[:0], r)
		sc.dbuf = norm.NFD.Append(sc.dbuf[:0], sc.rbuf...)
		for _, d := range string(sc.dbuf) {
			if !unicode.Is(unicode.Mn, d) {
				emit(d)
			}
		}
	} else {
		emit(r)
	}
	if chinese {
		dst = w.flush(dst, sc)
	}
	return dst
}

// addRune adds a normalised character to the word, isolating punctuation.
func (w *WordPiece) addRune(dst []token, sc *scanner, r rune, from, to int) []token {
	if r < utf8.RuneSelf {
		if asciiPunct[r] {
			dst = w.flush(dst, sc)
			sc.add(byte(r), from, to)
			return w.flush(dst, sc)
		}
		sc.add(byte(r), from, to)
		return dst
	}
	if unicode.IsSpace(r) {
		return w.flush(dst, sc)
	}
	punct := unicode.IsPunct(r)
	if punct {
		dst = w.flush(dst, sc)
	}
	var b [utf8.UTFMax]byte
	for _, c := range utf8.AppendRune(b[:0], r) {
		sc.add(c, from, to)
	}
	if punct {
		dst = w.flush(dst, sc)
	}
	return dst
}

func (sc *scanner) add(c byte, from, to int) {
	sc.word = append(sc.word, c)
	sc.start = append(sc.start, int32(from))
	sc.end = append(sc.end, int32(to))
}

// flush splits the word built so far into WordPiece tokens.
func (w *WordPiece) flush(dst []token, sc *scanner) []token {
	if len(sc.word) == 0 {
		return dst
	}
	for _, p := range w.pieces(sc.word) {
		dst = append(dst, token{p.id, sc.start[p.start], sc.end[p.end-1]})
	}
	sc.word, sc.start, sc.end = sc.word[:0], sc.start[:0], sc.end[:0]
	return dst
}

// pieces returns the WordPiece split of a normalised word, from the cache
// when it has been seen.
func (w *WordPiece) pieces(word []byte) []piece {
	w.mu.RLock()
	p, ok := w.words[string(word)]
	w.mu.RUnlock()
	if ok {
		return p
	}
	p = w.split(word)
	w.mu.Lock()
	if len(w.words) < maxCachedWords {
		w.words[string(word)] = p
	}
	w.mu.Unlock()
	return p
}

// split is WordPiece's greedy longest-match-first split; a word with a part
// that matches nothing, or longer than max_input_chars_per_word, is one
// unknown token.
func (w *WordPiece) split(word []byte) []piece {
	unk := []piece{{w.unk, 0, int32(len(word))}}
	if utf8.RuneCount(word) > w.maxWordChars {
		return unk
	}
	var out []piece
	buf := make([]byte, 0, len(w.prefix)+len(word))
	for start := 0; start < len(word); {
		end, found := len(word), int32(-1)
		for end > start {
			var id int32
			var ok bool
			if start > 0 {
				buf = append(append(buf[:0], w.prefix...), word[start:end]...)
				id, ok = w.vocab[string(buf)]
			} else {
				id, ok = w.vocab[string(word[start:end])]
			}
			if ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRune(word[start:end])
			end -= size
		}
		if found < 0 {
			return unk
		}
		out = append(out, piece{found, int32(start), int32(end)})
		start = end
	}
	return out
}

// asciiPunct is Rust's char::is_ascii_punctuation, which BertPreTokenizer
// isolates besides Unicode's punctuation: it includes symbols like $ + < = > ^ ` | ~.
var asciiPunct = func() (t [utf8.RuneSelf]bool) {
	for _, c := range "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" {
		t[c] = true
	}
	return t
}()

// isControl is BertNormalizer's is_control for non-ASCII characters:
// Unicode's "other" categories (Cc, Cf, Co, Cs) and unassigned code points.
func isControl(r rune) bool {
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isChinese is BertNormalizer's CJK range test.
func isChinese(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}
