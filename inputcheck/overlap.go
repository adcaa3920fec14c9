package inputcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Row is one input a check looks at, and where it comes from.
type Row struct {
	Text string `json:"text"`
	Pair string `json:"text_pair,omitempty"`
	// Where is "FILE line N" for a data file, or "suite S functionality F
	// case N" for a suite case.
	Where string `json:"where"`
}

// Part is a named part of the data that must not share texts with the
// others: "i.i.d. train", "suite test", ...
type Part struct {
	Name string
	Rows []Row
}

// FileRows returns the rows of a data file's examples, placed at their lines.
func FileRows(path string, texts, pairs []string, lines []int) []Row {
	out := make([]Row, len(texts))
	for i := range texts {
		out[i] = Row{Text: texts[i], Where: fmt.Sprintf("%s line %d", path, lines[i])}
		if pairs != nil {
			out[i].Pair = pairs[i]
		}
	}
	return out
}

// Overlap counts the rows of part B whose text is one of part A's.
type Overlap struct {
	A string `json:"a"`
	B string `json:"b"`
	// Exact counts rows of B equal to a row of A; Normalised those equal
	// only after Normalise.
	Exact      int `json:"exact"`
	Normalised int `json:"normalised"`
	// Examples are up to MaxExamples pairs (row of A, row of B), exact
	// ones first: a verbatim copy is the one to see.
	Examples [][2]Row `json:"examples"`
}

// MaxExamples caps the example pairs an Overlap keeps.
const MaxExamples = 3

// String says what overlaps, how much, and where.
func (o Overlap) String() string {
	var b strings.Builder
	texts := "texts"
	if o.Exact+o.Normalised == 1 {
		texts = "text"
	}
	fmt.Fprintf(&b, "%s and %s share %d %s (%d exact, %d after normalising)", o.A, o.B, o.Exact+o.Normalised, texts, o.Exact, o.Normalised)
	for i, e := range o.Examples {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s = %s", e[0].Where, e[1].Where)
	}
	return b.String()
}

// Normalise maps a text onto the form normalised duplicates share: NFKC,
// lower case, without punctuation, symbols, combining marks (Arabic
// harakat, accents after NFKC leaves them) or tatweel, with each run of
// white space made one space and none at the ends.
func Normalise(s string) string {
	if isASCII(s) {
		s = strings.ToLower(s)
	} else {
		s = norm.NFKD.String(strings.ToLower(norm.NFKC.String(s)))
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsPunct(r), unicode.IsSymbol(r), unicode.Is(unicode.Mn, r), unicode.Is(unicode.Cf, r), r == '\u0640':
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if isASCII(b.String()) {
		return b.String()
	}
	return norm.NFC.String(b.String())
}

// isASCII says whether s is ASCII, which every normal form leaves as is
// (case aside), so Normalise can skip them: most English data is.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func key(r Row) string { return r.Text + "\x00" + r.Pair }

func normKey(r Row) string { return Normalise(r.Text) + "\x00" + Normalise(r.Pair) }

// Overlaps compares every pair of parts (earlier part A, later part B)
// and returns those that share texts, in part order.
func Overlaps(parts []Part) []Overlap {
	type index struct {
		exact, normalised map[string]Row
	}
	idx := make([]index, len(parts))
	for i, p := range parts {
		idx[i] = index{map[string]Row{}, map[string]Row{}}
		for _, r := range p.Rows {
			if _, ok := idx[i].exact[key(r)]; !ok {
				idx[i].exact[key(r)] = r
			}
			if k := normKey(r); k != "\x00" {
				if _, ok := idx[i].normalised[k]; !ok {
					idx[i].normalised[k] = r
				}
			}
		}
	}
	var out []Overlap
	for i := range parts {
		for j := i + 1; j < len(parts); j++ {
			o := Overlap{A: parts[i].Name, B: parts[j].Name}
			var normalised [][2]Row
			for _, r := range parts[j].Rows {
				if a, ok := idx[i].exact[key(r)]; ok {
					o.Exact++
					if len(o.Examples) < MaxExamples {
						o.Examples = append(o.Examples, [2]Row{a, r})
					}
				} else if a, ok = idx[i].normalised[normKey(r)]; ok {
					o.Normalised++
					if len(normalised) < MaxExamples {
						normalised = append(normalised, [2]Row{a, r})
					}
				}
			}
			for _, e := range normalised {
				if len(o.Examples) == MaxExamples {
					break
				}
				o.Examples = append(o.Examples, e)
			}
			if o.Exact+o.Normalised > 0 {
				out = append(out, o)
			}
		}
	}
	return out
}

// SameFile says whether two paths name one file: the same file on disk,
// or, for paths that do not exist, the same cleaned absolute path.
func SameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}
