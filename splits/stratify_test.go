package splits

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/suites"
)

// cycled is a suite whose functionalities list the values of col in a
// fixed cycle, as Multilingual HateCheck lists its templates' identities.
func cycled(sizes []int, values []string) *suites.Suite {
	s := &suites.Suite{Name: "cycled", Labels: []string{"a", "b"}}
	for k, n := range sizes {
		f := &suites.Functionality{Name: fmt.Sprintf("f%d", k), Class: "c", Type: suites.MFT}
		for i := range n {
			meta, _ := json.Marshal(map[string]string{"ident": values[i%len(values)]})
			f.Cases = append(f.Cases, &suites.Case{ID: i, Inputs: []suites.Input{{Text: fmt.Sprint(k, i)}}, Labels: []suites.Label{suites.ClassLabel(0)}, Meta: meta})
		}
		s.Functionalities = append(s.Functionalities, f)
	}
	return s
}

// checkStratified checks that every value's count in each part of every
// functionality is within one case of its exact share, and that each
// functionality's parts have the sizes of BeLUGA's split.
func checkStratified(t *testing.T, s *suites.Suite, col string) {
	t.Helper()
	for _, f := range s.Functionalities {
		n := len(f.Cases)
		valTest := (n + 1) / 2
		want := map[suites.Split]int{suites.SplitTrain: n - valTest, suites.SplitTest: (valTest + 1) / 2, suites.SplitValidation: valTest - (valTest+1)/2}
		count := map[suites.Split]int{}
		byValue := map[string]map[suites.Split]int{}
		for _, c := range f.Cases {
			v, _ := CaseMeta(c, col)
			if byValue[v] == nil {
				byValue[v] = map[suites.Split]int{}
			}
			byValue[v][c.Split]++
			count[c.Split]++
		}
		for sp, w := range want {
			if count[sp] != w {
				t.Errorf("%s: %d %s cases, want BeLUGA's %d", f.Name, count[sp], sp, w)
			}
		}
		for v, parts := range byValue {
			nv := parts[suites.SplitTrain] + parts[suites.SplitValidation] + parts[suites.SplitTest]
			for sp, w := range want {
				exact := float64(w) * float64(nv) / float64(n)
				if math.Abs(float64(parts[sp])-exact) >= 1 {
					t.Errorf("%s value %q: %d %s cases, want its share %.2f within one", f.Name, v, parts[sp], sp, exact)
				}
			}
		}
	}
}

func TestAssignStratifiedGivesEachValueItsShare(t *testing.T) {
	s := cycled([]int{8, 9, 40, 101, 1, 2}, []string{"women", "trans people", "gay people", "", "Muslims"})
	AssignStratified(s, BeLUGASeed, "ident")
	checkStratified(t, s, "ident")
	// BeLUGA's split gives each functionality of one size the same
	// positions: on a cycle that skews the values; stratified, none is.
	s = cycled([]int{140, 140, 140, 140, 140, 140, 140, 140, 140, 140}, []string{"women", "trans people", "gay people", "", "Muslims", "black people", "disabled people"})
	Assign(s, BeLUGASeed)
	before := Balance(s, "ident")
	AssignStratified(s, BeLUGASeed, "ident")
	after := Balance(s, "ident")
	skewed := 0
	for _, g := range before {
		if g.Skewed {
			skewed++
		}
	}
	if skewed == 0 {
		t.Errorf("BeLUGA's split of a cycled suite: no value skewed (%+v): the test shows nothing", before)
	}
	for i, g := range after {
		if g.Skewed {
			t.Errorf("stratified: %+v skewed", g)
		}
		if g.Suite != before[i].Suite {
			t.Errorf("%s: %d cases, then %d", g.Value, before[i].Suite, g.Suite)
		}
	}
}

// A stratified split of the HateCheck suite gives each target identity its
// suite share of T_test within one case per functionality, where BeLUGA's
// split gives trans people 6.7 % of T_test against 12.4 % of the suite.
func TestAssignStratifiedHateCheck(t *testing.T) {
	res, err := suites.ImportHateCheck(shareddata.Path(t, "data/hatecheck/test_suite_cases.csv"))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Suite
	Assign(s, BeLUGASeed)
	skewed := 0
	for _, g := range Balance(s, "target_ident") {
		if g.Skewed {
			skewed++
		}
	}
	if skewed == 0 {
		t.Error("BeLUGA's split: no identity skewed; the issue measured trans people at 6.7 % of T_test, 12.4 % of the suite")
	}
	AssignStratified(s, BeLUGASeed, "target_ident")
	checkStratified(t, s, "target_ident")
	funcs := map[string]int{} // functionalities each identity appears in
	for _, f := range s.Functionalities {
		seen := map[string]bool{}
		for _, c := range f.Cases {
			if v, ok := CaseMeta(c, "target_ident"); ok && !seen[v] {
				seen[v] = true
				funcs[v]++
			}
		}
	}
	bal := Balance(s, "target_ident")
	test := 0
	for _, g := range bal {
		test += g.Test
	}
	for _, g := range bal {
		exact := g.SuiteShare * float64(test)
		if math.Abs(float64(g.Test)-exact) > float64(funcs[g.Value]) || g.Skewed {
			t.Errorf("%s: %d of %d T_test cases, want its suite share %.1f within %d (one a functionality)", g.Value, g.Test, test, exact, funcs[g.Value])
		}
	}
}

// Ensure assigns BeLUGA's split to a suite that has no case of the split
// asked for, and only then: a suite with the split keeps its own (even
// one BeLUGA's seed would not give), and no split asked leaves the suite
// as it is. AssignFor without a column is Ensure of the test split.
func TestEnsure(t *testing.T) {
	splitsOf := func(s *suites.Suite) []suites.Split {
		var out []suites.Split
		for _, f := range s.Functionalities {
			for _, c := range f.Cases {
				out = append(out, c.Split)
			}
		}
		return out
	}
	beluga := cycled([]int{7, 5}, []string{"x"})
	Assign(beluga, BeLUGASeed)
	own := cycled([]int{7, 5}, []string{"x"})
	for _, f := range own.Functionalities {
		for i, c := range f.Cases {
			c.Split = []suites.Split{suites.SplitTest, suites.SplitTrain}[i%2] // no validation case
		}
	}
	for _, tc := range []struct {
		name     string
		s        *suites.Suite
		split    suites.Split
		assigned bool
		want     []suites.Split
	}{
		{"no split, test asked", cycled([]int{7, 5}, []string{"x"}), suites.SplitTest, true, splitsOf(beluga)},
		{"no split, validation asked", cycled([]int{7, 5}, []string{"x"}), suites.SplitValidation, true, splitsOf(beluga)},
		{"no split, none asked", cycled([]int{7, 5}, []string{"x"}), "", false, splitsOf(cycled([]int{7, 5}, []string{"x"}))},
		{"its own split kept", own, suites.SplitTest, false, splitsOf(own)},
		{"its own split lacks the one asked", own, suites.SplitValidation, true, splitsOf(beluga)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Ensure(tc.s, tc.split); got != tc.assigned {
				t.Errorf("Ensure = %v, want %v", got, tc.assigned)
			}
			if got := splitsOf(tc.s); !slices.Equal(got, tc.want) {
				t.Errorf("splits %v, want %v", got, tc.want)
			}
		})
	}
	s := cycled([]int{7, 5}, []string{"x"})
	if err := AssignFor(s, ""); err != nil || !slices.Equal(splitsOf(s), splitsOf(beluga)) {
		t.Errorf("AssignFor: %v, splits %v", err, splitsOf(s))
	}
}
