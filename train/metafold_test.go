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
	s := &suites.Suite{Name: "s", Task: "hatecheck", Labels: []string{"non-hateful", "hateful"}}
	idents := []string{"women", "Muslims", "", "women"}
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
	if _, err := Run(context.Background(), spec, out); err != nil {
		t.Fatal(err)
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
	spec.Task = TaskRead
	if _, _, err := spec.openSuite(); err == nil || !strings.Contains(err.Error(), "READ") {
		t.Errorf("a READ run with a metadata fold: %v", err)
	}
}
