package perturb

import (
	"fmt"
	"strings"

	"github.com/beluga-nlp/beluga/suites"
)

// dirPresets are the DIR expectations of CheckList's sentiment release suite
// (REFERENCE 2.3), with BeLUGA's training direction for each.
var dirPresets = []struct {
	name   string
	expect suites.Expectation
	train  suites.Training
}{
	{"not_more_negative", suites.Expectation{Kind: suites.ExpectPositiveChange, Tolerance: 0.1, Direction: "not_more_negative", Agg: suites.AggAllExceptFirst},
		suites.Training{Direction: "not_less_2"}},
	{"not_more_positive", suites.Expectation{Kind: suites.ExpectPositiveChange, Tolerance: 0.1, Direction: "not_more_positive", Agg: suites.AggAllExceptFirst},
		suites.Training{Direction: "not_less_0"}},
	{"not_less_confident", suites.Expectation{Kind: suites.ExpectMonotonic, Increasing: true, Tolerance: 0.1, Direction: "not_less_confident",
		Slice: "orig_pred != 1", SliceAgg: suites.AggAllExceptFirst, Agg: suites.AggAllExceptFirst}, suites.Training{Direction: "not_less_conf"}},
	{"not_more_confident", suites.Expectation{Kind: suites.ExpectMonotonic, Tolerance: 0.1, Direction: "not_more_confident",
		Slice: "orig_pred != 1", SliceAgg: suites.AggAllExceptFirst, Agg: suites.AggAllExceptFirst}, suites.Training{Direction: "not_more_conf"}},
}

// Directions names the DIR presets.
func Directions() []string {
	var out []string
	for _, p := range dirPresets {
		out = append(out, p.name)
	}
	return out
}

// DirExpectation returns the evaluation and training rules of a DIR preset:
// not_more_negative / not_more_positive (CheckList's "add positive / negative
// phrases"), not_less_confident / not_more_confident (its intensifiers and
// reducers, scored on cases whose original is not predicted neutral).
func DirExpectation(name string) (suites.Expectation, suites.Training, error) {
	for _, p := range dirPresets {
		if p.name == name {
			return p.expect, p.train, nil
		}
	}
	return suites.Expectation{}, suites.Training{}, fmt.Errorf("unknown direction %q (want %s)", name, strings.Join(Directions(), ", "))
}
