package perturb

import (
	"regexp"
	"strings"
)

// pair is one entry of an ordered replacement map: Python's dicts keep
// insertion order, and the order of a regular expression's alternatives
// decides which of two overlapping keys matches, so the maps are slices.
type pair struct{ from, to string }

// expansions is CheckList's expand_contractions map (77 entries), which
// Azimuth (through NL-Augmenter) uses unchanged.
var expansions = []pair{
	{"ain't", "is not"}, {"aren't", "are not"}, {"can't", "cannot"},
	{"can't've", "cannot have"}, {"could've", "could have"}, {"couldn't", "could not"},
	{"didn't", "did not"}, {"doesn't", "does not"}, {"don't", "do not"},
	{"hadn't", "had not"}, {"hasn't", "has not"}, {"haven't", "have not"},
	{"he'd", "he would"}, {"he'd've", "he would have"}, {"he'll", "he will"},
	{"he's", "he is"}, {"how'd", "how did"}, {"how'd'y", "how do you"},
	{"how'll", "how will"}, {"how's", "how is"}, {"I'd", "I would"},
	{"I'll", "I will"}, {"I'm", "I am"}, {"I've", "I have"},
	{"i'd", "i would"}, {"i'll", "i will"}, {"i'm", "i am"},
	{"i've", "i have"}, {"isn't", "is not"}, {"it'd", "it would"},
	{"it'll", "it will"}, {"it's", "it is"}, {"ma'am", "madam"},
	{"might've", "might have"}, {"mightn't", "might not"}, {"must've", "must have"},
	{"mustn't", "must not"}, {"needn't", "need not"}, {"oughtn't", "ought not"},
	{"shan't", "shall not"}, {"she'd", "she would"}, {"she'll", "she will"},
	{"she's", "she is"}, {"should've", "should have"}, {"shouldn't", "should not"},
	{"that'd", "that would"}, {"that's", "that is"}, {"there'd", "there would"},
	{"there's", "there is"}, {"they'd", "they would"}, {"they'll", "they will"},
	{"they're", "they are"}, {"they've", "they have"}, {"wasn't", "was not"},
	{"we'd", "we would"}, {"we'll", "we will"}, {"we're", "we are"},
	{"we've", "we have"}, {"weren't", "were not"}, {"what're", "what are"},
	{"what's", "what is"}, {"when's", "when is"}, {"where'd", "where did"},
	{"where's", "where is"}, {"where've", "where have"}, {"who'll", "who will"},
	{"who's", "who is"}, {"who've", "who have"}, {"why's", "why is"},
	{"won't", "will not"}, {"would've", "would have"}, {"wouldn't", "would not"},
	{"you'd", "you would"}, {"you'd've", "you would have"}, {"you'll", "you will"},
	{"you're", "you are"}, {"you've", "you have"},
}

// checkListContractions is CheckList's contract map: 57 hand-written
// entries, not the inverse of expansions.
var checkListContractions = []pair{
	{"is not", "isn't"}, {"are not", "aren't"}, {"cannot", "can't"},
	{"could not", "couldn't"}, {"did not", "didn't"}, {"does not", "doesn't"},
	{"do not", "don't"}, {"had not", "hadn't"}, {"has not", "hasn't"},
	{"have not", "haven't"}, {"he is", "he's"}, {"how did", "how'd"},
	{"how is", "how's"}, {"I would", "I'd"}, {"I will", "I'll"},
	{"I am", "I'm"}, {"i would", "i'd"}, {"i will", "i'll"}, {"i am", "i'm"},
	{"it would", "it'd"}, {"it will", "it'll"}, {"it is", "it's"},
	{"might not", "mightn't"}, {"must not", "mustn't"}, {"need not", "needn't"},
	{"ought not", "oughtn't"}, {"shall not", "shan't"}, {"she would", "she'd"},
	{"she will", "she'll"}, {"she is", "she's"}, {"should not", "shouldn't"},
	{"that would", "that'd"}, {"that is", "that's"}, {"there would", "there'd"},
	{"there is", "there's"}, {"they would", "they'd"}, {"they will", "they'll"},
	{"they are", "they're"}, {"was not", "wasn't"}, {"we would", "we'd"},
	{"we will", "we'll"}, {"we are", "we're"}, {"were not", "weren't"},
	{"what are", "what're"}, {"what is", "what's"}, {"when is", "when's"},
	{"where did", "where'd"}, {"where is", "where's"}, {"who will", "who'll"},
	{"who is", "who's"}, {"who have", "who've"}, {"why is", "why's"},
	{"will not", "won't"}, {"would not", "wouldn't"}, {"you would", "you'd"},
	{"you will", "you'll"}, {"you are", "you're"},
}

// invert builds Azimuth's contraction map the way Python's
// {v: k for k, v in m.items()} does: a value seen twice keeps the position
// of its first occurrence and the key of its last ("is not" → "isn't", not
// "ain't").
func invert(m []pair) []pair {
	pos := map[string]int{}
	var out []pair
	for _, p := range m {
		if i, ok := pos[p.to]; ok {
			out[i].to = p.from
			continue
		}
		pos[p.to] = len(out)
		out = append(out, pair{p.to, p.from})
	}
	return out
}

// replacer is a compiled contraction or expansion map: a case-insensitive
// alternation of its keys between word boundaries (Go's regexp, like
// Python's re, takes the first alternative that matches), and a lookup that
// tries the matched text, then its lower case, and keeps the matched text's
// first character.
type replacer struct {
	re       *regexp.Regexp
	m        map[string]string
	trailing bool // the pattern ends in a space (CheckList's contract)
}

func newReplacer(m []pair, trailing bool) *replacer {
	keys := make([]string, len(m))
	r := &replacer{m: map[string]string{}, trailing: trailing}
	for i, p := range m {
		keys[i] = regexp.QuoteMeta(p.from)
		r.m[p.from] = p.to
	}
	pat := `(?i)\b(` + strings.Join(keys, "|") + `)\b`
	if trailing {
		pat += " "
	}
	r.re = regexp.MustCompile(pat)
	return r
}

func (r *replacer) replace(s string) string {
	return r.re.ReplaceAllStringFunc(s, func(match string) string {
		key, tail := match, ""
		if r.trailing {
			key, tail = match[:len(match)-1], " "
		}
		v, ok := r.m[key]
		if !ok {
			v = r.m[strings.ToLower(key)]
		}
		// Python keeps match[0] and the replacement from its second
		// character on; every key and value starts with an ASCII letter.
		return key[:1] + v[1:] + tail
	})
}

var (
	expander           = newReplacer(expansions, false)
	checkListContracts = newReplacer(checkListContractions, true)
	azimuthContracts   = newReplacer(invert(expansions), true)
)

// Expand expands the contractions of s (CheckList's and Azimuth's
// expand_contractions).
func Expand(s string) string { return expander.replace(s) }

// Contract contracts the expandable phrases of s with CheckList's 57-entry
// map. A phrase is contracted only when a space follows it, as in CheckList.
func Contract(s string) string { return checkListContracts.replace(s) }

// ContractAzimuth contracts with Azimuth's map: the inverse of the expansion
// map (76 entries).
func ContractAzimuth(s string) string { return azimuthContracts.replace(s) }

// Contractions is CheckList's Perturb.contractions: the expanded and the
// contracted text, each only when it differs from s.
func Contractions(s string, _ *Rand) []string {
	var out []string
	for _, t := range []string{Expand(s), Contract(s)} {
		if t != s {
			out = append(out, t)
		}
	}
	return out
}
