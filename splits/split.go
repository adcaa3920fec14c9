package splits

import (
	"sort"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/nprand"
	"github.com/beluga-nlp/beluga/suites"
)

// BeLUGASeed is the random_state BeLUGA's notebook passes to train_test_split.
const BeLUGASeed = 123

// Assign sets Case.Split of every case of s to BeLUGA's split with the given
// seed. Case ids are unique within a functionality (package suites checks it).
// A suite without groups keeps BeLUGA's split exactly. A suite whose cases
// share Groups (a case and its perturbations in other functionalities, a
// template: GroupByMeta) is split by the one grouping rule (assignGroups),
// so that no text of a group is trained on and tested.
func Assign(s *suites.Suite, seed uint32) {
	assign(s, seed)
	assignGroups(s, seed, func(f *suites.Functionality, c *suites.Case) string { return f.Name })
}

// assignGroups splits a suite that has groups by datasets.Split.GroupIndices,
// the rule by which the rows of an i.i.d. file's groups stay together: over
// all the suite's cases, each group whole in one part, stratified by
// stratum (a functionality, or a functionality and a metadata value), with
// the validation and test sizes the suite's split has (BeLUGA's), so that
// each stratum's share of every part comes as near its 50/25/25 as whole
// groups allow. A case without a group is a group of its own. A suite
// without groups is left as it is. Where no group fits a part (groups too
// large for it), each group takes the split of its first case instead.
func assignGroups(s *suites.Suite, seed uint32, stratum func(*suites.Functionality, *suites.Case) string) {
	var cases []*suites.Case
	var strata []int
	var groups []string
	index := map[string]int{}
	grouped := false
	var nDev, nTest int
	for _, f := range s.Functionalities {
		for _, c := range f.Cases {
			k := stratum(f, c)
			if _, ok := index[k]; !ok {
				index[k] = len(index)
			}
			cases = append(cases, c)
			strata = append(strata, index[k])
			groups = append(groups, c.Group)
			grouped = grouped || c.Group != ""
			switch c.Split {
			case suites.SplitValidation:
				nDev++
			case suites.SplitTest:
				nTest++
			}
		}
	}
	if !grouped {
		return
	}
	sp := datasets.Split{Dev: float64(nDev), Test: float64(nTest), Seed: &seed}
	train, dev, test, err := sp.GroupIndices(strata, groups)
	if err != nil {
		joinGroups(s)
		return
	}
	setSplits(train, dev, test, func(i int, split suites.Split) { cases[i].Split = split })
}

// joinGroups gives every case of a Group the split of the group's first
// case in suite order: assignGroups' way out where whole groups cannot
// fill a part.
func joinGroups(s *suites.Suite) {
	groups := map[string]suites.Split{}
	for _, f := range s.Functionalities {
		for _, c := range f.Cases {
			if c.Group == "" {
				continue
			}
			if sp, ok := groups[c.Group]; ok {
				c.Split = sp
			} else {
				groups[c.Group] = c.Split
			}
		}
	}
}

// GroupByMeta puts the cases of s that share a value of the metadata
// column col (a template, a premise) into one Group, so that Assign keeps
// them in one split; a case already in a group (a linked perturbation)
// stays in it. It returns how many cases it grouped. The groups are named
// "col=value".
func GroupByMeta(s *suites.Suite, col string) int {
	n := 0
	for _, f := range s.Functionalities {
		for _, c := range f.Cases {
			if c.Group != "" {
				continue
			}
			if v, ok := CaseMeta(c, col); ok {
				c.Group = col + "=" + v
				n++
			}
		}
	}
	return n
}

func assign(s *suites.Suite, seed uint32) {
	for _, f := range s.Functionalities {
		ids := make([]int, len(f.Cases))
		byID := make(map[int]*suites.Case, len(f.Cases))
		for i, c := range f.Cases {
			ids[i] = c.ID
			byID[c.ID] = c
		}
		sort.Ints(ids)
		train, valTest := trainTestSplit(ids, seed)
		val, test := trainTestSplit(valTest, seed)
		setSplits(train, val, test, func(id int, sp suites.Split) { byID[id].Split = sp })
	}
}

// setSplits calls set for every item of the train, validation and test
// parts with its split.
func setSplits(train, val, test []int, set func(int, suites.Split)) {
	for k, part := range [3][]int{train, val, test} {
		for _, i := range part {
			set(i, [3]suites.Split{suites.SplitTrain, suites.SplitValidation, suites.SplitTest}[k])
		}
	}
}

// trainTestSplit is sklearn's train_test_split(ids, test_size=0.5,
// random_state=seed) for a 1-d array: it returns (train, test) in
// permutation order.
func trainTestSplit(ids []int, seed uint32) (train, test []int) {
	n := len(ids)
	nTest := (n + 1) / 2
	perm := nprand.Permutation(nprand.NewRandomState(seed), n)
	test = make([]int, nTest)
	train = make([]int, n-nTest)
	for i, p := range perm {
		if i < nTest {
			test[i] = ids[p]
		} else {
			train[i-nTest] = ids[p]
		}
	}
	return train, test
}
