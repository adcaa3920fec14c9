package splits

import (
	"sort"

	"github.com/beluga-nlp/beluga/internal/nprand"
	"github.com/beluga-nlp/beluga/suites"
)

// BeLUGASeed is the random_state BeLUGA's notebook passes to train_test_split.
const BeLUGASeed = 123

// Assign sets Case.Split of every case of s to BeLUGA's split with the given
// seed. Case ids are unique within a functionality (package suites checks it).
// Cases that share a Group (a case and its perturbations in other
// functionalities) then all take the split of the group's first case in
// suite order, so that no text of a group is trained on and tested; a suite
// without groups keeps BeLUGA's split exactly.
func Assign(s *suites.Suite, seed uint32) {
	assign(s, seed)
	joinGroups(s)
}

// joinGroups gives every case of a Group the split of the group's first
// case in suite order: the one rule by which suite cases stay together,
// after BeLUGA's split (Assign) or a stratified one (AssignStratified).
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
