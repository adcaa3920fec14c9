package report

import (
	"fmt"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/splits"
)

// smallGroupMark is splits.SmallMark for a line of a held-out metadata
// group (IdentOut's target identities) whose value rests on fewer than
// splits.MinTestCases T_test cases, "" otherwise: such a value's pass rate
// moves by more than two points with one case. (Whether its share of
// T_test is its share of the suite needs the suite's split: beluga run
// --dry-run and beluga suite stats --by say it, marked ‡.)
func smallGroupMark(l GroupLine) string {
	if l.Group == "" || l.Cases >= splits.MinTestCases {
		return ""
	}
	if !experiments.IsMetaScore(l.Score) {
		return ""
	}
	return splits.SmallMark
}

// smallGroupNote explains smallGroupMark when a line has it.
func smallGroupNote(lines []GroupLine) string {
	for _, l := range lines {
		if smallGroupMark(l) != "" {
			return fmt.Sprintf("%s fewer than %d T_test cases: a value that rests on few cases (split the suite stratified by the column, split: {stratify: COLUMN}, for its suite share).", splits.SmallMark, splits.MinTestCases)
		}
	}
	return ""
}
