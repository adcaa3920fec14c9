package train

import (
	"fmt"

	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// openSuite opens the run's suite, assigning BeLUGA's split if it has
// none, and finds its held-out fold (nil for a seen run).
func (s *RunSpec) openSuite() (*suites.Suite, *splits.Fold, error) {
	suite, err := suites.Open(s.Suite)
	if err != nil {
		return nil, nil, err
	}
	if err := splits.AssignFor(suite, s.SuiteStratify); err != nil {
		return nil, nil, err
	}
	if s.HeldOut == nil {
		return suite, nil, nil
	}
	if err := s.kind().checkFold(s.HeldOut.Kind); err != nil {
		return nil, nil, err
	}
	for _, f := range splits.Folds(suite, s.HeldOut.Kind, splits.DefaultFoldOptions) {
		if f.Name == s.HeldOut.Name {
			return suite, &f, nil
		}
	}
	return nil, nil, fmt.Errorf("suite %s has no %s fold %q", suite.Name, s.HeldOut.Kind, s.HeldOut.Name)
}

// limitCases keeps, per functionality, the first n cases of split (and
// every case of the other splits). With a fold, the cases it holds out
// take no place under the cap: they stay (BuildSuiteData leaves them out)
// and the cap counts only the cases the fold keeps.
func limitCases(s *suites.Suite, split suites.Split, n int, fold *splits.Fold) *suites.Suite {
	out := *s
	out.Functionalities = nil
	for _, f := range s.Functionalities {
		g := *f
		g.Cases = nil
		kept := 0
		for _, c := range f.Cases {
			if c.Split == split && (fold == nil || !fold.HoldsOut(f, c)) {
				if kept == n {
					continue
				}
				kept++
			}
			g.Cases = append(g.Cases, c)
		}
		out.Functionalities = append(out.Functionalities, &g)
	}
	return &out
}

// dropOtherSplits keeps only the cases of split.
func dropOtherSplits(s *suites.Suite, split suites.Split) *suites.Suite {
	out := *s
	out.Functionalities = nil
	for _, f := range s.Functionalities {
		g := *f
		g.Cases = nil
		for _, c := range f.Cases {
			if c.Split == split {
				g.Cases = append(g.Cases, c)
			}
		}
		out.Functionalities = append(out.Functionalities, &g)
	}
	return &out
}

// subsetSuite keeps the named functionalities of s (sharing their cases).
func subsetSuite(s *suites.Suite, names []string) *suites.Suite {
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
	}
	out := *s
	out.Functionalities = nil
	for _, f := range s.Functionalities {
		if keep[f.Name] {
			out.Functionalities = append(out.Functionalities, f)
		}
	}
	return &out
}
