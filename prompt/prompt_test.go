package prompt

import (
	"fmt"
	"strings"
	"testing"
)

func pool(labels ...int) []Demo {
	out := make([]Demo, len(labels))
	for i, l := range labels {
		out[i] = Demo{Input: Input{Text: string(rune('a' + i))}, Label: l}
	}
	return out
}

// Choose is label-balanced (round-robin over the labels, a label that
// runs out leaving its turns to the others), seeded, and refuses more
// demonstrations than the pool has.
func TestChooseBalancedSeeded(t *testing.T) {
	p := pool(0, 0, 0, 0, 0, 0, 1, 1, 2)
	for _, tc := range []struct {
		k    int
		want [3]int // per label
	}{
		{3, [3]int{1, 1, 1}},
		{6, [3]int{3, 2, 1}},
		{9, [3]int{6, 2, 1}},
	} {
		got, err := Choose(p, 3, tc.k, 7)
		if err != nil {
			t.Fatal(err)
		}
		var n [3]int
		seen := map[int]bool{}
		for _, i := range got {
			if seen[i] {
				t.Errorf("k=%d: demonstration %d chosen twice", tc.k, i)
			}
			seen[i] = true
			n[p[i].Label]++
		}
		if n != tc.want {
			t.Errorf("k=%d: per label %v, want %v", tc.k, n, tc.want)
		}
		again, _ := Choose(p, 3, tc.k, 7)
		if fmtInts(again) != fmtInts(got) {
			t.Errorf("k=%d: seed 7 drew %v then %v", tc.k, got, again)
		}
	}
	differ := false
	a, _ := Choose(p, 3, 4, 1)
	for seed := uint64(2); seed < 10 && !differ; seed++ {
		b, _ := Choose(p, 3, 4, seed)
		differ = fmtInts(a) != fmtInts(b)
	}
	if !differ {
		t.Error("every seed drew the same demonstrations")
	}
	if _, err := Choose(p, 3, 10, 1); err == nil || !strings.Contains(err.Error(), "10 demonstrations asked, 9 to choose from") {
		t.Errorf("k beyond the pool: %v", err)
	}
	if got, err := Choose(nil, 3, 0, 1); err != nil || got != nil {
		t.Errorf("zero-shot: %v, %v", got, err)
	}
}

func fmtInts(xs []int) string { return fmt.Sprint(xs) }

// A prompt is instruction, demonstrations (input, verbalizer), each
// followed by the separator; the input comes after.
func TestTemplatePrefix(t *testing.T) {
	tm := Template{Name: "t", Instruction: "Sentiment?", Input: "Q: {text} | {pair}\nA:"}
	demos := []Demo{{Input: Input{Text: "good", Pair: "p"}, Label: 1}, {Input: Input{Text: "bad"}, Label: 0}}
	got := tm.Prefix(demos, []string{" no", " yes"})
	want := "Sentiment?\n\nQ: good | p\nA: yes\n\nQ: bad | \nA: no\n\n"
	if got != want {
		t.Errorf("prefix %q, want %q", got, want)
	}
	if got := (Template{Input: "{text}", Separator: "|"}).Prefix(nil, nil); got != "" {
		t.Errorf("zero-shot prefix without instruction %q", got)
	}
}

func TestSpecValidate(t *testing.T) {
	ok := func() Spec {
		return Spec{Templates: []Template{{Name: "a", Input: "{text}"}}, Verbalizers: map[string]string{"neg": " bad", "pos": " good"}, Model: "m"}
	}
	labels := []string{"neg", "pos"}
	for _, tc := range []struct {
		edit func(*Spec)
		want string
	}{
		{func(*Spec) {}, ""},
		{func(s *Spec) { s.Templates = nil }, "prompt.templates: none"},
		{func(s *Spec) { s.Templates[0].Name = "../x" }, `prompt.templates[0].name: "../x" is not a name`},
		{func(s *Spec) { s.Templates[0].Input = "x" }, "has no {text}"},
		{func(s *Spec) { s.Template = "b" }, `prompt.template: "b" is none of the templates (a)`},
		{func(s *Spec) { delete(s.Verbalizers, "pos") }, `no verbalizer for label "pos"`},
		{func(s *Spec) { s.Verbalizers["pos"] = " bad" }, "share the verbalizer"},
		{func(s *Spec) { s.Verbalizers["neutral"] = " meh" }, `"neutral" is not a task label`},
		{func(s *Spec) { s.Model = "" }, "set exactly one of model"},
		{func(s *Spec) { s.Endpoint = &Endpoint{URL: "http://x", Mode: ModeEcho} }, "set exactly one of model"},
		{func(s *Spec) { s.Model, s.Endpoint = "", &Endpoint{URL: "ftp://x", Mode: ModeEcho} }, "is not an http(s) URL"},
		{func(s *Spec) { s.Model, s.Endpoint = "", &Endpoint{URL: "http://x", Mode: "chat"} }, `prompt.endpoint.mode: "chat"`},
		{func(s *Spec) { s.K = -1 }, "prompt.k: -1 is negative"},
	} {
		s := ok()
		tc.edit(&s)
		err := s.Validate(labels)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
