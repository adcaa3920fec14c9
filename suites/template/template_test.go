package template

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/suites"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func write(t *testing.T, s *suites.Suite) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := suites.Write(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

// The issue's example must be accepted as written and give the 24 cases of
// the Cartesian product.
func TestIssueExample(t *testing.T) {
	res, err := Load("testdata/issue14.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Suite
	if len(s.Functionalities) != 1 || s.NumCases() != 24 {
		t.Fatalf("%d functionalities, %d cases; want 1, 24", len(s.Functionalities), s.NumCases())
	}
	f := s.Functionalities[0]
	if f.Name != "negated positive" || f.Class != "Negation" || f.Type != suites.MFT {
		t.Errorf("functionality %+v", f)
	}
	first, last := f.Cases[0], f.Cases[23]
	if first.Inputs[0].Text != "I did not love the food." || last.Inputs[0].Text != "I can not say I enjoy the seat." {
		t.Errorf("first %q, last %q", first.Inputs[0].Text, last.Inputs[0].Text)
	}
	for _, c := range f.Cases {
		if l, _ := c.LabelFor(0); l.Class != 0 {
			t.Fatalf("case %d label %v, want negative (0)", c.ID, l)
		}
	}
	out := write(t, s)
	golden(t, "issue14.jsonl", out)
	// The output is a suite like any other.
	back, err := suites.Read(bytes.NewReader(out), "issue14.jsonl")
	if err != nil || back.NumCases() != 24 {
		t.Fatalf("re-reading: %v", err)
	}
}

func TestSyntaxGolden(t *testing.T) {
	res, err := Load("testdata/syntax.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "syntax.jsonl", write(t, res.Suite))
	byName := func(n string) []string {
		var out []string
		for _, c := range res.Suite.Functionality(n).Cases {
			var ins []string
			for _, in := range c.Inputs {
				ins = append(ins, in.Text)
			}
			out = append(out, strings.Join(ins, " | "))
		}
		return out
	}
	for _, tc := range []struct {
		fn   string
		want []string
	}{
		{"articles", []string{"It is an owl, not an owl.", "It is an owl, not a cat.", "It is a cat, not an owl.", "It is a cat, not a cat."}},
		{"one placeholder twice is one value", []string{"Ann said Ann was Ann's friend.", "Ann said Ann was Bob's friend.", "Bob said Bob was Ann's friend.", "Bob said Bob was Bob's friend."}},
		{"object fields and braces", []string{"{literal} Ann and she", "{literal} Bob and he"}},
		{"multi-input DIR", []string{"It is a good seat. | It is a very good seat.", "It is a good seat. | It is an extremely good seat.",
			"It is an awful seat. | It is a very awful seat.", "It is an awful seat. | It is an extremely awful seat."}},
		// "I is here." has nothing to expand or contract: the rule must not apply.
		{"perturbed INV", []string{"I can't be here. | I cannot be here.", "it is here. | it's here.", "it can't be here. | it cannot be here.",
			"the food can't be here. | the food cannot be here."}},
	} {
		got := byName(tc.fn)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.fn, got, tc.want)
		}
	}
	if n := len(res.Suite.Functionality("per-template labels and built-ins").Cases); n != 22+1 {
		t.Errorf("built-in religion_adj (22) + 1: %d cases", n)
	}
	if got := byName("sampled"); len(got) == 0 || len(got) > 5 {
		t.Errorf("sampled: %q", got)
	}
	for _, s := range byName("sampled") {
		if f := strings.Fields(s); f[0] == f[1] {
			t.Errorf("remove_duplicates kept %q", s)
		}
	}
	var warned bool
	for _, w := range res.Warnings {
		if strings.Contains(w, "contractions applied to 4 of 6 filled templates; 2 skipped") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no count warning for the perturbation: %q", res.Warnings)
	}
}

func TestSameSeedSameBytes(t *testing.T) {
	src := []byte(`name: s
class: C
functionality: f
type: INV
nsamples: 40
seed: 11
perturb: {name: typos, typos: 2}
template: "{first_name} flew from {city} to {country} with {first_name1}."
`)
	a, err := Generate(src, "s.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(src, "s.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(write(t, a.Suite), write(t, b.Suite)) || a.Suite.NumCases() != 40 {
		t.Fatal("two generations with one seed differ")
	}
	c, _ := Generate(bytes.Replace(src, []byte("seed: 11"), []byte("seed: 12"), 1), "s.yaml", Options{})
	if bytes.Equal(write(t, a.Suite), write(t, c.Suite)) {
		t.Error("another seed gave the same suite")
	}
}

func TestBadInput(t *testing.T) {
	head := "name: bad\nclass: C\nfunctionality: f\ntype: MFT\nlabel: positive\n"
	for _, tc := range []struct {
		name, src string
		want      []string // substrings of the error
	}{
		{"unknown placeholder", head + `template: "I {nope} it"`, []string{"bad.yaml", `test "bad"`, `field "template"`, "unknown placeholder {nope}"}},
		{"empty lexicon", head + "template: \"{x}\"\nlexicons:\n  x: []", []string{`field "lexicons.x"`, "empty lexicon"}},
		{"past the cap", head + "max_cases: 1000\ntemplate: \"{first_name} {last_name} {city}\"", []string{`field "template"`, "more than 1000 cases", "nsamples"}},
		{"perturbation applies to none", "name: bad\nclass: C\nfunctionality: f\ntype: INV\nperturb: change_number\ntemplate: \"no {x} here\"\nlexicons: {x: [digits]}",
			[]string{`field "perturb"`, "change_number applies to none of the 1 filled templates"}},
		{"unknown field", head + "templat: \"x\"", []string{"templat", "not found"}},
		{"MFT without label", "name: bad\nclass: C\nfunctionality: f\ntype: MFT\ntemplate: x", []string{`field "label"`}},
		{"unknown label", "name: bad\nclass: C\nfunctionality: f\ntype: MFT\nlabel: happy\ntemplate: x", []string{`unknown label "happy"`}},
		{"lexicon ending in a digit", head + "template: \"{x2}\"\nlexicons: {x2: [a]}", []string{`field "lexicons.x2"`, "must not end in a digit"}},
		{"mask", head + `template: "I {mask} it"`, []string{"beluga suite suggest"}},
		{"unclosed brace", head + `template: "I {x it"`, []string{"unclosed '{'"}},
		{"INV without perturbation", "name: bad\nclass: C\nfunctionality: f\ntype: INV\ntemplate: x", []string{"original and its perturbations"}},
		{"DIR without direction", "name: bad\nclass: C\nfunctionality: f\ntype: DIR\ntemplates: [[a, b]]", []string{`field "expect"`, "not_more_negative"}},
		{"no test", "name: bad\n", []string{"no test"}},
		{"object without field", head + "template: \"{p}\"\nlexicons: {p: [{name: A}]}", []string{"name a field"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate([]byte(tc.src), "bad.yaml", Options{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// The release suite's "Sentiment-laden words in context" re-created from
// its notebook's templates and lexicons holds exactly the release cases
// (CheckList's product order follows Python's set order, so the comparison
// is of sets of (text, label)).
func TestCheckListReleaseTest(t *testing.T) {
	ref := shareddata.Path(t, "data/checklist/converted/sentiment.jsonl.gz")
	res, err := Load("testdata/checklist_sentiment_laden.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	const name = "Sentiment-laden words in context"
	ours := map[string]int{}
	for _, c := range res.Suite.Functionality(name).Cases {
		l, _ := c.LabelFor(0)
		ours[c.Inputs[0].Text+"\t"+string(rune('0'+l.Class))]++
	}
	f, err := os.Open(ref)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	theirs := map[string]int{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(name)) {
			continue
		}
		var row struct {
			Functionality string   `json:"functionality"`
			Inputs        []string `json:"inputs"`
			Label         int      `json:"label"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if row.Functionality == name {
			theirs[row.Inputs[0]+"\t"+string(rune('0'+row.Label))]++
		}
	}
	if len(theirs) == 0 {
		t.Fatal("reference has no such test")
	}
	nOurs, nTheirs := 0, 0
	for k, n := range ours {
		nOurs += n
		if theirs[k] != n {
			t.Errorf("%q: %d here, %d in the release", k, n, theirs[k])
		}
	}
	for k, n := range theirs {
		nTheirs += n
		if ours[k] == 0 {
			t.Errorf("release case %q not generated", k)
		}
	}
	if nOurs != 8658 || nTheirs != 8658 {
		t.Errorf("%d cases here, %d in the release; want 8658", nOurs, nTheirs)
	}
}

func BenchmarkExpand(b *testing.B) {
	src := []byte("name: b\nclass: C\nfunctionality: f\ntype: MFT\nlabel: 0\ntemplate: \"{first_name} {last_name} met {first_name1} in {city}.\"\nnsamples: 10000\n")
	for b.Loop() {
		if _, err := Generate(src, "b.yaml", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
