package train

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// A metadata fold withholds exactly the training cases of its value, in
// every functionality, and keeps the rest (a functionality fold drops its
// functionality whole).
func TestMetaFoldWithholdsItsCases(t *testing.T) {
	s := identSuite("women", "Muslims", "", "women")
	tk, err := tokenize.NewWordLevel([]string{"[PAD]", "[UNK]", "derog", "threat"}, 8)
	if err != nil {
		t.Fatal(err)
	}
	task := &Task{Name: "hate", Labels: []string{"non-hateful", "hateful"}, MFTLoss: "ce"}
	count := func(fold *splits.Fold) int {
		d, err := BuildSuiteData(s, suites.SplitTrain, fold, tk, task)
		if err != nil {
			t.Fatal(err)
		}
		return len(d.MFT)
	}
	women := splits.Folds(s, splits.ByMeta("target_ident"), splits.DefaultFoldOptions)[0]
	muslims := splits.Folds(s, splits.ByMeta("target_ident"), splits.DefaultFoldOptions)[1]
	derog := splits.Folds(s, splits.ByFunctionality, splits.DefaultFoldOptions)[0]
	for name, tc := range map[string]struct {
		fold *splits.Fold
		want int
	}{
		"none": {nil, 8}, "women": {&women, 4}, "Muslims": {&muslims, 6}, "derog": {&derog, 4},
	} {
		if got := count(tc.fold); got != tc.want {
			t.Errorf("fold %s: %d MFT rows, want %d", name, got, tc.want)
		}
	}
}

// A run of a metadata fold scores only its value's T_test cases: every
// other case is filtered in cases.jsonl and left out of the pass rates.
func TestRunMetaFoldScoresOnlyItsCases(t *testing.T) {
	b, err := os.ReadFile("testdata/tiny_suite.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	group := map[string]string{} // functionality/id → group
	tests := 0
	for i := 1; i < len(lines); i++ {
		var c map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &c); err != nil {
			t.Fatal(err)
		}
		g := []string{"a", "b"}[i%2]
		if c["split"] == "test" {
			// Alternate over the scored cases, so that both groups have some.
			g = []string{"a", "b"}[tests%2]
			tests++
		}
		c["meta"] = map[string]string{"g": g}
		group[fmt.Sprint(c["functionality"], "/", c["id"])] = g
		nb, _ := json.Marshal(c)
		lines[i] = string(nb)
	}
	dir := t.TempDir()
	suite := filepath.Join(dir, "suite.jsonl")
	if err := os.WriteFile(suite, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := tinySpec(ConfigIIDPlusT)
	spec.Suite = suite
	spec.HeldOut = &FoldSpec{Kind: splits.ByMeta("g"), Name: "a"}
	out := filepath.Join(dir, "run")
	res, err := Run(context.Background(), spec, out)
	if err != nil {
		t.Fatal(err)
	}
	// The run records its split's counts per value of the held-out column,
	// for the report's skew mark.
	if b := res.GroupBalance; len(b) != 2 || b[0].Value != "b" || b[1].Value != "a" || b[1].Test != (tests+1)/2 || b[0].Test != tests/2 || b[0].Suite+b[1].Suite != len(lines)-1 {
		t.Errorf("group balance %+v: want b and a with %d and %d of %d test cases, %d cases", b, tests/2, (tests+1)/2, tests, len(lines)-1)
	}
	cb, err := os.ReadFile(filepath.Join(out, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	scored, other := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(string(cb)), "\n") {
		var c struct {
			Functionality string
			Case          int
			Verdict       string
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		switch group[fmt.Sprint(c.Functionality, "/", c.Case)] {
		case "a":
			if c.Verdict == "filtered" {
				t.Errorf("held-out case %s/%d filtered", c.Functionality, c.Case)
			}
			scored++
		default:
			if c.Verdict != "filtered" {
				t.Errorf("case %s/%d of another group scored %s", c.Functionality, c.Case, c.Verdict)
			}
			other++
		}
	}
	if scored == 0 || other == 0 {
		t.Errorf("%d held-out and %d other T_test cases", scored, other)
	}
	// trained.json lists the cases the run trained and was scored on: no
	// held-out case trained, every scored case is of the held-out group.
	tb, err := os.ReadFile(filepath.Join(out, TrainedFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec Trained
	if err := json.Unmarshal(tb, &rec); err != nil {
		t.Fatal(err)
	}
	roles := map[string]TrainedPart{}
	for _, p := range append(rec.IID, rec.Suite...) {
		roles[p.Role+" "+p.Name] = p
	}
	trained, test := roles["trained suite T_train"], roles["scored suite T_test"]
	if trained.Cases == 0 || test.Cases != scored || roles["trained i.i.d. train"].Rows == 0 || len(trained.Digest) != 64 {
		t.Fatalf("trained.json parts %+v: want trained cases, %d scored and i.i.d. rows", roles, scored)
	}
	for _, fc := range trained.Functionalities {
		for _, id := range expandRanges(t, fc.Cases) {
			if group[fmt.Sprint(fc.Name, "/", id)] == "a" {
				t.Errorf("held-out case %s/%d listed as trained", fc.Name, id)
			}
		}
	}
	for _, fc := range test.Functionalities {
		for _, id := range expandRanges(t, fc.Cases) {
			if group[fmt.Sprint(fc.Name, "/", id)] != "a" {
				t.Errorf("case %s/%d of another group listed as scored", fc.Name, id)
			}
		}
	}
	spec.Task = TaskRead
	if _, _, err := spec.openSuite(); err == nil || !strings.Contains(err.Error(), "READ") {
		t.Errorf("a READ run with a metadata fold: %v", err)
	}
}

// expandRanges reads rangesOf's "1-3,5" back.
func expandRanges(t *testing.T, s string) []int {
	t.Helper()
	var out []int
	for _, r := range strings.Split(s, ",") {
		var a, b int
		if n, _ := fmt.Sscanf(r, "%d-%d", &a, &b); n == 2 {
			for i := a; i <= b; i++ {
				out = append(out, i)
			}
		} else if _, err := fmt.Sscanf(r, "%d", &a); err == nil {
			out = append(out, a)
		} else {
			t.Fatalf("range %q", r)
		}
	}
	return out
}

// With max_cases, a metadata fold holds out its group after the cap by
// default (BeLUGA's order: the seen run's capped cases less the group) and
// before it with suite_limit_after_hold_out (up to the cap of the cases it
// keeps); a functionality fold trains on the same cases either way.
func TestFoldCapBeforeOrAfterHoldOut(t *testing.T) {
	s := identSuite("women", "Muslims", "", "women", "Muslims")
	women := splits.Folds(s, splits.ByMeta("target_ident"), splits.DefaultFoldOptions)[0]
	derog := splits.Folds(s, splits.ByFunctionality, splits.DefaultFoldOptions)[0]
	count := func(after bool, fold *splits.Fold) int {
		spec := RunSpec{SuiteLimit: 2, SuiteLimitAfterHoldOut: after, Suite: "s.jsonl"}
		p := trainedSuitePart("trained", "suite T_train", "s.jsonl", spec.trainingSuite(s, fold), func(f *suites.Functionality, c *suites.Case) bool {
			return fold == nil || !fold.HoldsOut(f, c)
		})
		return p.Cases
	}
	for _, tc := range []struct {
		name  string
		after bool
		fold  *splits.Fold
		want  int
	}{
		{"seen", false, nil, 4}, {"seen, after", true, nil, 4},
		// Cases 0 (women) and 1 of each functionality, less women: 1 each.
		{"women", false, &women, 2},
		// Cases 1 and 2 of those the fold keeps: 2 each, as the seen run.
		{"women, after", true, &women, 4},
		{"derog", false, &derog, 2}, {"derog, after", true, &derog, 2},
	} {
		if got := count(tc.after, tc.fold); got != tc.want {
			t.Errorf("%s: %d cases trained, want %d", tc.name, got, tc.want)
		}
	}
}

// identSuite is a two-functionality HateCheck-like suite (derog, threat)
// whose training cases, one per ident, carry that target_ident ("" none).
func identSuite(idents ...string) *suites.Suite {
	s := &suites.Suite{Name: "s", Task: "hatecheck", Labels: []string{"non-hateful", "hateful"}}
	for _, fn := range []string{"derog", "threat"} {
		f := &suites.Functionality{Name: fn, Class: "C", Type: suites.MFT, Expect: suites.DefaultExpectation(suites.MFT)}
		for i, id := range idents {
			c := &suites.Case{ID: i, Inputs: []suites.Input{{Text: fmt.Sprint(fn, " ", i)}}, Labels: []suites.Label{suites.ClassLabel(1)}, Split: suites.SplitTrain}
			if id != "" {
				c.Meta = json.RawMessage(`{"target_ident": "` + id + `"}`)
			}
			f.Cases = append(f.Cases, c)
		}
		s.Functionalities = append(s.Functionalities, f)
	}
	return s
}
