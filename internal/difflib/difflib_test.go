package difflib

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"
)

func TestMatchingBlocksDocExamples(t *testing.T) {
	tests := []struct {
		a, b     string
		autojunk bool
		want     []Match
	}{
		// from difflib's docstrings
		{"abxcd", "abcd", true, []Match{{0, 0, 2}, {3, 2, 2}, {5, 4, 0}}},
		{"qabxcd", "abycdf", true, []Match{{1, 0, 2}, {4, 3, 2}, {6, 6, 0}}},
		{"", "", true, []Match{{0, 0, 0}}},
		// "ab" vs "acab": the longest block is "ab", not a stripped prefix
		{"ab", "acab", true, []Match{{0, 2, 2}, {2, 4, 0}}},
	}
	for _, tc := range tests {
		got := MatchingBlocks([]rune(tc.a), []rune(tc.b), tc.autojunk)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q vs %q: %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestMatchingBlocksCPython compares with CPython's difflib on random
// sequences, long ones with popular elements included (testdata/gen_blocks.py).
func TestMatchingBlocksCPython(t *testing.T) {
	b, err := os.ReadFile("testdata/blocks.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		A, B     []int
		Autojunk bool
		Blocks   [][3]int
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	popular := 0
	for i, c := range cases {
		got := MatchingBlocks(c.A, c.B, c.Autojunk)
		want := make([]Match, len(c.Blocks))
		for k, x := range c.Blocks {
			want[k] = Match{x[0], x[1], x[2]}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("case %d (len %d vs %d, autojunk %v): %v, want %v", i, len(c.A), len(c.B), c.Autojunk, got, want)
		}
		if c.Autojunk && !reflect.DeepEqual(got, MatchingBlocks(c.A, c.B, false)) {
			popular++
		}
	}
	// the golden set must exercise the autojunk heuristic, or it tests nothing of it
	if popular == 0 {
		t.Error("no case where autojunk changes the blocks")
	}
}

func ExampleMatchingBlocks() {
	orig := []int{101, 2040, 2003, 1996, 3003, 102, 0, 0}
	pert := []int{101, 2040, 2001, 1996, 3003, 102, 0, 0}
	fmt.Println(MatchingBlocks(pert, orig, true))
	// Output: [{0 0 2} {3 3 5} {8 8 0}]
}
