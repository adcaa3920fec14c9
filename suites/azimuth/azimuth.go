// Package azimuth generates Azimuth's behavioural tests (ServiceNow/azimuth,
// REFERENCE 3) from a list of utterances, as a suite in beluga's native
// format: two families (Fuzzy Matching, Punctuation), seven tests and their
// modification types, all invariance tests. Each (test, modification type)
// is one functionality whose class is the family; each perturbed utterance
// is one INV case (the original, then the perturbation) carrying its row in
// meta, so that a case's verdict is Azimuth's verdict for that perturbed
// utterance and failure rates match Azimuth's summary.
//
// The cases are scored with Azimuth's rule (expectation kind "azimuth",
// package metrics): a case fails when the predicted class changes, or when
// the top-class confidence moves by more than the test's threshold (default
// 1: never).
//
// Six tests are exact ports. The typo test follows nlpaug's algorithm with
// Azimuth's parameters but draws from beluga's seeded stream, one per
// (seed, row, typo level, modification type), instead of CPython's random
// shared across a batch; so a typo depends only on its utterance and the
// seed, and differs from the one Azimuth would draw. Typo outputs equal to
// their original (utterances without a word of four or more characters),
// which Azimuth keeps and which can never fail, are left out and counted.
package azimuth

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/suites/perturb"
)

// Families of tests; they name the functionality classes and the smart tags.
const (
	FuzzyMatching = "Fuzzy Matching"
	Punctuation   = "Punctuation"
)

// Neutral tokens of Azimuth's language defaults (azimuth/config.py).
var (
	EnglishPrefixes = []string{"pls", "please", "hello", "greetings"}
	EnglishSuffixes = []string{"pls", "please", "thank you", "appreciated"}
	FrenchPrefixes  = []string{"svp", "s'il vous plaît", "bonjour", "allô"}
	FrenchSuffixes  = []string{"svp", "s'il vous plaît", "merci", "super"}
)

// Options are Azimuth's BehavioralTestingOptions.
type Options struct {
	// Seed of the typo test (Azimuth's default 300).
	Seed uint32
	// TypoLevels is nb_typos_per_utterance: levels 1..TypoLevels are made.
	TypoLevels int
	// Prefixes and Suffixes are the neutral tokens (empty: the language's).
	Prefixes, Suffixes []string
	// Language picks the default neutral tokens: "en" or "fr".
	Language string
	// Thresholds on the confidence delta, per test group (Azimuth's
	// neutral_token, punctuation, fuzzy_matching (contractions) and typo
	// thresholds, default 1).
	NeutralToken, Punctuation, FuzzyMatching, Typo float64
	// Suite header: name, task and labels of the generated suite.
	Name, Task string
	Labels     []string
}

// DefaultOptions are Azimuth's defaults for English, for a binary sentiment
// task.
func DefaultOptions() Options {
	return Options{Seed: 300, TypoLevels: 1, Language: "en", NeutralToken: 1, Punctuation: 1, FuzzyMatching: 1, Typo: 1,
		Task: "sentiment", Labels: []string{"negative", "positive"}}
}

// Modification is one perturbed utterance.
type Modification struct {
	Test   string // Azimuth's test name, e.g. "Neutral Token"
	Family string
	Type   string // modification (perturbation) type, e.g. PreInsertion
	Text   string
	// Perturbations is Azimuth's perturbations field: the words of Text not
	// in the original, sorted.
	Perturbations []string
	Typos         int // typo level, for the typo test
}

// Functionality names the functionality of a test and modification type.
func Functionality(test, typ string) string { return test + ": " + typ }

// description is Azimuth's description with its pretty type names.
var description = map[string]string{
	"Neutral Token": "{type} a neutral token to the utterance.",
	"Question Mark": "{type} question mark at the end of the utterance.",
	"Ending Period": "{type} period at the end of the utterance.",
	"Inner Comma":   "{type} comma inside the utterance.",
	"Inner Period":  "{type} period inside the utterance.",
	"Typos":         "{type} characters in the utterance to create typos.",
	"Contractions":  "{type} expressions in the utterance.",
}

var pretty = map[string]string{"Deletion": "Delete", "Insertion": "Insert", "PostInsertion": "Append", "PreInsertion": "Prepend",
	"Replacement": "Replace", "Swap": "Swap", "Contraction": "Contract", "Expansion": "Expand"}

// order lists every (test, type) in Azimuth's execution order, each test's
// types in the order its function can produce them.
var order = []struct {
	test, family string
	types        []string
}{
	{"Neutral Token", FuzzyMatching, []string{"PreInsertion", "PostInsertion"}},
	{"Question Mark", Punctuation, []string{"Deletion", "Replacement", "PostInsertion"}},
	{"Ending Period", Punctuation, []string{"Deletion", "Replacement", "PostInsertion"}},
	{"Inner Comma", Punctuation, []string{"Deletion", "Insertion"}},
	{"Inner Period", Punctuation, []string{"Deletion", "Insertion"}},
	{"Typos", FuzzyMatching, []string{"Replacement", "Swap", "Deletion"}},
	{"Contractions", FuzzyMatching, []string{"Expansion", "Contraction"}},
}

// FinalPunctuation is Azimuth's remove_or_add_final_punctuation: a final
// sign is deleted; another final . ! ? , is replaced by it (spaces before it
// trimmed); otherwise the sign is appended.
func FinalPunctuation(s string, sign byte) (typ, out string) {
	switch last := s[len(s)-1]; {
	case last == sign:
		return "Deletion", s[:len(s)-1]
	case strings.IndexByte(".!?,", last) >= 0:
		return "Replacement", strings.TrimRight(s[:len(s)-1], " \t\n\r\v\f") + string(sign)
	}
	return "PostInsertion", s + string(sign)
}

// InnerPunctuation is Azimuth's remove_or_add_inside_punctuation: when the
// sign occurs before the last character, every such occurrence is deleted;
// otherwise it is appended to word (n−1)/2 of the whitespace-split
// utterance, which is re-joined with single spaces.
func InnerPunctuation(s string, sign byte) (typ, out string) {
	if strings.IndexByte(s[:len(s)-1], sign) >= 0 {
		return "Deletion", strings.ReplaceAll(s[:len(s)-1], string(sign), "") + s[len(s)-1:]
	}
	words := strings.Fields(s)
	words[(len(words)-1)/2] += string(sign)
	return "Insertion", strings.Join(words, " ")
}

// Perturb returns every modification of one utterance (row is its index in
// the data, which seeds its typos).
func Perturb(text string, row int, opt Options) []Modification {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var out []Modification
	add := func(test, family, typ, t string, typos int) {
		out = append(out, Modification{Test: test, Family: family, Type: typ, Text: t, Perturbations: diff(text, t), Typos: typos})
	}
	pre, suf := opt.neutral()
	for _, tok := range pre {
		add("Neutral Token", FuzzyMatching, "PreInsertion", tok+" "+text, 0)
	}
	for _, tok := range suf {
		add("Neutral Token", FuzzyMatching, "PostInsertion", text+" "+tok, 0)
	}
	typ, t := FinalPunctuation(text, '?')
	add("Question Mark", Punctuation, typ, t, 0)
	typ, t = FinalPunctuation(text, '.')
	add("Ending Period", Punctuation, typ, t, 0)
	typ, t = InnerPunctuation(text, ',')
	add("Inner Comma", Punctuation, typ, t, 0)
	typ, t = InnerPunctuation(text, '.')
	add("Inner Period", Punctuation, typ, t, 0)
	for k := 1; k <= max(opt.TypoLevels, 1); k++ {
		for i, kind := range []typoKind{typoReplacement, typoSwap, typoDeletion} {
			t := typo(text, kind, k, perturb.NewRand(typoSeed(opt.Seed, row, k, i)))
			if t != text {
				add("Typos", FuzzyMatching, order[5].types[i], t, k)
			}
		}
	}
	if t := perturb.Expand(text); t != text {
		add("Contractions", FuzzyMatching, "Expansion", t, 0)
	}
	if t := perturb.ContractAzimuth(text); t != text {
		add("Contractions", FuzzyMatching, "Contraction", t, 0)
	}
	return out
}

func (o Options) neutral() (pre, suf []string) {
	pre, suf = o.Prefixes, o.Suffixes
	dp, ds := EnglishPrefixes, EnglishSuffixes
	if o.Language == "fr" {
		dp, ds = FrenchPrefixes, FrenchSuffixes
	}
	if len(pre) == 0 {
		pre = dp
	}
	if len(suf) == 0 {
		suf = ds
	}
	return pre, suf
}

func (o Options) threshold(test string) float64 {
	switch test {
	case "Neutral Token":
		return o.NeutralToken
	case "Typos":
		return o.Typo
	case "Contractions":
		return o.FuzzyMatching
	}
	return o.Punctuation
}

// typoSeed mixes the seed with the utterance's row, the typo level and the
// augmenter, so that each typo has its own stream.
func typoSeed(seed uint32, row, k, kind int) uint32 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%d/%d/%d/%d", seed, row, k, kind)
	return h.Sum32()
}

// diff is Azimuth's get_utterances_diff, sorted.
func diff(orig, pert string) []string {
	have := map[string]bool{}
	for _, w := range strings.Fields(orig) {
		have[w] = true
	}
	set := map[string]bool{}
	for _, w := range strings.Fields(pert) {
		if !have[w] {
			set[w] = true
		}
	}
	out := make([]string, 0, len(set))
	for w := range set {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// Meta is what a case of an Azimuth suite carries in its meta field.
type Meta struct {
	Row           int      `json:"row"`
	Perturbations []string `json:"perturbations"`
	Typos         int      `json:"typos,omitempty"`
}

// Report counts what Generate made.
type Report struct {
	Utterances int // utterances read
	Empty      int // empty utterances, left out
	// Cases per functionality, in suite order.
	Cases map[string]int
	// Unchanged counts typo outputs equal to their original, left out.
	Unchanged int
	// Missing lists the (test, type) pairs that no utterance produced.
	Missing []string
}

// Generate builds the Azimuth suite of texts; texts[i] is row i.
func Generate(texts []string, opt Options) (*suites.Suite, Report, error) {
	rep := Report{Utterances: len(texts), Cases: map[string]int{}}
	byName := map[string]*suites.Functionality{}
	for _, o := range order {
		for _, typ := range o.types {
			name := Functionality(o.test, typ)
			byName[name] = &suites.Functionality{Name: name, Class: o.family, Type: suites.INV,
				Description: strings.ReplaceAll(description[o.test], "{type}", pretty[typ]),
				Expect:      suites.Expectation{Kind: suites.ExpectAzimuth, Tolerance: opt.threshold(o.test), Agg: suites.AggAllExceptFirst}}
		}
	}
	for row, text := range texts {
		if strings.TrimSpace(text) == "" {
			rep.Empty++
			continue
		}
		mods := Perturb(text, row, opt)
		rep.Unchanged += 3*max(opt.TypoLevels, 1) - countTest(mods, "Typos")
		for _, m := range mods {
			f := byName[Functionality(m.Test, m.Type)]
			meta, err := json.Marshal(Meta{Row: row, Perturbations: m.Perturbations, Typos: m.Typos})
			if err != nil {
				return nil, rep, err
			}
			f.Cases = append(f.Cases, &suites.Case{ID: len(f.Cases), Inputs: []suites.Input{{Text: text}, {Text: m.Text}}, Meta: meta})
		}
	}
	s := &suites.Suite{Name: opt.Name, Task: opt.Task, Labels: opt.Labels}
	if s.Name == "" {
		s.Name = "azimuth"
	}
	for _, o := range order {
		for _, typ := range o.types {
			f := byName[Functionality(o.test, typ)]
			if len(f.Cases) == 0 {
				rep.Missing = append(rep.Missing, f.Name)
				continue
			}
			rep.Cases[f.Name] = len(f.Cases)
			s.Functionalities = append(s.Functionalities, f)
		}
	}
	if len(s.Functionalities) == 0 {
		return nil, rep, fmt.Errorf("azimuth: none of the %d utterances could be perturbed (%d empty)", rep.Utterances, rep.Empty)
	}
	return s, rep, nil
}

func countTest(mods []Modification, test string) int {
	n := 0
	for _, m := range mods {
		if m.Test == test {
			n++
		}
	}
	return n
}
