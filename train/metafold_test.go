package train

import (
	"encoding/json"
	"fmt"
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
