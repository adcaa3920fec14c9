package tokenize

import (
	"unicode/utf8"
)

// This file is the aligned string HuggingFace tokenizers' pipeline works on
// (their NormalizedString): a normalised text whose every byte remembers the
// byte range of the original character it came from, so that a token's
// offsets in the original text survive normalisation and byte-level mapping.

// span is a byte range [a, b) of the original text.
type span struct{ a, b int32 }

// ntext is a normalised text and, per byte, its original range.
type ntext struct {
	s     string
	align []span
}

// newNText aligns each byte of text, offset by base, with its character.
func newNText(text string, base int) ntext {
	al := make([]span, len(text))
	for i, r := range text {
		n := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, n = utf8.DecodeRuneInString(text[i:])
		}
		for k := range n {
			al[i+k] = span{int32(base + i), int32(base + i + n)}
		}
	}
	return ntext{text, al}
}

// slice is the part [i, j) of t.
func (t ntext) slice(i, j int) ntext { return ntext{t.s[i:j], t.align[i:j]} }

// origin is the original range of the bytes [i, j) of t.
func (t ntext) origin(i, j int) span {
	if i >= j || j > len(t.align) {
		return span{}
	}
	return span{t.align[i].a, t.align[j-1].b}
}

// builder accumulates a transformed ntext.
type builder struct {
	buf   []byte
	align []span
}

func (b *builder) rune(r rune, al span) {
	n := len(b.buf)
	b.buf = utf8.AppendRune(b.buf, r)
	for range len(b.buf) - n {
		b.align = append(b.align, al)
	}
}

func (b *builder) str(s string, al span) {
	b.buf = append(b.buf, s...)
	for range len(s) {
		b.align = append(b.align, al)
	}
}

func (b *builder) text() ntext { return ntext{string(b.buf), b.align} }

// mapRunes rewrites t one character at a time: f emits each character's
// replacement (none, to drop it), aligned with the character.
func mapRunes(t ntext, f func(r rune, emit func(rune))) ntext {
	var b builder
	b.buf = make([]byte, 0, len(t.s))
	b.align = make([]span, 0, len(t.s))
	for i, r := range t.s {
		al := t.origin(i, i+utf8.RuneLen(r))
		if r == utf8.RuneError {
			_, n := utf8.DecodeRuneInString(t.s[i:])
			al = t.origin(i, i+n)
		}
		f(r, func(o rune) { b.rune(o, al) })
	}
	return b.text()
}

// splitRanges cuts t at the delimiter ranges (sorted, disjoint) as
// HuggingFace's SplitDelimiterBehavior says, dropping empty pieces.
func splitRanges(t ntext, delims [][2]int, behavior string, invert bool) []ntext {
	type part struct {
		a, b  int
		match bool
	}
	var parts []part
	prev := 0
	for _, d := range delims {
		if d[0] > prev {
			parts = append(parts, part{prev, d[0], invert})
		}
		if d[1] > d[0] {
			parts = append(parts, part{d[0], d[1], !invert})
		}
		prev = d[1]
	}
	if prev < len(t.s) {
		parts = append(parts, part{prev, len(t.s), invert})
	}
	var out []part
	switch behavior {
	case "Removed":
		for _, p := range parts {
			if !p.match {
				out = append(out, p)
			}
		}
	case "Isolated":
		out = parts
	case "MergedWithPrevious":
		prevMatch := false
		for _, p := range parts {
			if p.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].b = p.b
			} else {
				out = append(out, p)
			}
			prevMatch = p.match
		}
	case "MergedWithNext":
		prevMatch := false
		for i := len(parts) - 1; i >= 0; i-- {
			p := parts[i]
			if p.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].a = p.a
			} else {
				out = append(out, p)
			}
			prevMatch = p.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	case "Contiguous":
		prevMatch := false
		for i, p := range parts {
			if i > 0 && p.match == prevMatch && len(out) > 0 {
				out[len(out)-1].b = p.b
			} else {
				out = append(out, p)
			}
			prevMatch = p.match
		}
	}
	res := make([]ntext, 0, len(out))
	for _, p := range out {
		if p.b > p.a {
			res = append(res, t.slice(p.a, p.b))
		}
	}
	return res
}

// runeDelims is the range of every character of s for which f holds.
func runeDelims(s string, f func(rune) bool) [][2]int {
	var d [][2]int
	for i, r := range s {
		if f(r) {
			d = append(d, [2]int{i, i + utf8.RuneLen(r)})
		}
	}
	return d
}
