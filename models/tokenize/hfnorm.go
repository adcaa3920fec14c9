package tokenize

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalizer is one of tokenizer.json's normalizers. It fails only where
// its output would pass normBound.
type normalizer func(ntext) (ntext, error)

// infallible is a normalizer that cannot grow a text past normBound (its
// growth per character is fixed: NFKC's longest expansion is 11 bytes per
// byte, BertNormalizer's spaces around CJK characters 5 per 3).
func infallible(f func(ntext) ntext) normalizer {
	return func(t ntext) (ntext, error) { return f(t), nil }
}

// maxNormGrowth and normSlack bound normalised text: at most maxNormGrowth
// bytes per byte of the original text, plus normSlack. Replace and
// Precompiled rules come from the file and can grow a text without limit
// (a rule's content thousands of bytes long, or 34 chained Replaces each
// doubling it); a tokenizer whose normalisers pass the bound is refused on
// that text rather than allowed to allocate without end.
const maxNormGrowth, normSlack = 16, 1 << 10

// normBound is the most bytes a normaliser may make of t: by the length
// of the original text t comes from.
func normBound(t ntext) int {
	o := t.origin(0, len(t.s))
	return maxNormGrowth*int(o.b-o.a) + normSlack
}

// errNormBound says which normaliser passed the bound, and by how much.
func errNormBound(what string, n int, t ntext) error {
	o := t.origin(0, len(t.s))
	return fmt.Errorf("normalizer %s would make %d bytes of a %d-byte text, more than the %d× (+%d) bound on normalised text", what, n, o.b-o.a, maxNormGrowth, normSlack)
}

// hfNormalizer is the JSON of a normalizer: every field any of them has.
type hfNormalizer struct {
	Type                string            `json:"type"`
	CleanText           *bool             `json:"clean_text"`
	HandleChineseChars  *bool             `json:"handle_chinese_chars"`
	StripAccents        *bool             `json:"strip_accents"`
	Lowercase           *bool             `json:"lowercase"`
	StripLeft           *bool             `json:"strip_left"`
	StripRight          *bool             `json:"strip_right"`
	Pattern             *hfPattern        `json:"pattern"`
	Content             string            `json:"content"`
	Prepend             string            `json:"prepend"`
	PrecompiledCharsmap *string           `json:"precompiled_charsmap"`
	Normalizers         []json.RawMessage `json:"normalizers"`
}

// hfPattern is a Replace or Split pattern: a literal string or a regex.
type hfPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// compile returns a regexp for the pattern (a literal is quoted).
func (p *hfPattern) compile() (*regexp.Regexp, error) {
	switch {
	case p == nil:
		return nil, fmt.Errorf("no pattern")
	case p.String != nil:
		return regexp.MustCompile(regexp.QuoteMeta(*p.String)), nil
	case p.Regex != nil:
		re, err := regexp.Compile(*p.Regex)
		if err != nil {
			// Oniguruma's look-around and the like have no Go equivalent.
			return nil, fmt.Errorf("regex %q is not supported by Go's regexp: %w", *p.Regex, err)
		}
		return re, nil
	}
	return nil, fmt.Errorf("pattern is neither String nor Regex")
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// buildNormalizer builds a normalizer from its JSON.
func buildNormalizer(raw json.RawMessage) (normalizer, string, error) {
	var n hfNormalizer
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, "", err
	}
	switch n.Type {
	case "BertNormalizer":
		lower := boolOr(n.Lowercase, true)
		o := normOptions{cleanText: boolOr(n.CleanText, true), chineseChars: boolOr(n.HandleChineseChars, true),
			lowercase: lower, stripAccents: boolOr(n.StripAccents, lower)}
		return infallible(func(t ntext) ntext { return bertNormalize(t, o) }), n.Type, nil
	case "NFC", "NFD", "NFKC", "NFKD":
		form := map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}[n.Type]
		return infallible(func(t ntext) ntext { return unicodeNormalize(t, form) }), n.Type, nil
	case "Lowercase":
		return infallible(lowercase), n.Type, nil
	case "StripAccents":
		// HuggingFace drops every combining mark (category M).
		return infallible(func(t ntext) ntext {
			return mapRunes(t, func(r rune, emit func(rune)) {
				if !unicode.Is(unicode.M, r) {
					emit(r)
				}
			})
		}), n.Type, nil
	case "Strip":
		left, right := boolOr(n.StripLeft, true), boolOr(n.StripRight, true)
		return infallible(func(t ntext) ntext {
			i, j := 0, len(t.s)
			if left {
				i = len(t.s) - len(strings.TrimLeftFunc(t.s, unicode.IsSpace))
			}
			if right {
				j = len(strings.TrimRightFunc(t.s, unicode.IsSpace))
			}
			if j < i {
				j = i
			}
			return t.slice(i, j)
		}), n.Type, nil
	case "Replace":
		re, err := n.Pattern.compile()
		if err != nil {
			return nil, "", fmt.Errorf("Replace: %w", err)
		}
		content := n.Content
		return func(t ntext) (ntext, error) { return replaceAll(t, re, content) }, n.Type, nil
	case "Prepend":
		p := n.Prepend
		return func(t ntext) (ntext, error) {
			if t.s == "" {
				return t, nil
			}
			if len(t.s)+len(p) > normBound(t) {
				return ntext{}, errNormBound("Prepend", len(t.s)+len(p), t)
			}
			b := builder{base: t.base}
			b.str(p, t.origin(0, utf8.RuneLen([]rune(t.s)[0])))
			b.buf = append(b.buf, t.s...)
			b.align = append(b.align, t.align...)
			return b.text(), nil
		}, n.Type, nil
	case "Precompiled":
		if n.PrecompiledCharsmap == nil || *n.PrecompiledCharsmap == "" {
			return infallible(func(t ntext) ntext { return t }), n.Type, nil
		}
		data, err := base64.StdEncoding.DecodeString(*n.PrecompiledCharsmap)
		if err != nil {
			return nil, "", fmt.Errorf("Precompiled: precompiled_charsmap: %w", err)
		}
		cm, err := newCharsmap(data)
		if err != nil {
			return nil, "", fmt.Errorf("Precompiled: %w", err)
		}
		return cm.normalizeGraphemes, n.Type, nil
	case "Sequence":
		var seq []normalizer
		var names []string
		for i, r := range n.Normalizers {
			f, name, err := buildNormalizer(r)
			if err != nil {
				return nil, "", fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			seq = append(seq, f)
			names = append(names, name)
		}
		return func(t ntext) (ntext, error) {
			var err error
			for _, f := range seq {
				if t, err = f(t); err != nil {
					return ntext{}, err
				}
			}
			return t, nil
		}, "Sequence(" + strings.Join(names, ",") + ")", nil
	}
	return nil, "", fmt.Errorf("normalizer type %q is not supported", n.Type)
}

// bertNormalize is HuggingFace's BertNormalizer.
func bertNormalize(t ntext, o normOptions) ntext {
	if o.cleanText {
		t = mapRunes(t, func(r rune, emit func(rune)) {
			switch {
			case r == 0 || r == 0xFFFD || isBertControl(r):
			case isBertWhitespace(r):
				emit(' ')
			default:
				emit(r)
			}
		})
	}
	if o.chineseChars {
		t = mapRunes(t, func(r rune, emit func(rune)) {
			if isChinese(r) {
				emit(' ')
				emit(r)
				emit(' ')
			} else {
				emit(r)
			}
		})
	}
	if o.stripAccents {
		t = unicodeNormalize(t, norm.NFD)
		t = mapRunes(t, func(r rune, emit func(rune)) {
			if !unicode.Is(unicode.Mn, r) {
				emit(r)
			}
		})
	}
	if o.lowercase {
		t = lowercase(t)
	}
	return t
}

// isBertWhitespace and isBertControl are BertNormalizer's tests: tab, new
// line and carriage return are white space (as is anything with Unicode's
// White_Space property), not control characters (Unicode's category C).
func isBertWhitespace(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r)
}

func isBertControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return isControl(r)
}

// lowercase is Rust's char::to_lowercase, character by character (no
// final-sigma rule; İ becomes i and a combining dot).
func lowercase(t ntext) ntext {
	return mapRunes(t, func(r rune, emit func(rune)) {
		if r == 'İ' {
			emit('i')
			emit('\u0307')
			return
		}
		emit(unicode.ToLower(r))
	})
}

// unicodeNormalize applies a Unicode normal form as HuggingFace does
// (unicodeChanges): a composed character is aligned with the character it
// was composed on, a decomposition's extra characters with the character
// they came from.
func unicodeNormalize(t ntext, f norm.Form) ntext {
	ascii := true
	for i := 0; i < len(t.s) && ascii; i++ {
		ascii = t.s[i] < utf8.RuneSelf
	}
	if ascii {
		return t // every form leaves ASCII as it is
	}
	return t.transform(0, len(t.s), unicodeChanges(t.s, f), 0)
}

// replaceAll replaces every match of re with content as HuggingFace's
// NormalizedString::replace does: the content's characters are inserted
// after the match is removed, so each is aligned with the match's last
// character (with the character before an empty match; the text's base
// before any). One pass, the text copied once: replacing match by match
// copied the text each time (77 s for 256 k characters). The output's
// length is known before it is built, and held to normBound.
func replaceAll(t ntext, re *regexp.Regexp, content string) (ntext, error) {
	ms := re.FindAllStringIndex(t.s, -1)
	if len(ms) == 0 {
		return t, nil
	}
	n := len(t.s)
	for _, m := range ms {
		n += len(content) - (m[1] - m[0])
	}
	if n > normBound(t) {
		return ntext{}, errNormBound(fmt.Sprintf("Replace(%q → %q)", re, content), n, t)
	}
	b := builder{base: t.base, buf: make([]byte, 0, n), align: make([]span, 0, n)}
	prev := 0
	for _, m := range ms {
		b.buf = append(b.buf, t.s[prev:m[0]]...)
		b.align = append(b.align, t.align[prev:m[0]]...)
		al := span{t.base, t.base}
		if m[1] > 0 {
			al = t.align[m[1]-1]
		}
		for _, r := range content {
			b.rune(r, al)
		}
		prev = m[1]
	}
	b.buf = append(b.buf, t.s[prev:]...)
	b.align = append(b.align, t.align[prev:]...)
	return b.text(), nil
}
