package template

import (
	"testing"

	"github.com/beluga-nlp/beluga/suites/lexicon"
)

// FuzzParse checks that any template either parses or is an error, and that
// a parsed template fills without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"I {neg} {a:x} {x1}.", "{{}}", "{p.name}", "{", "}", "{a:}", "{mask}", "{an:b.c}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs, err := parse(s)
		if err != nil {
			return
		}
		vals := map[string]lexicon.Entry{}
		for _, sg := range segs {
			if sg.slot != "" {
				vals[sg.slot] = lexicon.Entry{Text: "v", Fields: map[string]string{sg.field: "f"}}
				if sg.field == "" {
					vals[sg.slot] = lexicon.Entry{Text: "v"}
				}
			}
		}
		if _, err := fill(segs, vals); err != nil {
			t.Fatalf("parsed %q but could not fill it: %v", s, err)
		}
	})
}
