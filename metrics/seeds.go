package metrics

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// MeanSE returns the mean of xs and its standard error, the sample standard
// deviation (n−1 in the denominator) over √n: scipy.stats.sem. DomainBed
// reports mean ± SE over trials the same way, except that it divides by n
// in the standard deviation (numpy's default), which understates the error
// of 2–5 seeds by √((n−1)/n). One value has no standard error (NaN); NaN
// values are left out.
func MeanSE(xs []float64) (mean, se float64) {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	mean = Mean(v)
	if len(v) < 2 {
		return mean, math.NaN()
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	n := float64(len(v))
	return mean, math.Sqrt(ss/(n-1)) / math.Sqrt(n)
}

// PairedTTest is the two-sided paired t-test of a against b
// (scipy.stats.ttest_rel): t = mean(d)/SE(d) over the differences
// d = b − a, with n − 1 degrees of freedom. It is the test between two
// methods over seeds, each seed's value paired with the other method's
// value of the same seed. Pairs with a NaN are left out. As in scipy, equal
// non-zero differences give t = ±∞ and p = 0, all-zero differences and
// fewer than two pairs give NaN.
func PairedTTest(a, b []float64) (float64, error) {
	if len(a) != len(b) {
		return math.NaN(), fmt.Errorf("paired t-test: %d and %d values", len(a), len(b))
	}
	var d []float64
	for i := range a {
		if x := b[i] - a[i]; !math.IsNaN(x) {
			d = append(d, x)
		}
	}
	mean, se := MeanSE(d)
	if math.IsNaN(se) || (se == 0 && mean == 0) {
		return math.NaN(), nil
	}
	if se == 0 {
		return 0, nil
	}
	st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}
	return 2 * st.Survival(math.Abs(mean/se)), nil
}

// Spread summarises one value over seeds: how far apart the seeds land,
// which a mean ± SE hides (BERT's HANS accuracy on one heuristic ranges
// 6 %–54 % over 100 seeds, McCoy et al. 2020). Quartiles are numpy's
// percentile with linear interpolation, so IQR = Q3 − Q1 is
// np.subtract(*np.percentile(x, [75, 25])).
type Spread struct {
	// N is the number of values that are not NaN.
	N                        int
	Min, Q1, Median, Q3, Max float64
}

// Range is Max − Min.
func (s Spread) Range() float64 { return s.Max - s.Min }

// IQR is the interquartile range Q3 − Q1.
func (s Spread) IQR() float64 { return s.Q3 - s.Q1 }

// SpreadOf is the Spread of xs, NaN values left out; with none left every
// statistic is NaN.
func SpreadOf(xs []float64) Spread {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		nan := math.NaN()
		return Spread{Min: nan, Q1: nan, Median: nan, Q3: nan, Max: nan}
	}
	slices.Sort(v)
	return Spread{N: len(v), Min: v[0], Q1: Percentile(v, 25), Median: Percentile(v, 50), Q3: Percentile(v, 75), Max: v[len(v)-1]}
}
