package azimuth

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/beluga-nlp/beluga/suites/perturb"
)

// keyboard is nlpaug's QWERTY map (res/char/keyboard/en.json) with Azimuth's
// include_special_char=False: only letters and digits, as keys and as
// neighbours. ("a" lists itself, as in nlpaug's file.)
var keyboard = map[rune]string{
	'1': "2qw", '2': "13qwe", '3': "24we", '4': "35er", '5': "46rty", '6': "57tyu",
	'7': "68yui", '8': "79uio", '9': "80iop",
	'q': "12was", 'w': "123qeasd", 'e': "234wrsdf", 'r': "345etdfg", 't': "456ryfgh",
	'y': "567tughj", 'u': "678tihjk", 'i': "789uojkl", 'o': "890ipkl", 'p': "90ol",
	'a': "qwaszx", 's': "qweadzxc", 'd': "wersfxcv", 'f': "ertdgcvb", 'g': "rtyfhvbn",
	'h': "tyugjbnm", 'j': "yuihknm", 'k': "uiojlm", 'l': "iopk",
	'z': "asx", 'x': "asdzc", 'c': "sdfxv", 'v': "dfgcb", 'b': "fghvn", 'n': "ghjbm", 'm': "hjkn",
}

// neighbours is nlpaug's Keyboard model with upper_case=True: a key and its
// upper case both map to every neighbour in both cases, without the key
// itself, sorted.
var neighbours = func() map[rune][]rune {
	out := map[rune][]rune{}
	for k, vs := range keyboard {
		for _, key := range []rune{k, unicode.ToUpper(k)} {
			set := map[rune]bool{}
			for _, v := range vs {
				set[v], set[unicode.ToUpper(v)] = true, true
			}
			delete(set, key)
			var l []rune
			for v := range set {
				l = append(l, v)
			}
			sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
			out[key] = l
		}
	}
	return out
}()

// isWord is Python's \w: a letter, a number or an underscore.
func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' }

// typoKind is one of nlpaug's character augmenters Azimuth uses.
type typoKind int

const (
	typoReplacement typoKind = iota // KeyboardAug
	typoSwap                        // RandomCharAug(action="swap")
	typoDeletion                    // RandomCharAug(action="delete")
)

// typo applies one augmenter with level k (aug_word_max=k, aug_char_p=0.1k,
// min_char=4) the way nlpaug does: the text is split into word runs and
// single other characters (spaces dropped); ceil(0.3·tokens) words, clamped
// to [1, k], are drawn among the words of 4+ characters; in each,
// ceil(0.1k·len) characters, clamped to [1, 10], are drawn and changed.
// Words are changed in place, so the text keeps its spaces and punctuation
// (Azimuth re-imposes them after nlpaug). The random stream is beluga's
// (see package doc), not CPython's.
func typo(text string, kind typoKind, k int, r *perturb.Rand) string {
	rs := []rune(text)
	type span struct{ start, end int }
	var tokens []span
	for i := 0; i < len(rs); {
		switch {
		case isWord(rs[i]):
			j := i
			for j < len(rs) && isWord(rs[j]) {
				j++
			}
			tokens = append(tokens, span{i, j})
			i = j
		case unicode.IsSpace(rs[i]):
			i++
		default:
			tokens = append(tokens, span{i, i + 1})
			i++
		}
	}
	var eligible []int
	for i, t := range tokens {
		if t.end-t.start >= 4 {
			eligible = append(eligible, i)
		}
	}
	wordCnt := clamp(int(math.Ceil(0.3*float64(len(tokens)))), 1, k)
	if len(eligible) == 0 {
		return text
	}
	wordCnt = min(wordCnt, len(eligible))
	chosen := map[int]bool{}
	for _, i := range r.Sample(len(eligible), wordCnt) {
		chosen[eligible[i]] = true
	}
	p := 0.1 * float64(k)
	var out strings.Builder
	last := 0
	for ti, t := range tokens {
		if !chosen[ti] {
			continue
		}
		chars := append([]rune(nil), rs[t.start:t.end]...)
		var cands []int
		for ci, c := range chars {
			if kind != typoReplacement || len(neighbours[c]) > 0 {
				cands = append(cands, ci)
			}
		}
		charCnt := min(clamp(int(math.Ceil(p*float64(len(chars)))), 1, 10), len(cands))
		if charCnt == 0 {
			continue
		}
		sel := r.Sample(len(cands), charCnt)
		for i := range sel {
			sel[i] = cands[sel[i]]
		}
		switch kind {
		case typoSwap:
			for _, ci := range sel {
				pos := ci - 1
				switch {
				case ci == 0:
					pos = 1
				case ci == len(chars)-1:
					pos = ci - 1
				case r.Intn(2) == 1:
					pos = ci + 1
				}
				upI, upP := unicode.IsUpper(chars[ci]), unicode.IsUpper(chars[pos])
				chars[ci], chars[pos] = chars[pos], chars[ci]
				chars[ci], chars[pos] = setCase(chars[ci], upI), setCase(chars[pos], upP)
			}
		case typoDeletion:
			sort.Sort(sort.Reverse(sort.IntSlice(sel)))
			for _, ci := range sel {
				chars = append(chars[:ci], chars[ci+1:]...)
			}
		case typoReplacement:
			sort.Ints(sel)
			for _, ci := range sel {
				nb := neighbours[chars[ci]]
				chars[ci] = nb[r.Intn(len(nb))]
			}
		}
		out.WriteString(string(rs[last:t.start]))
		out.WriteString(string(chars))
		last = t.end
	}
	out.WriteString(string(rs[last:]))
	return out.String()
}

func setCase(c rune, upper bool) rune {
	if upper {
		return unicode.ToUpper(c)
	}
	return unicode.ToLower(c)
}

func clamp(x, lo, hi int) int { return max(lo, min(x, hi)) }
