// Package lexicon holds the word lists that suite templates fill in and that
// perturbations draw from: CheckList's built-in lexicons (first names by
// gender, last names, countries, nationalities, cities, religions, sexual
// identities), a list of professions, and the name lists CheckList's Perturb
// uses to recognise people in text.
//
// The lists from CheckList (github.com/marcotcr/checklist, MIT licence,
// commit 4e6e5e3) are a documented subset of its data files, written into
// builtin.json by gen_lexicons.py: every list of lexicons/basic.json except
// that only the first 200 of its 1,000 US cities are kept, and the first
// 1,000 of each of names.json's men, women and last-name lists. CheckList's
// editor replaces some of these lists at run time with Wikidata lists from a
// pickle (wikidata.pkl) that is not available; the basic.json lists are the
// ones its perturbations use.
package lexicon

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// Entry is one lexicon value: a text, or an object with named fields
// (first_pronoun's {"name": "Michael", "pronoun": "he"}), read in templates
// as {first_pronoun.name}.
type Entry struct {
	Text   string
	Fields map[string]string
}

// String is the entry's text, or its fields when it is an object.
func (e Entry) String() string {
	if e.Fields == nil {
		return e.Text
	}
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := "{"
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += k + ": " + e.Fields[k]
	}
	return s + "}"
}

// UnmarshalJSON reads a string or an object of strings.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*e = Entry{Text: s}
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("lexicon entry %s: want a string or an object of strings", b)
	}
	*e = Entry{Fields: m}
	return nil
}

// Texts wraps plain strings as entries.
func Texts(ss ...string) []Entry {
	out := make([]Entry, len(ss))
	for i, s := range ss {
		out[i] = Entry{Text: s}
	}
	return out
}

//go:embed builtin.json
var builtinJSON []byte

// professions is the project's own list (CheckList builds its profession
// lists in its notebooks with masked-LM suggestions, not in a data file).
var professions = []string{
	"accountant", "actor", "architect", "artist", "astronaut", "athlete", "attorney", "baker",
	"banker", "carpenter", "cashier", "chef", "chemist", "dentist", "designer", "detective",
	"doctor", "economist", "editor", "electrician", "engineer", "farmer", "firefighter",
	"historian", "journalist", "judge", "lawyer", "librarian", "mechanic", "musician", "nurse",
	"painter", "pharmacist", "photographer", "physician", "pilot", "plumber", "poet",
	"police officer", "politician", "professor", "programmer", "psychologist", "scientist",
	"secretary", "singer", "soldier", "surgeon", "teacher", "translator", "waiter", "writer",
}

var (
	loadOnce sync.Once
	builtin  map[string][]Entry
)

func load() {
	var raw map[string][]Entry
	if err := json.Unmarshal(builtinJSON, &raw); err != nil {
		// builtin.json is compiled in and covered by the tests.
		panic(fmt.Sprintf("lexicon: builtin.json: %v", err))
	}
	raw["profession"] = Texts(professions...)
	builtin = raw
}

// Builtin returns the built-in lexicon called name. The slice is shared:
// callers must not modify it.
func Builtin(name string) ([]Entry, bool) {
	loadOnce.Do(load)
	l, ok := builtin[name]
	return l, ok
}

// Strings returns the texts of the built-in lexicon called name (nil when
// there is none).
func Strings(name string) []string {
	l, _ := Builtin(name)
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, e.Text)
	}
	return out
}

// Names lists the built-in lexicons, sorted, for help texts and errors.
func Names() []string {
	loadOnce.Do(load)
	out := make([]string, 0, len(builtin))
	for k := range builtin {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
