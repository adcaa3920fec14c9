package experiments

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each run's sizes are drawn from its data before it runs (planned), each
// held-out run beside its seen run's; budget.fold_cap: after_hold_out
// gives a capped metadata fold the seen run's count, and new IDs to those
// runs only.
func TestSizeRowsSeenBesideFolds(t *testing.T) {
	dir := t.TempDir()
	var suite strings.Builder
	suite.WriteString(`{"suite":"s","task":"t","labels":["no","yes"]}` + "\n")
	for _, fn := range []string{"f1", "f2"} {
		for i := range 8 {
			split := "train"
			if i >= 6 {
				split = "test"
			}
			fmt.Fprintf(&suite, `{"class":"C","functionality":"%s","type":"MFT","id":%d,"inputs":["good %s %d"],"label":1,"split":"%s","meta":{"g":"%s"}}`+"\n",
				fn, i, fn, i, split, []string{"a", "b"}[i%2])
		}
	}
	os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(suite.String()), 0o644)
	glove, _ := filepath.Abs("../train/testdata/tiny_glove.txt")
	spec := func(foldCap string) *Spec {
		path := filepath.Join(dir, "spec-"+foldCap+".yaml")
		os.WriteFile(path, []byte(`name: sizes
tasks: [{name: T, labels: [no, yes], suite: s.jsonl}]
model: {kind: wordvec, glove: `+glove+`, hidden: 4}
configurations: [T]
scores: [seen, "meta:g"]
budget: {max_cases: 2, fold_cap: `+foldCap+`}
`), 0o644)
		s, err := LoadSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	store := &Store{Dir: filepath.Join(dir, "store")}
	cases := map[string]map[string]int{}
	ids := map[string]map[string]string{}
	for _, foldCap := range []string{FoldCapBefore, FoldCapAfter} {
		runs, err := Expand(context.Background(), spec(foldCap), &Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := SizeRows(store, runs)
		if err != nil {
			t.Fatal(err)
		}
		cases[foldCap], ids[foldCap] = map[string]int{}, map[string]string{}
		for _, r := range rows {
			key := r.Run.Score + " " + r.Run.Fold
			cases[foldCap][key], ids[foldCap][key] = r.Sizes.SuiteCases, r.Run.ID()
			if r.Sizes.Recorded || r.Run.Fold != "" && r.SeenCases != 4 {
				t.Errorf("%s %s: %+v, want planned sizes beside the seen run's 4 cases", foldCap, key, r)
			}
		}
		var b bytes.Buffer
		if err := WriteSizes(&b, rows, true); err != nil || !strings.Contains(b.String(), "seen_suite_cases") {
			t.Errorf("CSV: %v\n%s", err, b.String())
		}
	}
	// Two T_train cases per functionality (a, b): the seen run trains on 4;
	// a fold of g capped first keeps 1 of each, capped after 2.
	want := map[string]map[string]int{
		FoldCapBefore: {"seen ": 4, "meta:g a": 2, "meta:g b": 2},
		FoldCapAfter:  {"seen ": 4, "meta:g a": 4, "meta:g b": 4},
	}
	for foldCap, w := range want {
		for key, n := range w {
			if cases[foldCap][key] != n {
				t.Errorf("%s %s: %d suite cases, want %d", foldCap, key, cases[foldCap][key], n)
			}
		}
	}
	if ids[FoldCapBefore]["seen "] != ids[FoldCapAfter]["seen "] || ids[FoldCapBefore]["meta:g a"] == ids[FoldCapAfter]["meta:g a"] {
		t.Errorf("IDs %v: the seen run must keep its ID, a capped metadata fold take a new one", ids)
	}
}
