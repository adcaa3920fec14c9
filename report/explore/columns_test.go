package explore

import (
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
)

// A table cell links to the runs that produced it: the seen run for the
// i.i.d. score and an evaluation set's, the seen and held-out runs for a
// held-out G, the baseline's own run for the baseline's cells.
func TestColumnScores(t *testing.T) {
	for _, tc := range []struct {
		measure  string
		baseline bool
		want     []string
	}{
		{"IID", false, []string{experiments.ScoreSeen}},
		{"IID:davidson", false, []string{experiments.ScoreSeen}},
		{"IID:davidson", true, []string{experiments.ScoreIID}},
		{"G_seen", false, []string{experiments.ScoreSeen}},
		{"G_class", false, []string{experiments.ScoreSeen, experiments.ScoreClass}},
		{"T_type", false, []string{experiments.ScoreType}},
		{"Avg", false, nil},
	} {
		if got := columnScores(tc.measure, tc.baseline); !slices.Equal(got, tc.want) {
			t.Errorf("columnScores(%q, %v) = %v, want %v", tc.measure, tc.baseline, got, tc.want)
		}
	}
}
