package azimuth

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/suites/perturb"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.jsonl")

func TestFinalPunctuation(t *testing.T) {
	for _, tc := range []struct {
		in        string
		sign      byte
		typ, want string
	}{
		{"Is it good?", '?', "Deletion", "Is it good"},
		{"It is good !", '?', "Replacement", "It is good?"}, // spaces before the old sign go
		{"It is good,", '.', "Replacement", "It is good."},
		{"It is good", '?', "PostInsertion", "It is good?"},
		{"It is good.", '.', "Deletion", "It is good"},
		{"It is good;", '.', "PostInsertion", "It is good;."}, // ; is not one of . ! ? ,
		{"x", '.', "PostInsertion", "x."},
	} {
		typ, got := FinalPunctuation(tc.in, tc.sign)
		if typ != tc.typ || got != tc.want {
			t.Errorf("FinalPunctuation(%q, %q) = %s %q, want %s %q", tc.in, tc.sign, typ, got, tc.typ, tc.want)
		}
	}
}

func TestInnerPunctuation(t *testing.T) {
	for _, tc := range []struct {
		in        string
		sign      byte
		typ, want string
	}{
		{"Well, it is, good,", ',', "Deletion", "Well it is good,"}, // the last character is kept
		{"I love this food", ',', "Insertion", "I love, this food"},
		{"I  love   this food.", ',', "Insertion", "I love, this food."}, // re-joined with single spaces
		{"hello,", ',', "Insertion", "hello,,"},                          // only the final sign: Azimuth adds one
		{"Dr. Who is here.", '.', "Deletion", "Dr Who is here."},
		{"one two three", '.', "Insertion", "one two. three"},
	} {
		typ, got := InnerPunctuation(tc.in, tc.sign)
		if typ != tc.typ || got != tc.want {
			t.Errorf("InnerPunctuation(%q, %q) = %s %q, want %s %q", tc.in, tc.sign, typ, got, tc.typ, tc.want)
		}
	}
}

func sortedRunes(s string) string {
	r := []rune(strings.ToLower(s))
	sort.Slice(r, func(i, j int) bool { return r[i] < r[j] })
	return string(r)
}

func TestTypos(t *testing.T) {
	const text = "Azimuth's typos, really: wonderful!"
	for seed := uint32(0); seed < 50; seed++ {
		r := func() *perturb.Rand { return perturb.NewRand(seed) }
		swap := typo(text, typoSwap, 1, r())
		if len(swap) != len(text) || sortedRunes(swap) != sortedRunes(text) {
			t.Fatalf("swap %q is not a permutation of %q", swap, text)
		}
		for i := range text { // case pattern and punctuation stay put
			if (text[i] >= 'A' && text[i] <= 'Z') != (swap[i] >= 'A' && swap[i] <= 'Z') || (!isWord(rune(text[i])) && swap[i] != text[i]) {
				t.Fatalf("swap %q moved case or punctuation of %q", swap, text)
			}
		}
		del := typo(text, typoDeletion, 1, r())
		if len(del) != len(text)-1 {
			t.Fatalf("deletion %q removed %d characters", del, len(text)-len(del))
		}
		rep := typo(text, typoReplacement, 1, r())
		changed := 0
		for i := range text {
			if rep[i] != text[i] {
				changed++
				if !strings.ContainsRune(string(neighbours[rune(text[i])]), rune(rep[i])) {
					t.Fatalf("replacement %q: %q is not a keyboard neighbour of %q", rep, rep[i], text[i])
				}
			}
		}
		if changed != 1 {
			t.Fatalf("replacement %q changed %d characters", rep, changed)
		}
		// Words of 3 characters or fewer are never touched.
		for _, kind := range []typoKind{typoReplacement, typoSwap, typoDeletion} {
			if got := typo("I am so sad !", kind, 1, r()); got != "I am so sad !" {
				t.Fatalf("short words got a typo: %q", got)
			}
		}
	}
	// Level 2: ceil(0.3·2 tokens) = 1 word changes, ceil(0.2·9) = 2 characters.
	got := typo("wonderful marvellous", typoDeletion, 2, perturb.NewRand(1))
	if len(got) != len("wonderful marvellous")-2 {
		t.Errorf("level-2 deletion %q", got)
	}
	if len(neighbours['a']) == 0 || strings.ContainsRune(string(neighbours['a']), 'a') || !strings.ContainsRune(string(neighbours['a']), 'A') {
		t.Errorf("neighbours of a: %q", string(neighbours['a']))
	}
}

func TestPerturbApplicability(t *testing.T) {
	opt := DefaultOptions()
	kinds := func(text string) []string {
		var out []string
		for _, m := range Perturb(text, 0, opt) {
			out = append(out, Functionality(m.Test, m.Type))
		}
		return out
	}
	got := kinds("I can't say it is great")
	want := []string{
		"Neutral Token: PreInsertion", "Neutral Token: PreInsertion", "Neutral Token: PreInsertion", "Neutral Token: PreInsertion",
		"Neutral Token: PostInsertion", "Neutral Token: PostInsertion", "Neutral Token: PostInsertion", "Neutral Token: PostInsertion",
		"Question Mark: PostInsertion", "Ending Period: PostInsertion", "Inner Comma: Insertion", "Inner Period: Insertion",
		"Typos: Replacement", "Typos: Swap", "Typos: Deletion", "Contractions: Expansion", "Contractions: Contraction",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// No contraction to expand or contract, no long word: those tests must not apply.
	for _, k := range kinds("so bad, sad.") {
		if strings.HasPrefix(k, "Contractions") || strings.HasPrefix(k, "Typos") {
			t.Errorf("%s applied to %q", k, "so bad, sad.")
		}
	}
	if m := Perturb("   ", 0, opt); m != nil {
		t.Errorf("empty utterance perturbed: %v", m)
	}
	m := Perturb("hello there", 0, opt)
	if m[0].Text != "pls hello there" || !reflect.DeepEqual(m[0].Perturbations, []string{"pls"}) {
		t.Errorf("first modification %+v", m[0])
	}
	fr := opt
	fr.Language = "fr"
	if m := Perturb("salut", 0, fr); m[3].Text != "allô salut" {
		t.Errorf("French prefixes: %q", m[3].Text)
	}
}

var utterances = []string{
	"it 's a charming and often affecting journey .",
	"I can't believe how good this is!",
	"Is the service any good?",
	"Well, the seats were fine, the food was not.",
	"",
	"ok",
}

func TestGenerateGoldenAndDeterministic(t *testing.T) {
	gen := func() []byte {
		s, _, err := Generate(utterances, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := suites.Write(&b, s); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := gen(), gen()
	if !bytes.Equal(a, b) {
		t.Fatal("two generations with one seed differ")
	}
	if *update {
		os.WriteFile("testdata/golden.jsonl", a, 0o644)
	}
	want, err := os.ReadFile("testdata/golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, want) {
		t.Errorf("suite differs from testdata/golden.jsonl (run -update after checking):\n%s", a)
	}
	s, err := suites.Read(bytes.NewReader(a), "golden.jsonl")
	if err != nil {
		t.Fatalf("the generated suite does not read back: %v", err)
	}
	_, rep, _ := Generate(utterances, DefaultOptions())
	if rep.Empty != 1 || rep.Utterances != 6 || rep.Unchanged != 3 {
		t.Errorf("report %+v (the empty line, and ok's three typos, are left out)", rep)
	}
	if got := rep.Cases["Neutral Token: PreInsertion"]; got != 20 {
		t.Errorf("%d pre-insertion cases, want 5 utterances × 4 prefixes", got)
	}
	for _, f := range s.Functionalities {
		if f.Type != suites.INV || f.Expect.Kind != suites.ExpectAzimuth || f.Expect.Tolerance != 1 {
			t.Errorf("%s: %s %+v", f.Name, f.Type, f.Expect)
		}
		if f.Class != FuzzyMatching && f.Class != Punctuation {
			t.Errorf("%s: class %q", f.Name, f.Class)
		}
	}
	other := DefaultOptions()
	other.Seed = 301
	s2, _, _ := Generate(utterances, other)
	var c bytes.Buffer
	suites.Write(&c, s2)
	if bytes.Equal(a, c.Bytes()) {
		t.Error("another seed gave the same typos")
	}
}

func TestGenerateNothing(t *testing.T) {
	if _, _, err := Generate([]string{"", " "}, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "none of the 2 utterances") {
		t.Errorf("err = %v", err)
	}
}

func BenchmarkGenerate(b *testing.B) {
	texts := make([]string, 200)
	for i := range texts {
		texts[i] = utterances[i%4]
	}
	for b.Loop() {
		if _, _, err := Generate(texts, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
}
