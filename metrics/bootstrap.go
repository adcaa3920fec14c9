package metrics

import (
	"fmt"
	"math"
	"slices"

	"github.com/beluga-nlp/beluga/internal/nprand"
)

// BootstrapOptions configures a percentile bootstrap.
type BootstrapOptions struct {
	// Resamples is B, the number of bootstrap replicates; 0 means
	// DefaultResamples.
	Resamples int
	// Level is the interval's coverage in (0, 1), e.g. 0.95.
	Level float64
	// Seed seeds numpy's legacy RandomState, so that
	// np.random.RandomState(seed).randint draws the same resamples.
	Seed uint32
	// Clusters makes the bootstrap hierarchical: the groups named in a
	// cluster are resampled as functionalities first, then as cases
	// within each drawn functionality. Groups in no cluster are resampled
	// by their cases alone.
	Clusters []Cluster
}

// Cluster is one first-level unit of a hierarchical bootstrap: a suite's n
// functionalities, seen through one or several blocks of n groups each
// (block b's k-th group holds functionality k's cases as one score or one
// seed saw them). Every replicate draws n functionalities with replacement,
// u = randint(0, n, size=n), once for the whole cluster, so that every
// score and seed of a row resamples the same functionalities; position k
// of block b then holds the cases of group Blocks[b][u_k], resampled to
// their own size.
type Cluster struct {
	Blocks [][]int
}

// DefaultResamples is the number of bootstrap replicates when none is given
// (HuggingFace evaluate's and scipy.stats.bootstrap's default is larger,
// 9,999; 1,000 keeps a 25-row table with intervals on every cell quick while
// moving the endpoints of a 95 % interval by well under a point).
const DefaultResamples = 1000

// Interval is a confidence interval [Lo, Hi].
type Interval struct {
	Lo, Hi float64
}

// Bootstrap is a stratified percentile bootstrap: each replicate resamples
// every group of groups with replacement, independently and to its own
// size, and evaluates stat on the resampled groups; the interval's ends are
// the (1−Level)/2 and (1+Level)/2 quantiles of the replicates that are not
// NaN, interpolated linearly between order statistics (numpy's
// nanpercentile). Groups are the strata the statistic averages over — the
// test cases of each functionality for a suite score, plus the i.i.d.
// examples for G — so a resample never moves a case into another
// functionality.
//
// With Clusters the bootstrap is hierarchical (two-stage): see Cluster.
// The stat then sees at a block's position k the resampled cases of the
// functionality drawn for k, so a suite score's interval also holds the
// uncertainty of which functionalities the suite happens to have.
//
// Draws are numpy's, replicate by replicate: first each cluster's
// RandomState(Seed).randint(0, n, size=n), in order; then group by group,
// randint(0, len(src), size=len(src)) of the group's source (itself, or
// the functionality drawn for its position); an independent numpy script
// reproduces the interval exactly (testdata/gen_statistics.py). stat must
// not keep the slices it is given.
func Bootstrap(groups [][]float64, stat func(groups [][]float64) float64, opt BootstrapOptions) (Interval, error) {
	ivs, err := BootstrapAll(groups, []func([][]float64) float64{stat}, opt)
	if err != nil {
		return Interval{}, err
	}
	return ivs[0], nil
}

// BootstrapAll is Bootstrap of several statistics from the same resamples:
// one draw of every group per replicate serves them all, which is what makes
// intervals on every cell of a table affordable. Each statistic's interval
// is the one Bootstrap would give it alone with the same groups.
func BootstrapAll(groups [][]float64, stats []func(groups [][]float64) float64, opt BootstrapOptions) ([]Interval, error) {
	if !(opt.Level > 0 && opt.Level < 1) {
		return nil, fmt.Errorf("bootstrap: confidence level %v is not in (0, 1)", opt.Level)
	}
	b := opt.Resamples
	if b == 0 {
		b = DefaultResamples
	}
	if b < 0 {
		return nil, fmt.Errorf("bootstrap: %d resamples", b)
	}
	// at[i] locates group i in a cluster: which cluster, and which
	// position; -1 for a group resampled by cases alone.
	type place struct{ cluster, pos, block int }
	at := make([]place, len(groups))
	for i := range at {
		at[i] = place{-1, 0, 0}
	}
	longest := 0
	for _, g := range groups {
		longest = max(longest, len(g))
	}
	for c, cl := range opt.Clusters {
		for bi, blk := range cl.Blocks {
			if len(blk) != len(cl.Blocks[0]) {
				return nil, fmt.Errorf("bootstrap: cluster %d: block %d has %d groups, block 0 %d", c, bi, len(blk), len(cl.Blocks[0]))
			}
			for k, i := range blk {
				if i < 0 || i >= len(groups) {
					return nil, fmt.Errorf("bootstrap: cluster %d: group %d out of range (%d groups)", c, i, len(groups))
				}
				if at[i].cluster >= 0 {
					return nil, fmt.Errorf("bootstrap: group %d is in two cluster positions", i)
				}
				at[i] = place{c, k, bi}
			}
		}
	}
	draws := make([][]int, len(opt.Clusters))
	rng := nprand.NewRandomState(opt.Seed)
	res := make([][]float64, len(groups))
	for i := range groups {
		res[i] = make([]float64, longest)
	}
	values := make([][]float64, len(stats))
	for range b {
		for c, cl := range opt.Clusters {
			if len(cl.Blocks) == 0 {
				continue
			}
			n := len(cl.Blocks[0])
			draws[c] = draws[c][:0]
			for range n {
				draws[c] = append(draws[c], int(nprand.Interval(rng, uint64(n-1))))
			}
		}
		for i, g := range groups {
			if p := at[i]; p.cluster >= 0 {
				g = groups[opt.Clusters[p.cluster].Blocks[p.block][draws[p.cluster][p.pos]]]
			}
			res[i] = res[i][:len(g)]
			if len(g) == 0 {
				continue
			}
			max := uint64(len(g) - 1)
			for j := range res[i] {
				res[i][j] = g[nprand.Interval(rng, max)]
			}
		}
		for k, stat := range stats {
			if s := stat(res); !math.IsNaN(s) {
				values[k] = append(values[k], s)
			}
		}
	}
	out := make([]Interval, len(stats))
	for k, v := range values {
		if len(v) == 0 {
			out[k] = Interval{math.NaN(), math.NaN()}
			continue
		}
		slices.Sort(v)
		out[k] = Interval{Percentile(v, 100*(1-opt.Level)/2), Percentile(v, 100*(1+opt.Level)/2)}
	}
	return out, nil
}

// Percentile is numpy's percentile(sorted, q) with linear interpolation:
// the value at fractional rank q/100·(n−1) of the sorted values.
// The values must be sorted.
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	// numpy's virtual index for method "linear", (n−1)·q, in its order of
	// operations so that the rounding agrees: numpy computes it so, not as
	// the equal n·q + (α + q·(1−α−β)) − 1 of its other methods, and the two
	// differ in the last bit (an equal-mass bin edge one ulp off).
	n := float64(len(sorted))
	q /= 100
	pos := (n - 1) * q
	if pos <= 0 {
		return sorted[0]
	}
	lo := int(math.Floor(pos))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(lo)
	// numpy's _lerp: a + (b−a)·t, from the upper end when t ≥ ½.
	a, b := sorted[lo], sorted[lo+1]
	if f >= 0.5 {
		return b - (b-a)*(1-f)
	}
	return a + (b-a)*f
}

// PassRateStat is the pass rate in percent of one group of per-case hits
// (1 pass, 0 fail, NaN filtered): the statistic of a functionality's
// interval.
func PassRateStat(groups [][]float64) float64 { return 100 * NanMean(groups[0]) }

// SuiteScoreStat is BeLUGA's suite score in percent of groups of per-case
// hits, one group per functionality: the mean over functionalities of their
// pass rates, leaving out functionalities whose cases are all filtered.
func SuiteScoreStat(groups [][]float64) float64 {
	s, n := 0.0, 0
	for _, g := range groups {
		if r := NanMean(g); !math.IsNaN(r) {
			s += r
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return 100 * s / float64(n)
}

// GStat is G in percent: groups[0] holds the i.i.d. hits (1 correct, 0
// wrong), the rest one group of per-case hits per functionality; G is the
// harmonic mean of the i.i.d. accuracy and the suite score.
func GStat(groups [][]float64) float64 {
	return HarmonicMean(100*Mean(groups[0]), SuiteScoreStat(groups[1:]))
}
