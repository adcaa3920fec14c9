package perturb

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/beluga-nlp/beluga/suites/lexicon"
)

// AddTypos is CheckList's add_typos: typos positions drawn with replacement
// from [0, len−1), each swapping the character there with the next, in
// order. It does not apply to texts shorter than two characters.
func AddTypos(s string, typos int, r *Rand) (string, bool) {
	rs := []rune(s)
	if len(rs) < 2 {
		return "", false
	}
	for _, i := range r.Choice(len(rs)-1, typos) {
		rs[i], rs[i+1] = rs[i+1], rs[i]
	}
	return string(rs), true
}

// StripPunctuation removes the final punctuation (and the spaces around it),
// as CheckList's strip_punctuation drops trailing spaCy PUNCT tokens.
func StripPunctuation(s string) string {
	return strings.TrimRightFunc(s, func(c rune) bool { return unicode.IsPunct(c) || unicode.IsSpace(c) })
}

// Punctuation is CheckList's Perturb.punctuation: the text without its final
// punctuation, and the stripped text ending in a period, each only when it
// differs from s.
func Punctuation(s string, _ *Rand) []string {
	st := StripPunctuation(s)
	if st == "" {
		return nil
	}
	var out []string
	if st != s {
		out = append(out, st)
	}
	if st+"." != s {
		out = append(out, st+".")
	}
	return out
}

var (
	namesOnce                    sync.Once
	menSet, womenSet, lastSet    map[string]bool
	menList, womenList, lastList []string
	placeRe                      *regexp.Regexp
	citySet, countrySet          map[string]bool
)

func loadNames() {
	set := func(l []string) map[string]bool {
		m := make(map[string]bool, len(l))
		for _, s := range l {
			m[s] = true
		}
		return m
	}
	menList, womenList, lastList = lexicon.Strings("names_men"), lexicon.Strings("names_women"), lexicon.Strings("names_last")
	menSet, womenSet, lastSet = set(menList), set(womenList), set(lastList)
	cities, countries := lexicon.Strings("city"), lexicon.Strings("country")
	citySet, countrySet = set(cities), set(countries)
	// One alternation of every place, longest first, so that "New York
	// City" wins over "New York" at the same position.
	all := append(append([]string(nil), cities...), countries...)
	sortByLenDesc(all)
	quoted := make([]string, len(all))
	for i, p := range all {
		quoted[i] = regexp.QuoteMeta(p)
	}
	placeRe = regexp.MustCompile(`\b(` + strings.Join(quoted, "|") + `)\b`)
}

func sortByLenDesc(xs []string) {
	// Stable insertion by length keeps the lexicon order among equals.
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && len(xs[j]) > len(xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

var wordRe = regexp.MustCompile(`[\p{L}][\p{L}'-]*`)

// findNames finds person names as CheckList keeps spaCy's PERSON entities:
// a capitalised first name from CheckList's name lists, with the following
// capitalised word when it is a known last name. Without a named-entity
// tagger a capitalised word that is also a name ("Will", "May") counts.
func findNames(s string) (names []string, female []bool) {
	namesOnce.Do(loadNames)
	locs := wordRe.FindAllStringIndex(s, -1)
	seen := map[string]bool{}
	for i, l := range locs {
		w := s[l[0]:l[1]]
		if !unicode.IsUpper([]rune(w)[0]) {
			continue
		}
		isMan, isWoman := menSet[w], womenSet[w]
		if !isMan && !isWoman {
			continue
		}
		name := w
		if i+1 < len(locs) && s[l[1]:locs[i+1][0]] == " " {
			next := s[locs[i+1][0]:locs[i+1][1]]
			if lastSet[next] {
				name = w + " " + next
			}
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
			female = append(female, !isMan) // men wins, as in CheckList
		}
	}
	return names, female
}

// ChangeNames is CheckList's change_names: every person name found is
// replaced (all its occurrences) by n names drawn with replacement from the
// first 90+n names of the same gender — a full name by a drawn first name and
// a drawn last name — and more than n results are subsampled to n.
//
// CheckList pairs the drawn last names with the first 90+n names in list
// order (zip over the unsampled list), so its full-name replacements are
// always the same ten first names; this port pairs them with the drawn ones.
func ChangeNames(s string, n int, r *Rand) []string {
	names, female := findNames(s)
	var ret []string
	for i, x := range names {
		pool := menList
		if female[i] {
			pool = womenList
		}
		pool = pool[:min(90+n, len(pool))]
		firsts := r.Choice(len(pool), n)
		use := make([]string, n)
		for j, k := range firsts {
			use[j] = pool[k]
		}
		if strings.Contains(x, " ") {
			lasts := lastList[:min(90+n, len(lastList))]
			for j, k := range r.Choice(len(lasts), n) {
				use[j] += " " + lasts[k]
			}
		}
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(x) + `\b`)
		for _, y := range use {
			ret = append(ret, re.ReplaceAllLiteralString(s, y))
		}
	}
	return subsample(ret, n, r)
}

// ChangeLocation is CheckList's change_location: every city of its city list
// (→ n drawn from the first 100 cities) or country (→ n drawn from the first
// 50 countries) found in s is replaced, all occurrences at once; more than n
// results are subsampled to n. Places are recognised by exact,
// case-sensitive match against the lexicons (CheckList asks spaCy for GPE
// entities and then checks the same lists).
func ChangeLocation(s string, n int, r *Rand) []string {
	namesOnce.Do(loadNames)
	seen := map[string]bool{}
	var ret []string
	for _, x := range placeRe.FindAllString(s, -1) {
		if seen[x] {
			continue
		}
		seen[x] = true
		var pool []string
		switch {
		case citySet[x]:
			pool = lexicon.Strings("city")[:100]
		case countrySet[x]:
			pool = lexicon.Strings("country")[:50]
		}
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(x) + `\b`)
		for _, k := range r.Choice(len(pool), n) {
			ret = append(ret, re.ReplaceAllLiteralString(s, pool[k]))
		}
	}
	return subsample(ret, n, r)
}

// numberTokens finds the integers of s that a tokenizer would split off as
// tokens of digits only: a run of digits not joined to letters, and not part
// of a decimal or a thousands group ("3.5", "1,000").
func numberTokens(s string) []string {
	var out []string
	rs := []rune(s)
	isAlnum := func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }
	for i := 0; i < len(rs); {
		if !unicode.IsDigit(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && unicode.IsDigit(rs[j]) {
			j++
		}
		ok := true
		if i > 0 && (isAlnum(rs[i-1]) || ((rs[i-1] == '.' || rs[i-1] == ',') && i > 1 && unicode.IsDigit(rs[i-2]))) {
			ok = false
		}
		if j < len(rs) && (isAlnum(rs[j]) || ((rs[j] == '.' || rs[j] == ',') && j+1 < len(rs) && unicode.IsDigit(rs[j+1]))) {
			ok = false
		}
		if ok {
			out = append(out, string(rs[i:j]))
		}
		i = j
	}
	return out
}

// ChangeNumber is CheckList's change_number: each integer other than 2 and 4
// ("this is 4 you") is replaced by up to n of 3n draws from
// randint(−min(c, x−1), c+1) added to x, c = int(0.2x)+1, keeping those that
// change the number; more than n results are subsampled to n.
func ChangeNumber(s string, n int, r *Rand) []string {
	var ret []string
	for _, x := range numberTokens(s) {
		if x == "2" || x == "4" {
			continue
		}
		v, err := strconv.Atoi(x)
		if err != nil || v > 1<<40 {
			continue
		}
		change := int(float64(v)*0.2) + 1
		lo, hi := -min(change, v-1), change+1
		re := regexp.MustCompile(`\b` + x + `\b`)
		var subs []string
		for k := 0; k < 3*n; k++ {
			t := lo + r.Intn(hi-lo)
			if y := strconv.Itoa(v + t); y != x {
				subs = append(subs, y)
			}
		}
		if len(subs) > n {
			subs = subs[:n]
		}
		for _, y := range subs {
			ret = append(ret, re.ReplaceAllLiteralString(s, y))
		}
	}
	return subsample(ret, n, r)
}

var (
	copulas    = map[string]bool{"is": true, "was": true, "are": true, "were": true, "am": true}
	modals     = map[string]string{"can": "can't", "could": "couldn't", "would": "wouldn't", "will": "won't", "should": "shouldn't", "must": "mustn't", "might": "mightn't"}
	perfects   = map[string]string{"have": "haven't", "has": "hasn't", "had": "hadn't"}
	negations  = map[string]bool{"not": true, "never": true, "no": true, "cannot": true, "nothing": true, "nobody": true, "none": true}
	tokenRe    = regexp.MustCompile(`\S+`)
	trailPunct = func(c rune) bool { return unicode.IsPunct(c) && c != '\'' }
)

// AddNegation negates the first verb that can be negated without a parser:
// a copula gets "not" after it (is → is not), a modal its negative
// contraction (can → can't, will → won't), and a perfect auxiliary followed
// by "been" or a past participle in -ed/-en its contraction (has been →
// hasn't been). It does not apply to texts that already hold a negation, to
// questions with a copula or starting with "how" (as CheckList's
// add_negation), or to texts that would need do-support ("I liked it"):
// CheckList conjugates those with a parser and pattern.en.
func AddNegation(s string) (string, bool) {
	locs := tokenRe.FindAllStringIndex(s, -1)
	words := make([]string, len(locs))
	for i, l := range locs {
		w := strings.ToLower(strings.TrimRightFunc(s[l[0]:l[1]], trailPunct))
		if negations[w] || strings.HasSuffix(w, "n't") || w == "n't" {
			return "", false
		}
		words[i] = w
	}
	question := strings.Contains(s, "?")
	if len(words) > 0 && words[0] == "how" && question {
		return "", false
	}
	for i, w := range words {
		l := locs[i]
		tok := s[l[0]:l[1]]
		bare := strings.TrimRightFunc(tok, trailPunct)
		if bare != tok || i+1 == len(words) {
			continue // a verb at the end of a clause has nothing to negate after it
		}
		switch {
		case copulas[w]:
			if question {
				return "", false
			}
			return s[:l[1]] + " not" + s[l[1]:], true
		case modals[w] != "":
			return s[:l[0]] + keepCase(bare, modals[w]) + s[l[1]:], true
		case perfects[w] != "":
			next := words[i+1]
			if next == "been" || (len(next) > 3 && (strings.HasSuffix(next, "ed") || strings.HasSuffix(next, "en"))) {
				return s[:l[0]] + keepCase(bare, perfects[w]) + s[l[1]:], true
			}
		}
	}
	return "", false
}

// keepCase gives repl the capitalisation of orig's first letter.
func keepCase(orig, repl string) string {
	if orig != "" && unicode.IsUpper([]rune(orig)[0]) {
		rs := []rune(repl)
		rs[0] = unicode.ToUpper(rs[0])
		return string(rs)
	}
	return repl
}
