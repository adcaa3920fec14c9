package train

import (
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/metrics"
)

// A run's sanity input names its i.i.d. classes by the task's labels (an
// unparsed answer's -1 by its number) and keeps the losses of the suite
// batches only: the i.i.d. and span i.i.d. points are never judged.
func TestResultSanityInput(t *testing.T) {
	r := &Result{Labels: []string{"non-hateful", "hateful"}, IIDPredicted: []int{1, 0, -1}, IIDGold: []int{0, 1, 1},
		Suite: &metrics.Result{},
		Curve: []CurvePoint{{Kind: "MFT", Loss: 0.7}, {Kind: "iid", Loss: 100}, {Kind: "span-iid", Loss: 100},
			{Kind: "span-MFT", Loss: 0.6}, {Kind: "INV", Loss: 0.5}, {Kind: "label-DIR", Loss: 0.4}}}
	in := r.SanityInput()
	if want := []string{"hateful", "non-hateful", "-1"}; !slices.Equal(in.IIDPredicted, want) {
		t.Errorf("IIDPredicted %q, want %q", in.IIDPredicted, want)
	}
	if want := []string{"non-hateful", "hateful", "hateful"}; !slices.Equal(in.IIDGold, want) {
		t.Errorf("IIDGold %q, want %q", in.IIDGold, want)
	}
	if want := []float64{0.7, 0.6, 0.5, 0.4}; !slices.Equal(in.SuiteLosses, want) {
		t.Errorf("SuiteLosses %v, want %v", in.SuiteLosses, want)
	}
	if in.Suite != r.Suite {
		t.Error("the suite verdicts are not the run's")
	}
}

// A run whose suite loss stays flat is flagged though its i.i.d. loss
// falls (counted, the i.i.d. points would lower the later windows' means).
func TestResultSanitySuiteNotLearnt(t *testing.T) {
	var curve []CurvePoint
	for i := range 20 {
		curve = append(curve, CurvePoint{Step: i, Kind: "MFT", Loss: 0.7}, CurvePoint{Step: i, Kind: "iid", Loss: 1 - 0.04*float64(i)})
	}
	flags := metrics.Sanity((&Result{Curve: curve}).SanityInput())
	if len(flags) != 1 || flags[0].Kind != metrics.FlagSuiteNotLearnt {
		t.Errorf("flags %+v, want %s", flags, metrics.FlagSuiteNotLearnt)
	}
}
