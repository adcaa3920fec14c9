package modeltest

import (
	"fmt"
	"slices"

	"github.com/beluga-nlp/beluga/internal/nprand"
	"github.com/beluga-nlp/beluga/suites"
)

// CheckListSample returns the cases CheckList's suite.run(n=n, seed=seed)
// runs of a test of size cases, in its draw order: every test's run seeds
// numpy's global RandomState with seed and draws
// np.random.choice(range(cases), min(n, cases), replace=False), the first
// draws of a permutation (abstract_test.py, example_list_and_indices).
// Every test gets the same seed, so tests of one size run the same cases.
func CheckListSample(cases, n int, seed uint32) []int {
	return nprand.Permutation(nprand.NewRandomState(seed), cases)[:min(n, cases)]
}

// SampleSuite keeps of every functionality of s the cases
// CheckListSample draws (kept in suite order), as suite.run(n, seed) runs
// them: CheckList draws positions in test.data, the suite's case order.
func SampleSuite(s *suites.Suite, n int, seed uint32) error {
	if n < 1 {
		return fmt.Errorf("--n %d: want at least 1 case per test", n)
	}
	for _, f := range s.Functionalities {
		keep := CheckListSample(len(f.Cases), n, seed)
		slices.Sort(keep)
		kept := make([]*suites.Case, len(keep))
		for i, k := range keep {
			kept[i] = f.Cases[k]
		}
		f.Cases = kept
	}
	return nil
}
