package metrics

import (
	"math"
	"sort"
)

// BenjaminiHochberg returns the Benjamini–Hochberg q-value of each p-value,
// in the order given: with the m p-values sorted ascending, p_(1) ≤ … ≤
// p_(m),
//
//	q_(i) = min_{j ≥ i} min(1, p_(j)·m/j),
//
// which is scipy.stats.false_discovery_control(ps, method="bh"), computed in
// scipy's order of operations. Rejecting every hypothesis with q ≤ α controls
// the false discovery rate at α for independent or positively dependent
// tests. NaN p-values (a comparison that could not be made) are left out of
// the family and get a NaN q-value.
func BenjaminiHochberg(ps []float64) []float64 {
	idx := make([]int, 0, len(ps))
	for i, p := range ps {
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	m := float64(len(idx))
	q := make([]float64, len(ps))
	for i := range q {
		q[i] = math.NaN()
	}
	prev := math.Inf(1)
	for k := len(idx) - 1; k >= 0; k-- {
		v := ps[idx[k]] * (m / float64(k+1))
		prev = math.Min(prev, v)
		q[idx[k]] = math.Max(0, math.Min(1, prev))
	}
	return q
}
