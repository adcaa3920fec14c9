package splits

import (
	"fmt"
	"slices"
	"sort"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/suites"
)

// AssignStratified sets Case.Split of every case of s to a split of the
// sizes BeLUGA's has — per functionality, half the cases (rounded down) to
// train and the rest halved again, the larger half to test — but
// stratified by the case-metadata column col: within each functionality,
// each value of col (the cases without one are a value too) gets its share
// of the functionality's train, validation and test cases, within one case
// (datasets.Stratify, by largest remainder, the cases drawn with seed).
// So each value's share of T_test is its share of the suite, within one
// case per functionality, and a group column held out (IdentOut's
// target_ident) is scored on a test set whose mix is the suite's, not an
// artefact of the split: BeLUGA's split re-seeds every functionality
// alike, and a suite that lists its identities in a fixed cycle gives
// them very different shares of T_test. A suite with groups is split by
// the one grouping rule, as Assign's is, stratified by functionality and
// value.
func AssignStratified(s *suites.Suite, seed uint32, col string) {
	// Each case's value, decoded from its meta once for the strata and
	// the groups' strata alike.
	value := map[*suites.Case]string{}
	for _, f := range s.Functionalities {
		cases := slices.Clone(f.Cases)
		sort.SliceStable(cases, func(i, j int) bool { return cases[i].ID < cases[j].ID })
		names := make([]string, len(cases))
		for i, c := range cases {
			names[i], _ = CaseMeta(c, col)
			value[c] = names[i]
		}
		vals := slices.Clone(names)
		slices.Sort(names)
		names = slices.Compact(names)
		strata := make([]int, len(cases))
		for i, v := range vals {
			strata[i], _ = slices.BinarySearch(names, v)
		}
		n := len(cases)
		valTest := (n + 1) / 2
		nTest := (valTest + 1) / 2
		train, val, test := datasets.Stratify(strata, valTest-nTest, nTest, seed)
		setSplits(train, val, test, func(i int, sp suites.Split) { cases[i].Split = sp })
	}
	assignGroups(s, seed, func(f *suites.Functionality, c *suites.Case) string {
		return f.Name + "\x00" + value[c]
	})
}

// AssignFor gives a suite the split a run gives it (train's runs, the
// tokenizer's corpus, --dry-run's counts): stratified by the case-metadata
// column stratify when set (a task's split: {stratify: COLUMN}), else the
// split the suite holds, else BeLUGA's (Ensure).
func AssignFor(s *suites.Suite, stratify string) error {
	switch {
	case stratify != "":
		if len(Balance(s, stratify)) == 0 {
			return fmt.Errorf("suite %s: split stratified by %q: no case has a value in this metadata column", s.Name, stratify)
		}
		AssignStratified(s, BeLUGASeed, stratify)
	default:
		Ensure(s, suites.SplitTest)
	}
	return nil
}

// Ensure gives s BeLUGA's split (Assign, BeLUGASeed) when it carries no
// case of split, and reports whether it did; with split empty (no split
// asked for) it does nothing. It is the one rule by which a suite without
// a split gets BeLUGA's: runs, the tokenizer's corpus and --dry-run reach
// it through AssignFor; beluga test, eval, suite inputs and suite stats
// call it and say so.
func Ensure(s *suites.Suite, split suites.Split) bool {
	if split == "" || suites.Summarise(s).Splits[split].Cases > 0 {
		return false
	}
	Assign(s, BeLUGASeed)
	return true
}

// The marks of a held-out group column whose test cases do not stand for
// the suite: its share of T_test differs from its share of the suite by
// more than SkewTolerance (in proportions: 0.02 is two percentage points),
// or it rests on fewer than MinTestCases test cases. The marks continue
// the report's († ‡ § ¶, a flagged run, a trivial or an incomplete value)
// in the printers' order, so that a report can show both.
const (
	SkewTolerance = 0.02
	MinTestCases  = 50
	SkewMark      = "‖"
	SmallMark     = "#"
)

// GroupBalance is one value of a case-metadata column: its cases in the
// suite and in each part, its shares of the suite's and of T_test's cases
// that have a value, and the marks it earns.
// A run records the counts (train.Result, a held-out metadata run's
// split); Shares gives the rest from them.
type GroupBalance struct {
	Value      string  `json:"value"`
	Suite      int     `json:"suite"`
	Train      int     `json:"train"`
	Validation int     `json:"validation"`
	Test       int     `json:"test"`
	SuiteShare float64 `json:"-"`
	TestShare  float64 `json:"-"`
	// Skewed: |TestShare − SuiteShare| > SkewTolerance; Small: fewer than
	// MinTestCases test cases.
	Skewed bool `json:"-"`
	Small  bool `json:"-"`
}

// Marks returns the value's marks: SkewMark, SmallMark, both or "".
func (g GroupBalance) Marks() string {
	m := ""
	if g.Skewed {
		m += SkewMark
	}
	if g.Small {
		m += SmallMark
	}
	return m
}

// Balance counts each value of the metadata column col in the suite and
// in each part of its split, in order of first appearance, with the
// shares and marks of GroupBalance. Cases without a value are left out.
func Balance(s *suites.Suite, col string) []GroupBalance {
	var out []GroupBalance
	at := map[string]int{}
	for _, f := range s.Functionalities {
		for _, c := range f.Cases {
			v, ok := CaseMeta(c, col)
			if !ok {
				continue
			}
			i, seen := at[v]
			if !seen {
				i = len(out)
				at[v] = i
				out = append(out, GroupBalance{Value: v})
			}
			g := &out[i]
			g.Suite++
			switch c.Split {
			case suites.SplitTrain:
				g.Train++
			case suites.SplitValidation:
				g.Validation++
			case suites.SplitTest:
				g.Test++
			}
		}
	}
	Shares(out)
	return out
}

// Shares sets each value's shares of the suite's and of T_test's cases
// (among the values given) and its marks from its counts, and returns out:
// what Balance gives, for counts a run recorded.
func Shares(out []GroupBalance) []GroupBalance {
	var suite, test int
	for _, g := range out {
		suite, test = suite+g.Suite, test+g.Test
	}
	for i := range out {
		g := &out[i]
		g.SuiteShare = float64(g.Suite) / float64(suite)
		if test > 0 {
			g.TestShare = float64(g.Test) / float64(test)
		}
		d := g.TestShare - g.SuiteShare
		g.Skewed = d > SkewTolerance || d < -SkewTolerance
		g.Small = g.Test < MinTestCases
	}
	return out
}
