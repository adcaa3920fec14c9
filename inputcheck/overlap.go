package inputcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	// Label is the row's task label and Group its value of the part's
	// group column, for the part's summary (PartSize).
	Label string `json:"-"`
	Group string `json:"-"`
}

// Part is a named part of the data that must not share texts with the
// others: "i.i.d. train", "suite test", ...
type Part struct {
	Name string
	Rows []Row
	// Sides names the two texts of a pair part ("premise", "hypothesis":
	// the file's columns). Set, Overlaps also compares each side alone: a
	// premise in train and test leaks even when its hypotheses differ.
	Sides [2]string
	// GroupColumn names the column the part's split kept together
	// (Row.Group), "" when it is not split by group.
	GroupColumn string
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
	// Side, when set, names the one text of a pair compared ("premise"):
	// the rows of B whose Side is one of A's, their other text aside. With
	// Group, it names the group column compared (GroupOverlaps).
	Side  string `json:"side,omitempty"`
	Group bool   `json:"group,omitempty"`
	// Exact counts rows of B equal to a row of A; Normalised those equal
	// only after Normalise.
	Exact      int `json:"exact"`
	Normalised int `json:"normalised"`
	// RowsB is the number of B's rows, the whole the counts are of.
	RowsB int `json:"rows_b,omitempty"`
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
	if o.Group {
		fmt.Fprintf(&b, "%s and %s share values of %s: %d of %s's %d rows (%.1f%%) have one of %s's",
			o.A, o.B, o.Side, o.Exact, o.B, o.RowsB, 100*float64(o.Exact)/float64(max(o.RowsB, 1)), o.A)
	} else if o.Side != "" {
		fmt.Fprintf(&b, "%s and %s share the %s of %d of %s's %d rows (%.1f%%; %d exact, %d after normalising)",
			o.A, o.B, o.Side, o.Exact+o.Normalised, o.B, o.RowsB, 100*float64(o.Exact+o.Normalised)/float64(max(o.RowsB, 1)), o.Exact, o.Normalised)
	} else {
		fmt.Fprintf(&b, "%s and %s share %d %s (%d exact, %d after normalising)", o.A, o.B, o.Exact+o.Normalised, texts, o.Exact, o.Normalised)
	}
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

// Normalise maps a text onto the form near-duplicates share — the one
// normaliser of the overlap checks, for i.i.d. files and suites alike:
//
//   - case: lower case (after NFKC, so fullwidth and compatibility forms
//     are their plain letters);
//   - accents: combining marks removed (é is e, Arabic harakat go), and
//     tatweel;
//   - mentions: an @name, or a run of them, is @user, whoever it names
//     (a reply to two people and one to one are alike; GermEval's and
//     most tweet corpora's anonymised and real user names too);
//   - URLs: http://…, https://… and www.… are url;
//   - numbers: a run of digits, with . , : / between digits, is 0;
//   - punctuation and symbols (emoji too) removed, each run of white space
//     one space, none at the ends.
//
// Two tweets that differ only in whom they address, in case or in a link
// are then one text, reported beside the exact duplicates.
func Normalise(s string) string {
	s = placeholders(s)
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

var (
	mentionRE = regexp.MustCompile(`@[\p{L}\p{N}_]+(?:\s+@[\p{L}\p{N}_]+)*`)
	urlRE     = regexp.MustCompile(`(?i)(?:https?://|www\.)\S+`)
	numberRE  = regexp.MustCompile(`\p{Nd}+(?:[.,:/]\p{Nd}+)*`)
)

// placeholders replaces mentions, URLs and numbers by @user, url and 0;
// a text without an @, a link or a digit (most) skips the expressions.
func placeholders(s string) string {
	if strings.Contains(s, "@") {
		s = mentionRE.ReplaceAllLiteralString(s, "@user")
	}
	if containsFold(s, "http") || containsFold(s, "www.") {
		s = urlRE.ReplaceAllLiteralString(s, " url ")
	}
	if strings.IndexFunc(s, unicode.IsDigit) >= 0 {
		s = numberRE.ReplaceAllLiteralString(s, "0")
	}
	return s
}

// containsFold says whether s holds the ASCII text sub in any case, as
// urlRE matches it, without the copy strings.ToLower would make of every
// text.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
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

// Overlaps compares every pair of parts (earlier part A, later part B)
// and returns those that share texts, in part order: whole rows, then, for
// parts of pairs whose Sides are named, each side alone.
func Overlaps(parts []Part) []Overlap {
	// Each text is normalised once, whichever comparisons read it.
	norm := make([][][2]string, len(parts))
	for i, p := range parts {
		norm[i] = make([][2]string, len(p.Rows))
		for j, r := range p.Rows {
			norm[i][j] = [2]string{Normalise(r.Text), Normalise(r.Pair)}
		}
	}
	out := overlapsBy(parts, "",
		func(p, i int) string { return parts[p].Rows[i].Text + "\x00" + parts[p].Rows[i].Pair },
		func(p, i int) string { return norm[p][i][0] + "\x00" + norm[p][i][1] })
	var sided []int
	for i, p := range parts {
		if p.Sides != [2]string{} {
			sided = append(sided, i)
		}
	}
	if len(sided) < 2 {
		return out
	}
	sides := make([]Part, len(sided))
	for k, i := range sided {
		sides[k] = parts[i]
	}
	for k := range 2 {
		text := func(p, i int) string {
			if k == 0 {
				return sides[p].Rows[i].Text
			}
			return sides[p].Rows[i].Pair
		}
		found := overlapsBy(sides, sides[0].Sides[k], text, func(p, i int) string { return norm[sided[p]][i][k] })
		for i := range found {
			// Name the side by each part's own columns when they differ.
			found[i].Side = sideName(sides, found[i].A, found[i].B, k)
		}
		out = append(out, found...)
	}
	return out
}

// GroupOverlaps compares the parts' groups (Row.Group, the values of
// their GroupColumn): the rows of a later part whose group an earlier part
// has. A template, a premise or a thread in two parts leaks across them
// even when no text is shared. Rows without a group are not compared.
func GroupOverlaps(parts []Part) []Overlap {
	if len(parts) == 0 || parts[0].GroupColumn == "" {
		return nil
	}
	group := func(p, i int) string { return parts[p].Rows[i].Group }
	out := overlapsBy(parts, parts[0].GroupColumn, group, group)
	for i := range out {
		out[i].Group = true
	}
	return out
}

// sideName names side k of parts a and b: their column's name, or both.
func sideName(parts []Part, a, b string, k int) string {
	var na, nb string
	for _, p := range parts {
		switch p.Name {
		case a:
			na = p.Sides[k]
		case b:
			nb = p.Sides[k]
		}
	}
	if na == nb {
		return na
	}
	return na + "/" + nb
}

// overlapsBy compares every pair of parts by an exact key and a
// normalised one of each row (part p, row i); side names what the keys
// compare ("" for whole rows, whose empty normalised key is "\x00").
func overlapsBy(parts []Part, side string, exactKey, normalKey func(p, i int) string) []Overlap {
	type index struct {
		exact, normalised map[string]Row
	}
	empty := ""
	if side == "" {
		empty = "\x00"
	}
	idx := make([]index, len(parts))
	for i, p := range parts {
		idx[i] = index{map[string]Row{}, map[string]Row{}}
		for j, r := range p.Rows {
			if k := exactKey(i, j); side == "" || k != "" {
				if _, ok := idx[i].exact[k]; !ok {
					idx[i].exact[k] = r
				}
			}
			if k := normalKey(i, j); k != empty {
				if _, ok := idx[i].normalised[k]; !ok {
					idx[i].normalised[k] = r
				}
			}
		}
	}
	var out []Overlap
	for i := range parts {
		for j := i + 1; j < len(parts); j++ {
			o := Overlap{A: parts[i].Name, B: parts[j].Name, Side: side, RowsB: len(parts[j].Rows)}
			var normalised [][2]Row
			for k, r := range parts[j].Rows {
				ek := exactKey(j, k)
				if side != "" && ek == "" {
					continue // an empty side is no text to share
				}
				if a, ok := idx[i].exact[ek]; ok {
					o.Exact++
					if len(o.Examples) < MaxExamples {
						o.Examples = append(o.Examples, [2]Row{a, r})
					}
				} else if a, ok = idx[i].normalised[normalKey(j, k)]; ok {
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
