package lexicon

import "testing"

func TestBuiltinSizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
	}{
		{"male", 100}, {"female", 100}, {"first_name", 100}, {"first_pronoun", 100}, {"last_name", 100},
		{"country", 215}, {"nationality", 215}, {"city", 200}, {"religion", 14}, {"religion_adj", 22},
		{"sexual_adj", 14}, {"profession", len(professions)},
		{"names_men", 1000}, {"names_women", 1000}, {"names_last", 1000},
	} {
		l, ok := Builtin(tc.name)
		if !ok || len(l) != tc.n {
			t.Errorf("%s: %d entries (present %v), want %d", tc.name, len(l), ok, tc.n)
		}
	}
	if _, ok := Builtin("no_such_list"); ok {
		t.Error("unknown lexicon reported present")
	}
}

func TestObjectEntries(t *testing.T) {
	l, _ := Builtin("first_pronoun")
	if l[0].Fields["name"] != "Michael" || l[0].Fields["pronoun"] != "he" {
		t.Fatalf("first_pronoun[0] = %v", l[0])
	}
	if got := Strings("country")[2]; got != "United States" {
		t.Errorf("country[2] = %q", got)
	}
}
