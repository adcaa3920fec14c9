package train

import (
	"math"
	"math/rand/v2"
	"slices"
)

// trainSize is how many of n i.i.d. training examples a run trains on:
// TrainSize, or TrainFraction of n rounded to the nearest whole number (at
// least one); n when neither is set or the size is not below n.
func (s *RunSpec) trainSize(n int) int {
	k := n
	switch {
	case s.TrainSize > 0:
		k = s.TrainSize
	case s.TrainFraction > 0:
		k = max(1, int(math.Round(s.TrainFraction*float64(n))))
	}
	return min(k, n)
}

// trainPart is the part of a run's i.i.d. training examples it trains on:
// the first IIDLimit when set, subsampled to trainSize by label.
func trainPart[T any](s *RunSpec, xs []T, label func(T) int) []T {
	if s.IIDLimit > 0 && s.IIDLimit < len(xs) {
		xs = xs[:s.IIDLimit]
	}
	return subsample(xs, label, s.trainSize(len(xs)), s.Seed)
}

// subsample keeps k of xs, drawn with seed and stratified by label: each
// label keeps its share of k (largest remainders get the rounding), drawn
// uniformly without replacement from its examples; the kept examples stay
// in their order in xs. Stratifying keeps a small training set's label
// balance that of the full one, so a learning curve's points differ in
// size, not in class prior.
func subsample[T any](xs []T, label func(T) int, k int, seed uint64) []T {
	if k >= len(xs) {
		return xs
	}
	byLabel := map[int][]int{}
	var labels []int
	for i, x := range xs {
		l := label(x)
		if _, ok := byLabel[l]; !ok {
			labels = append(labels, l)
		}
		byLabel[l] = append(byLabel[l], i)
	}
	slices.Sort(labels)
	quota := make([]int, len(labels))
	rem := make([]float64, len(labels))
	left := k
	for j, l := range labels {
		exact := float64(k) * float64(len(byLabel[l])) / float64(len(xs))
		quota[j] = int(exact)
		rem[j] = exact - float64(quota[j])
		left -= quota[j]
	}
	order := make([]int, len(labels))
	for j := range order {
		order[j] = j
	}
	// Largest remainder first; ties to the smaller label.
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case rem[a] > rem[b]:
			return -1
		case rem[a] < rem[b]:
			return 1
		}
		return 0
	})
	for _, j := range order[:left] {
		quota[j]++
	}
	rng := rand.New(rand.NewPCG(seed, 0x7d51e))
	var kept []int
	for j, l := range labels {
		idx := slices.Clone(byLabel[l])
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		kept = append(kept, idx[:quota[j]]...)
	}
	slices.Sort(kept)
	out := make([]T, len(kept))
	for i, j := range kept {
		out[i] = xs[j]
	}
	return out
}
