package suites

import (
	"fmt"
	"slices"
	"testing"
)

// CasesIn yields the cases of a split in suite order with their
// functionality (every case for the empty split), and stops when the
// loop does.
func TestCasesIn(t *testing.T) {
	s := &Suite{Functionalities: []*Functionality{
		{Name: "a", Cases: []*Case{{ID: 0, Split: SplitTrain}, {ID: 1, Split: SplitTest}, {ID: 2}}},
		{Name: "b", Cases: []*Case{{ID: 0, Split: SplitTest}, {ID: 1, Split: SplitValidation}}},
	}}
	ids := func(split Split, limit int) []string {
		var out []string
		for f, c := range s.CasesIn(split) {
			if len(out) == limit {
				break
			}
			out = append(out, fmt.Sprintf("%s%d", f.Name, c.ID))
		}
		return out
	}
	for _, tc := range []struct {
		split Split
		limit int
		want  []string
	}{
		{"", -1, []string{"a0", "a1", "a2", "b0", "b1"}},
		{SplitTest, -1, []string{"a1", "b0"}},
		{SplitValidation, -1, []string{"b1"}},
		{"", 3, []string{"a0", "a1", "a2"}},
		{SplitTest, 1, []string{"a1"}},
	} {
		if got := ids(tc.split, tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("CasesIn(%q) up to %d: %v, want %v", tc.split, tc.limit, got, tc.want)
		}
	}
	var b []int
	for c := range s.Functionalities[1].CasesIn(SplitTest) {
		b = append(b, c.ID)
	}
	if !slices.Equal(b, []int{0}) {
		t.Errorf("functionality b's test cases %v, want [0]", b)
	}
}
