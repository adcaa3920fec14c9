package metrics

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// TestClassifyMatchesSklearn compares Classify with scikit-learn's
// accuracy, confusion matrix, per-class precision/recall/F1/support and
// macro-F1 (testdata/gen_classification.py), on fixtures with classes
// never predicted and never gold; and MacroF1, the i.i.d. metric, with it.
func TestClassifyMatchesSklearn(t *testing.T) {
	b, err := os.ReadFile("testdata/classification.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref []struct {
		Name                  string
		Classes               int
		Pred, Gold            []int
		Accuracy              float64
		MacroF1               float64 `json:"macro_f1"`
		Precision, Recall, F1 []float64
		Support               []int
		Confusion             [][]int
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-15 }
	for _, f := range ref {
		c, err := Classify(f.Pred, f.Gold, f.Classes)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if !near(c.Accuracy, f.Accuracy) || !near(c.MacroF1, f.MacroF1) || c.N != len(f.Pred) {
			t.Errorf("%s: accuracy %v macro-F1 %v, sklearn %v %v", f.Name, c.Accuracy, c.MacroF1, f.Accuracy, f.MacroF1)
		}
		if m := MacroF1(f.Pred, f.Gold, f.Classes); !near(m, f.MacroF1) {
			t.Errorf("%s: MacroF1 %v, sklearn %v", f.Name, m, f.MacroF1)
		}
		for k, s := range c.Classes {
			if !near(s.Precision, f.Precision[k]) || !near(s.Recall, f.Recall[k]) || !near(s.F1, f.F1[k]) || s.Support != f.Support[k] {
				t.Errorf("%s class %d: %+v, sklearn P %v R %v F1 %v support %d", f.Name, k, s, f.Precision[k], f.Recall[k], f.F1[k], f.Support[k])
			}
			for j := range f.Classes {
				if c.Confusion[k][j] != f.Confusion[k][j] {
					t.Errorf("%s: confusion[%d][%d] = %d, sklearn %d", f.Name, k, j, c.Confusion[k][j], f.Confusion[k][j])
				}
			}
		}
	}
	for _, tc := range []struct {
		name       string
		pred, gold []int
		classes    int
		want       string
	}{
		{"empty", nil, nil, 2, "no labelled predictions"},
		{"lengths", []int{0}, []int{0, 1}, 2, "1 predictions but 2 gold"},
		{"outside", []int{0, 2}, []int{0, 1}, 2, "example 1: predicted class 2"},
		{"negative gold", []int{0}, []int{-1}, 2, "gold class -1"},
	} {
		if _, err := Classify(tc.pred, tc.gold, tc.classes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
