package experiments

import (
	"errors"
	"strings"
	"testing"
)

func TestSummaryErrCountsRuns(t *testing.T) {
	for _, tc := range []struct {
		total int
		want  string
	}{{1, "1 of 1 run failed:"}, {3, "1 of 3 runs failed:"}} {
		s := Summary{Total: tc.total, Failed: []FailedRun{{ID: "abc", Error: errors.New("boom")}}}
		if err := s.Err(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%d runs: %v, want %q", tc.total, err, tc.want)
		}
	}
}
