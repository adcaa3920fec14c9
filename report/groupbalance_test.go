package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/splits"
)

// A held-out metadata value on fewer than 50 T_test cases is marked # in
// the per-group view, with its note; a functionality fold, or the whole
// column, is not. A value whose T_test share is off its suite share is
// marked ‖ when the row's runs recorded the split's counts.
func TestMetaGroupMarks(t *testing.T) {
	skewed := &Row{Configuration: "T", Method: "vanilla", balance: map[[2]string][]splits.GroupBalance{
		{"HATE", "meta:target_ident"}: splits.Shares([]splits.GroupBalance{{Value: "trans people", Suite: 463, Test: 63}, {Value: "gay people", Suite: 551, Test: 205}, {Value: "women", Suite: 509, Test: 137}}),
	}}
	even := &Row{Configuration: "T", Method: "vanilla"}
	for _, tc := range []struct {
		line GroupLine
		want string
	}{
		{GroupLine{Row: even, Score: "meta:target_ident", Group: "trans people", Cases: 40}, "#"},
		{GroupLine{Row: even, Score: "meta:target_ident", Group: "trans people", Cases: 62}, ""},
		{GroupLine{Row: even, Score: "meta:target_ident", Group: "", Cases: 40}, ""},
		{GroupLine{Row: even, Score: "func", Group: "negate_neg_nh", Cases: 34}, ""},
		{GroupLine{Row: skewed, Task: "HATE", Score: "meta:target_ident", Group: "trans people", Cases: 62}, "‖"},
		{GroupLine{Row: skewed, Task: "HATE", Score: "meta:target_ident", Group: "trans people", Cases: 40}, "‖#"},
		{GroupLine{Row: skewed, Task: "HATE", Score: "meta:target_ident", Group: "women", Cases: 137}, ""},
	} {
		if got := groupMarks(tc.line); got != tc.want {
			t.Errorf("%+v: mark %q, want %q", tc.line, got, tc.want)
		}
	}
	lines := []GroupLine{{Row: even, Score: "meta:target_ident", Group: "women", Cases: 135}, {Row: even, Score: "meta:target_ident", Group: "trans people", Cases: 40}}
	if n := groupBalanceNotes(lines, true); len(n) != 1 || !strings.HasPrefix(n[0], "# fewer than 50 T_test cases") {
		t.Errorf("notes %q", n)
	}
	if n := groupBalanceNotes(lines[:1], true); len(n) != 0 {
		t.Errorf("notes %q without a small group", n)
	}
	n := groupBalanceNotes([]GroupLine{{Row: skewed, Task: "HATE", Score: "meta:target_ident", Group: "trans people", Cases: 62}}, true)
	if want := "T: Vanilla target_ident=trans people: 63 of 405 T_test cases (15.6%), 463 of 1523 suite cases (30.4%)"; len(n) != 1 || !strings.HasPrefix(n[0], "‖ ") || !strings.Contains(n[0], want) {
		t.Errorf("skew note %q, want one naming %q", n, want)
	}
}

// The counts a held-out metadata run records reach Table 3's group
// columns and the per-group view: the skewed value is marked there, with
// its counts in a footnote; a store whose runs recorded none (an older
// one) is written as before.
func TestSkewedMetaGroupIsMarkedInTheReport(t *testing.T) {
	store, runs := sweepOf(t, `
name: report-skew
tasks:
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID+T]
methods: [vanilla]
scores: [seen, "meta:group"]
`)
	write := func() (string, string) {
		tab, err := FromStore(store, runs, Options{Trials: 10})
		if err != nil {
			t.Fatal(err)
		}
		var main, groups bytes.Buffer
		if err := tab.WriteMarkdown(&main); err != nil {
			t.Fatal(err)
		}
		if err := tab.WriteGroupsMarkdown(&groups); err != nil {
			t.Fatal(err)
		}
		return main.String(), groups.String()
	}
	main, groups := write()
	if strings.Contains(main+groups, splits.SkewMark) {
		t.Fatalf("a store without counts is marked:\n%s\n%s", main, groups)
	}
	// g0 has 40 of the suite's 120 cases with a group but 10 of T_test's 60.
	bal := []splits.GroupBalance{{Value: "g0", Suite: 40, Train: 25, Validation: 5, Test: 10}, {Value: "g1", Suite: 40, Test: 25}, {Value: "g2", Suite: 40, Test: 25}}
	experimentstest.RecordGroupBalance(t, store, runs, bal)
	main2, groups2 := write()
	note := "IID+T: Vanilla group=g0: 10 of 60 T_test cases (16.7%), 40 of 120 suite cases (33.3%)"
	for _, tc := range []struct{ name, text, cell string }{{"Table 3", main2, "T_group=g0 SENT"}, {"per-group view", groups2, "| g0 |"}} {
		if !strings.Contains(tc.text, note) || strings.Count(tc.text, splits.SkewMark) < 2 {
			t.Errorf("%s: want the g0 value marked %s and the note %q:\n%s", tc.name, splits.SkewMark, note, tc.text)
		}
	}
	if strings.Contains(main2, "| IID | Vanilla | **88.67** | 56.07 | 54.33 | 35.39‖") {
		t.Errorf("the baseline row, which holds nothing out, is marked:\n%s", main2)
	}
}
