package tokenize

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// charsmap is SentencePiece's precompiled normalisation rules: a
// darts-clone double-array trie from input byte strings to offsets in a
// block of NUL-terminated replacements.
type charsmap struct {
	units      []uint32
	normalized string
}

// newCharsmap parses a precompiled_charsmap: a little-endian uint32 trie
// size in bytes, the trie, then the replacements.
func newCharsmap(data []byte) (*charsmap, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("precompiled charsmap of %d bytes", len(data))
	}
	n := int(binary.LittleEndian.Uint32(data))
	if n%4 != 0 || 4+n > len(data) {
		return nil, fmt.Errorf("precompiled charsmap: trie of %d bytes in %d", n, len(data))
	}
	units := make([]uint32, n/4)
	for i := range units {
		units[i] = binary.LittleEndian.Uint32(data[4+4*i:])
	}
	return &charsmap{units: units, normalized: string(data[4+n:])}, nil
}

// prefixes calls f(value, length) for every key of the trie that is a
// prefix of key, shortest first (darts-clone's commonPrefixSearch).
func (c *charsmap) prefixes(key string, f func(value, length int)) {
	if len(c.units) == 0 {
		return
	}
	offset := func(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }
	pos := offset(c.units[0])
	for i := 0; i < len(key); i++ {
		pos ^= uint32(key[i])
		if int(pos) >= len(c.units) {
			return
		}
		u := c.units[pos]
		if u&((1<<31)|0xFF) != uint32(key[i]) {
			return
		}
		pos ^= offset(u)
		if int(pos) >= len(c.units) {
			return
		}
		if (u>>8)&1 == 1 {
			f(int(c.units[pos]&((1<<31)-1)), i+1)
		}
	}
}

// replacement is the NUL-terminated replacement at value.
func (c *charsmap) replacement(value int) string {
	if value < 0 || value >= len(c.normalized) {
		return ""
	}
	s := c.normalized[value:]
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s
}

// longest is SentencePiece's NormalizePrefix rule: the longest key that
// prefixes s, its replacement and length (0 when none).
func (c *charsmap) longest(s string) (string, int) {
	best, bestLen := 0, 0
	c.prefixes(s, func(v, n int) {
		if n > bestLen {
			best, bestLen = v, n
		}
	})
	if bestLen == 0 {
		return "", 0
	}
	return c.replacement(best), bestLen
}

// first is HuggingFace's spm_precompiled transform: the replacement of the
// shortest key that prefixes s.
func (c *charsmap) first(s string) (string, bool) {
	val, found := 0, false
	c.prefixes(s, func(v, n int) {
		if !found {
			val, found = v, true
		}
	})
	if !found {
		return "", false
	}
	return c.replacement(val), true
}

// normalizeGraphemes is HuggingFace's Precompiled normalizer: a grapheme
// cluster shorter than 6 bytes is replaced whole where it has a rule, else
// each of its characters is replaced by its own rule. Alignments follow
// its transformations to the letter: a replacement's characters replace
// those of the original part one for one, extra ones are inserted, and
// fewer remove the rest of the part after the last character written so
// far (which for an empty replacement belongs to the part before).
// The replacements' bytes are counted as they are chosen: a charsmap's
// rules come from the file, and one replacing every character with
// kilobytes is refused once the text passes normBound.
func (c *charsmap) normalizeGraphemes(t ntext) (ntext, error) {
	var dest []change
	modified := false
	bound, size := normBound(t), len(t.s)
	replace := func(old, repl string) {
		modified = true
		size += len(repl) - len(old)
		if size > bound {
			return
		}
		for _, r := range repl {
			dest = append(dest, change{r, 0})
		}
		diff := utf8.RuneCountInString(repl) - utf8.RuneCountInString(old)
		switch {
		case diff > 0:
			for k := len(dest) - diff; k < len(dest); k++ {
				dest[k].n = 1
			}
		case diff < 0 && len(dest) > 0:
			dest[len(dest)-1].n += diff
		}
	}
	gr := uniseg.NewGraphemes(t.s)
	for gr.Next() && size <= bound {
		i, j := gr.Positions()
		g := t.s[i:j]
		if len(g) < 6 {
			if r, ok := c.first(g); ok {
				replace(g, r)
				continue
			}
		}
		for k, ch := range g {
			_, n := utf8.DecodeRuneInString(g[k:])
			part := g[k : k+n]
			if r, ok := c.first(part); ok {
				replace(part, r)
			} else {
				dest = append(dest, change{ch, 0})
			}
		}
	}
	if size > bound {
		return ntext{}, errNormBound("Precompiled", size, t)
	}
	if !modified {
		return t, nil
	}
	return t.transform(0, len(t.s), dest, 0), nil
}
