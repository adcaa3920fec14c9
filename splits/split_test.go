package splits

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/suites"
)

func importRelease(t *testing.T, task string) *suites.Suite {
	t.Helper()
	s, err := suites.ImportCheckList(shareddata.Path(t, "data/checklist/"+task+"_suite.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAssignMatchesBeLUGA compares the split of every case of the three
// release suites with the beluga_split labels of the converted reference.
func TestAssignMatchesBeLUGA(t *testing.T) {
	sizes := map[string][3]int{
		"sentiment": {43208, 21603, 21609},
		"qqp":       {31605, 15800, 15811},
		"squad":     {6651, 3327, 3333},
	}
	for _, task := range []string{"sentiment", "qqp", "squad"} {
		t.Run(task, func(t *testing.T) {
			s := importRelease(t, task)
			Assign(s, BeLUGASeed)
			f, err := os.Open(shareddata.Path(t, "data/checklist/converted/"+task+".jsonl.gz"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			zr, err := gzip.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(zr)
			sc.Buffer(nil, 1<<26)
			var cases []*suites.Case
			var names []string
			for _, fn := range s.Functionalities {
				for _, c := range fn.Cases {
					cases = append(cases, c)
					names = append(names, fn.Name)
				}
			}
			i := 0
			for ; sc.Scan(); i++ {
				var ref struct {
					Functionality string `json:"functionality"`
					TestCase      int    `json:"test_case"`
					Split         string `json:"beluga_split"`
				}
				if err := json.Unmarshal(sc.Bytes(), &ref); err != nil {
					t.Fatal(err)
				}
				if i >= len(cases) || names[i] != ref.Functionality || cases[i].ID != ref.TestCase {
					t.Fatalf("reference line %d (%s case %d) does not line up with the suite", i+1, ref.Functionality, ref.TestCase)
				}
				if string(cases[i].Split) != ref.Split {
					t.Fatalf("%s case %d: split %q, BeLUGA %q", ref.Functionality, ref.TestCase, cases[i].Split, ref.Split)
				}
			}
			if i != len(cases) {
				t.Fatalf("reference has %d cases, suite %d", i, len(cases))
			}
			st := suites.Summarise(s)
			got := [3]int{st.Splits[suites.SplitTrain].Cases, st.Splits[suites.SplitValidation].Cases, st.Splits[suites.SplitTest].Cases}
			if got != sizes[task] {
				t.Errorf("split sizes %v, want %v", got, sizes[task])
			}
		})
	}
}

func TestSplitSizes(t *testing.T) {
	// |train| = floor(n/2), |val| = floor(ceil(n/2)/2), |test| = ceil(ceil(n/2)/2).
	for _, n := range []int{1, 2, 3, 4, 5, 13, 34, 35, 2000} {
		s := &suites.Suite{Functionalities: []*suites.Functionality{{Name: "f"}}}
		for i := 0; i < n; i++ {
			s.Functionalities[0].Cases = append(s.Functionalities[0].Cases, &suites.Case{ID: 3 * i})
		}
		Assign(s, BeLUGASeed)
		st := suites.Summarise(s)
		k := (n + 1) / 2
		want := [3]int{n / 2, k / 2, (k + 1) / 2}
		got := [3]int{st.Splits[suites.SplitTrain].Cases, st.Splits[suites.SplitValidation].Cases, st.Splits[suites.SplitTest].Cases}
		if got != want {
			t.Errorf("n=%d: sizes %v, want %v", n, got, want)
		}
	}
}

func TestFoldCounts(t *testing.T) {
	want := map[string][3]int{"sentiment": {38, 7, 3}, "qqp": {53, 9, 3}, "squad": {24, 9, 2}}
	for task, w := range want {
		t.Run(task, func(t *testing.T) {
			s := importRelease(t, task)
			var got [3]int
			for i, k := range FoldKinds {
				got[i] = len(Folds(s, k, DefaultFoldOptions))
			}
			if got != w {
				t.Errorf("func/class/type folds %v, want %v", got, w)
			}
		})
	}
}

func TestQQPSynonymsTypeFold(t *testing.T) {
	const syn = "(question, f(question)) where f(question) replaces synonyms?"
	s := importRelease(t, "qqp")
	find := func(folds []Fold, name string) Fold {
		for _, f := range folds {
			if f.Name == name {
				return f
			}
		}
		t.Fatalf("no fold %s", name)
		return Fold{}
	}
	has := func(xs []string) bool {
		for _, x := range xs {
			if x == syn {
				return true
			}
		}
		return false
	}
	beluga := Folds(s, ByType, DefaultFoldOptions)
	if !has(find(beluga, "MFT").Removed) || has(find(beluga, "MFT").Scored) || !has(find(beluga, "INV").Scored) {
		t.Errorf("BeLUGA semantics: synonyms test should be withheld by the MFT fold and scored by the INV fold")
	}
	trained := Folds(s, ByType, FoldOptions{Types: TrainedType})
	if !has(find(trained, "MFT").Removed) || !has(find(trained, "MFT").Scored) || has(find(trained, "INV").Scored) {
		t.Errorf("trained-type semantics: synonyms test should be withheld and scored by the MFT fold")
	}
}
