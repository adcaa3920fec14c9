package train

import (
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

func TestRegisterTestTypeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  suites.TestType
		tr   TypeTraining
		err  string
	}{
		{"not registered with suites", "PAIRWISE", TypeTraining{Kind: KindINV}, "suites.RegisterTestType first"},
		{"twice", suites.DIR, TypeTraining{Kind: KindDIR}, "registered twice"},
		{"i.i.d. kind", suites.MFT, TypeTraining{Kind: KindIID}, "not one a suite's cases train as"},
		{"span kind", suites.MFT, TypeTraining{Kind: KindSpanINV}, "not one a suite's cases train as"},
		{"out of range", suites.MFT, TypeTraining{Kind: BatchKind(99)}, "not one a suite's cases train as"},
		{"direction on invariance", suites.INV, TypeTraining{Kind: KindINV, Direction: "not_more_conf"}, "take none"},
		{"unknown direction", suites.DIR, TypeTraining{Kind: KindDIR, Direction: "sideways"}, "unknown DIR direction"},
	} {
		if err := RegisterTestType(tc.typ, tc.tr); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

// Every batch kind has its whole behaviour in the table, and the suite
// kinds come in the order an epoch draws them (the random stream, and so
// every pinned run's result, depends on it).
func TestKindsTableComplete(t *testing.T) {
	for k, s := range kinds {
		if s.name == "" || s.cases == nil || s.loss == nil || s.penalty == nil {
			t.Errorf("kind %d: incomplete %+v", k, s)
		}
		if s.suite && (s.rows == nil) == (s.pairs == nil) {
			t.Errorf("kind %s: a suite kind holds rows or pairs, exactly one", s.name)
		}
		if got := kinds[s.span].span; got != s.span {
			t.Errorf("kind %s: span form %s is not its own span form", s.name, kinds[s.span].name)
		}
	}
	want := []BatchKind{KindMFT, KindINV, KindDIR, KindLabelDIR}
	if got := suiteKinds(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("suite kinds %v, want %v", got, want)
	}
	for bs, want := range map[int][4]int{1: {1, 1, 1, 1}, 8: {8, 4, 4, 2}, 32: {32, 16, 16, 10}} {
		for i, k := range suiteKinds() {
			if got := kinds[k].cases(bs); got != want[i] {
				t.Errorf("batch size %d: %s batches hold %d, want %d", bs, k, got, want[i])
			}
		}
	}
}
