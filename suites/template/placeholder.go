package template

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/beluga-nlp/beluga/suites/lexicon"
)

// segment is a piece of a parsed template: literal text, or a placeholder.
type segment struct {
	lit     string
	slot    string // placeholder key with its number suffix: first_name1
	field   string // {first_pronoun.name}: the entry field to use
	article bool   // {a:thing}: prefix "a" or "an"
}

// parse splits a template into literal text and placeholders. "{{" and "}}"
// are literal braces.
func parse(t string) ([]segment, error) {
	var segs []segment
	var lit strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '{' && i+1 < len(t) && t[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(t) && t[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '}':
			return nil, fmt.Errorf("unmatched '}' at byte %d of %q (write }} for a literal brace)", i, t)
		case c == '{':
			end := strings.IndexByte(t[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '{' at byte %d of %q (write {{ for a literal brace)", i, t)
			}
			seg, err := parsePlaceholder(t[i+1 : i+end])
			if err != nil {
				return nil, err
			}
			if lit.Len() > 0 {
				segs = append(segs, segment{lit: lit.String()})
				lit.Reset()
			}
			segs = append(segs, seg)
			i += end
		default:
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 {
		segs = append(segs, segment{lit: lit.String()})
	}
	return segs, nil
}

func parsePlaceholder(p string) (segment, error) {
	var s segment
	body := p
	if i := strings.IndexByte(p, ':'); i >= 0 {
		switch opt := p[:i]; opt {
		case "a", "an":
			s.article = true
		default:
			return s, fmt.Errorf("placeholder {%s}: unknown option %q (want a: or an: for an article)", p, opt)
		}
		body = p[i+1:]
	}
	if i := strings.IndexByte(body, '.'); i >= 0 {
		s.field = body[i+1:]
		body = body[:i]
		if s.field == "" {
			return s, fmt.Errorf("placeholder {%s}: empty field name after '.'", p)
		}
	}
	if body == "" {
		return s, fmt.Errorf("placeholder {%s}: no lexicon name", p)
	}
	for _, r := range body {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			return s, fmt.Errorf("placeholder {%s}: %q is not a lexicon name (letters, digits, _)", p, body)
		}
	}
	if lexiconName(body) == "mask" {
		return s, errors.New("placeholder {mask}: masked-LM fill-ins are suggested, not expanded: run `beluga suite suggest` and put the words you keep in a lexicon")
	}
	s.slot = body
	return s, nil
}

// lexiconName strips the number suffix CheckList uses for independent copies
// of one lexicon: {first_name1} and {first_name2} both draw from first_name.
func lexiconName(slot string) string {
	return strings.TrimRightFunc(slot, unicode.IsDigit)
}

// addArticle is CheckList's add_article: "an" before a vowel letter, else "a".
func addArticle(w string) string {
	if w != "" && strings.ContainsRune("aeiou", unicode.ToLower([]rune(w)[0])) {
		return "an " + w
	}
	return "a " + w
}

// fill renders segs with one value per slot.
func fill(segs []segment, values map[string]lexicon.Entry) (string, error) {
	var b strings.Builder
	for _, s := range segs {
		if s.slot == "" {
			b.WriteString(s.lit)
			continue
		}
		e := values[s.slot]
		v := e.Text
		if s.field != "" {
			var ok bool
			if v, ok = e.Fields[s.field]; !ok {
				return "", fmt.Errorf("placeholder {%s.%s}: entry %s has no field %q", s.slot, s.field, e, s.field)
			}
		} else if e.Fields != nil {
			return "", fmt.Errorf("placeholder {%s}: entries of this lexicon are objects (%s); name a field, e.g. {%s.%s}", s.slot, e, s.slot, firstKey(e.Fields))
		}
		if s.article {
			v = addArticle(v)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

func firstKey(m map[string]string) string {
	best := ""
	for k := range m {
		if best == "" || k < best {
			best = k
		}
	}
	return best
}
