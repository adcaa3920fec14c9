package train

import (
	"strconv"

	"github.com/beluga-nlp/beluga/metrics"
)

// SanityInput is what the sanity checks (metrics.Sanity) read of a run:
// its i.i.d. predictions and gold labels by class name, its suite
// verdicts and the losses of its suite batches (the curve's points of
// every kind but the i.i.d. ones), in step order.
func (r *Result) SanityInput() metrics.SanityInput {
	in := metrics.SanityInput{IIDPredicted: r.classNames(r.IIDPredicted), IIDGold: r.classNames(r.IIDGold), Suite: r.Suite}
	for _, p := range r.Curve {
		if p.Kind == KindIID.String() || p.Kind == KindSpanIID.String() {
			continue
		}
		in.SuiteLosses = append(in.SuiteLosses, p.Loss)
	}
	return in
}

// classNames names classes by the task's labels; a class outside them
// (an unparsed answer's -1) by its number.
func (r *Result) classNames(cs []int) []string {
	if cs == nil {
		return nil
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = strconv.Itoa(c)
		if c >= 0 && c < len(r.Labels) {
			out[i] = r.Labels[c]
		}
	}
	return out
}
