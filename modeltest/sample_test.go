package modeltest

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

// checklistGolden is testdata/checklist_sample_n500_seed1.json, written by
// checklist_sample.py from CheckList's own suite.run code.
type checklistGolden struct {
	N     int    `json:"n"`
	Seed  uint32 `json:"seed"`
	Tests []struct {
		Name    string `json:"name"`
		Cases   int    `json:"cases"`
		RunIdxs []int  `json:"run_idxs"`
	} `json:"tests"`
}

// --n 500 --seed 1 draws, test for test and in order, the cases
// CheckList's suite.run(n=500, seed=1) runs: the sentiment release suite's
// 38 tests (whose run_idxs CheckList's authors stored in its pickle) and
// edge sizes; SampleSuite keeps exactly those cases.
func TestCheckListSampleMatchesCheckList(t *testing.T) {
	b, err := os.ReadFile("testdata/checklist_sample_n500_seed1.json")
	if err != nil {
		t.Fatal(err)
	}
	var g checklistGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Tests) != 38+7 {
		t.Fatalf("%d tests in the golden file", len(g.Tests))
	}
	s := &suites.Suite{}
	for _, tc := range g.Tests {
		if got := CheckListSample(tc.Cases, g.N, g.Seed); !slices.Equal(got, tc.RunIdxs) {
			t.Errorf("%s (%d cases): drew %v…, CheckList %v…", tc.Name, tc.Cases, got[:min(5, len(got))], tc.RunIdxs[:min(5, len(tc.RunIdxs))])
		}
		f := &suites.Functionality{Name: tc.Name}
		for i := range tc.Cases {
			f.Cases = append(f.Cases, &suites.Case{ID: i})
		}
		s.Functionalities = append(s.Functionalities, f)
	}
	if err := SampleSuite(s, g.N, g.Seed); err != nil {
		t.Fatal(err)
	}
	for i, f := range s.Functionalities {
		var ids []int
		for _, c := range f.Cases {
			ids = append(ids, c.ID)
		}
		want := slices.Sorted(slices.Values(g.Tests[i].RunIdxs))
		if !slices.Equal(ids, want) {
			t.Errorf("%s: kept %d cases, CheckList runs %d", f.Name, len(ids), len(want))
		}
	}
}
