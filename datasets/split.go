package datasets

import (
	"fmt"
	"math"
	"slices"

	"github.com/beluga-nlp/beluga/internal/nprand"
)

// Split declares a seeded, stratified split of one labelled file into
// train, dev and test parts, for data that comes without an official
// split. Dev and Test are each a fraction of the file (below 1) or a
// count of rows (a whole number, 1 or more); the rest is train. In YAML:
//
//	split: {dev: 500, test: 2000, seed: 1}
//	split: {dev: 0.1, test: 0.2}          # seed 42
//	split: {dev: 0.1, test: 0.2, group: premise}
//
// The dev part is the i.i.d. validation set and the test part the i.i.d.
// test set, as BeLUGA's halves of an official validation set are.
//
// Group names a column whose rows must stay in one part: the premise of
// NLI pairs (MNLI has about three hypotheses per premise), a question id,
// a SQuAD context, a thread, a template. Without it, rows sharing a premise
// land in train and test alike, and the test score measures memory of the
// premise. A split by group is stratified as far as whole groups allow and
// its parts' sizes come close to the declared ones (GroupIndices).
type Split struct {
	Dev  float64 `json:"dev,omitempty" yaml:"dev,omitempty"`
	Test float64 `json:"test" yaml:"test"`
	// Seed of the permutations; a declaration without one gets
	// BeLUGAHalvingSeed, and records it.
	Seed *uint32 `json:"seed,omitempty" yaml:"seed,omitempty"`
	// Group is the column whose rows stay together; a row with an empty
	// cell is a group of its own.
	Group string `json:"group,omitempty" yaml:"group,omitempty"`
}

// SeedOrDefault returns the split's seed, BeLUGAHalvingSeed when unset.
func (s Split) SeedOrDefault() uint32 {
	if s.Seed == nil {
		return BeLUGAHalvingSeed
	}
	return *s.Seed
}

// Validate checks the split's sizes against a file of n rows (n < 0: the
// sizes alone). field names the split in errors.
func (s Split) Validate(field string, n int) error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"dev", s.Dev}, {"test", s.Test}} {
		if !(p.v >= 0) || (p.v >= 1 && p.v != math.Trunc(p.v)) {
			return fmt.Errorf("%s.%s: %v: want a fraction below 1 or a whole number of rows", field, p.name, p.v)
		}
	}
	if s.Test == 0 {
		return fmt.Errorf("%s.test: required (a fraction below 1 or a number of rows)", field)
	}
	if s.Dev < 1 && s.Test < 1 && s.Dev+s.Test >= 1 {
		return fmt.Errorf("%s: dev %v + test %v leave no training rows", field, s.Dev, s.Test)
	}
	if n >= 0 {
		dev, test := s.sizes(n)
		if dev+test >= n {
			return fmt.Errorf("%s: dev %d + test %d rows leave none of the file's %d for training", field, dev, test, n)
		}
	}
	return nil
}

// sizes returns the dev and test row counts for a file of n rows.
func (s Split) sizes(n int) (dev, test int) {
	size := func(v float64) int {
		if v >= 1 {
			return int(v)
		}
		return int(math.Round(v * float64(n)))
	}
	return size(s.Dev), size(s.Test)
}

// Indices splits the rows of labels (one class a row) into train, dev and
// test, each in file order, with the declared sizes. It is stratified:
// each class's share of test is apportioned by largest remainder, then its
// share of dev from what test left (the quotas these splits have had
// since they were introduced, so that a run's rows stay its rows), and
// the rows drawn as Stratify draws them.
func (s Split) Indices(labels []int) (train, dev, test []int, err error) {
	n := len(labels)
	if err := s.Validate("split", n); err != nil {
		return nil, nil, nil, err
	}
	nDev, nTest := s.sizes(n)
	sizes := strataSizes(labels)
	testQ := apportion(nTest, sizes)
	rest := make([]int, len(sizes))
	for i := range sizes {
		rest[i] = sizes[i] - testQ[i]
	}
	devQ := apportion(nDev, rest)
	q := make([][]int, len(sizes))
	for i := range q {
		q[i] = []int{testQ[i], devQ[i]}
	}
	train, dev, test = draw(labels, q, s.SeedOrDefault())
	return train, dev, test, nil
}

// Stratify splits the items of strata (one stratum an item: a value of a
// suite's metadata column, or a class) into train, dev and test parts of
// nDev and nTest items, each part in item order. Each stratum is split in
// the whole's proportions with a controlled rounding (quotas): every
// stratum's count in every part is within one item of its exact share,
// and the parts have exactly the given sizes. The items are drawn as
// Indices draws its rows: each stratum's items, in order, shuffled with
// one permutation of numpy's default_rng(seed) stream, stratum after
// stratum; a shuffled stratum gives its first items to test, the next to
// dev. splits.AssignStratified splits each functionality of a suite so.
func Stratify(strata []int, nDev, nTest int, seed uint32) (train, dev, test []int) {
	sizes := strataSizes(strata)
	return draw(strata, quotas(sizes, []int{nTest, nDev, len(strata) - nTest - nDev}), seed)
}

// strataSizes returns each stratum's size, in stratum order.
func strataSizes(strata []int) []int {
	classes, byClass := classRows(strata)
	sizes := make([]int, len(classes))
	for i, c := range classes {
		sizes[i] = len(byClass[c])
	}
	return sizes
}

// draw gives each stratum's quota q[i] = {test, dev} of its items, drawn
// with one permutation of default_rng(seed) per stratum in stratum order;
// the rest go to train. Each part is returned in item order.
func draw(strata []int, q [][]int, seed uint32) (train, dev, test []int) {
	classes, byClass := classRows(strata)
	gen := nprand.NewGenerator(seed)
	for i, c := range classes {
		rows := byClass[c]
		perm := nprand.Permutation(gen, len(rows))
		for k, p := range perm {
			switch {
			case k < q[i][0]:
				test = append(test, rows[p])
			case k < q[i][0]+q[i][1]:
				dev = append(dev, rows[p])
			default:
				train = append(train, rows[p])
			}
		}
	}
	slices.Sort(train)
	slices.Sort(dev)
	slices.Sort(test)
	return train, dev, test
}

// GroupIndices splits rows as Indices does, keeping the rows of each
// group (groups[i] is row i's; "" is a group of its own) in one part.
//
// The test and dev parts' sizes and per-class shares are Indices' targets.
// The groups, in order of first appearance, are shuffled with one
// permutation of numpy's default_rng(seed) stream and then taken largest
// first (a stable sort, so the shuffle orders groups of one size). A group
// goes to test or dev if that brings the part's row count nearer its
// target and more of the group's rows are of classes the part still lacks
// than not — to the one of the two where that margin is larger (test on a
// tie); otherwise to train. Small groups, last, fill what large ones leave:
// on 9,815 MNLI-like rows in premises of one to five (TestGroupSplitKeeps
// GroupsWholeAndStratified) dev and test get exactly 500 and 2,000 rows,
// each class's share within a point of the file's.
func (s Split) GroupIndices(labels []int, groups []string) (train, dev, test []int, err error) {
	n := len(labels)
	if len(groups) != n {
		return nil, nil, nil, fmt.Errorf("split by group: %d groups for %d rows", len(groups), n)
	}
	if err := s.Validate("split", n); err != nil {
		return nil, nil, nil, err
	}
	nDev, nTest := s.sizes(n)
	classes, byClass := classRows(labels)
	classOf := map[int]int{}
	sizes := make([]int, len(classes))
	for i, c := range classes {
		classOf[c] = i
		sizes[i] = len(byClass[c])
	}
	testQ := apportion(nTest, sizes)
	rest := make([]int, len(classes))
	for i := range sizes {
		rest[i] = sizes[i] - testQ[i]
	}
	devQ := apportion(nDev, rest)

	type group struct {
		rows   []int
		counts []int // rows per class index
	}
	var gs []*group
	byName := map[string]*group{}
	for i, name := range groups {
		g := byName[name]
		if g == nil || name == "" {
			g = &group{counts: make([]int, len(classes))}
			gs = append(gs, g)
			if name != "" {
				byName[name] = g
			}
		}
		g.rows = append(g.rows, i)
		g.counts[classOf[labels[i]]]++
	}
	perm := nprand.Permutation(nprand.NewGenerator(s.SeedOrDefault()), len(gs))
	order := make([]*group, len(gs))
	for k, p := range perm {
		order[k] = gs[p]
	}
	slices.SortStableFunc(order, func(a, b *group) int { return len(b.rows) - len(a.rows) })

	// Parts 0 (test) and 1 (dev): target sizes, per-class quotas, fill.
	target := [2]int{nTest, nDev}
	quota := [2][]int{testQ, devQ}
	have := [2][]int{make([]int, len(classes)), make([]int, len(classes))}
	size := [2]int{}
	var parts [3][]int
	for _, g := range order {
		best, bestScore := 2, 0.0
		for p := range 2 {
			if abs(size[p]+len(g.rows)-target[p]) >= abs(size[p]-target[p]) {
				continue
			}
			need := 0 // the group's rows of classes the part lacks, less the others
			for c, k := range g.counts {
				lack := min(k, max(quota[p][c]-have[p][c], 0))
				need += 2*lack - k
			}
			if score := float64(need) / float64(len(g.rows)); score > bestScore {
				best, bestScore = p, score
			}
		}
		if best < 2 {
			size[best] += len(g.rows)
			for c, k := range g.counts {
				have[best][c] += k
			}
		}
		parts[best] = append(parts[best], g.rows...)
	}
	for p, name := range []string{"test", "dev"} {
		if target[p] > 0 && size[p] == 0 {
			return nil, nil, nil, fmt.Errorf("split by group: no group fits the %s part (%d rows wanted; the largest group has %d): groups too large for the part", name, target[p], len(order[0].rows))
		}
	}
	for p := range parts {
		slices.Sort(parts[p])
	}
	return parts[2], parts[1], parts[0], nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// classRows returns the classes in order and each class's rows in file
// order.
func classRows(labels []int) ([]int, map[int][]int) {
	byClass := map[int][]int{}
	for i, l := range labels {
		byClass[l] = append(byClass[l], i)
	}
	classes := slices.Sorted(func(yield func(int) bool) {
		for c := range byClass {
			if !yield(c) {
				return
			}
		}
	})
	return classes, byClass
}

// quotas divides strata of the given sizes among parts of the given sizes
// (both summing to n): cell [v][p] is how many of stratum v go to part p.
// Rows sum to the strata's sizes, columns to the parts', and every cell is
// its exact share sizes[v]·parts[p]/n rounded down or up — a controlled
// rounding, which always exists. The floors come first; the units left
// go to the cells with the largest fractions first, and where that greedy
// pass leaves a stratum or a part short, augmenting paths (a max flow over
// the cells with a fraction) move units until every margin holds.
func quotas(sizes, parts []int) [][]int {
	n := 0
	for _, s := range sizes {
		n += s
	}
	r := rounding{frac: make([][]float64, len(sizes)), up: make([][]bool, len(sizes)), rowLeft: slices.Clone(sizes), colLeft: slices.Clone(parts)}
	q := make([][]int, len(sizes))
	for v := range sizes {
		q[v], r.frac[v], r.up[v] = make([]int, len(parts)), make([]float64, len(parts)), make([]bool, len(parts))
		for p := range parts {
			if n == 0 {
				continue
			}
			e := float64(sizes[v]) * float64(parts[p]) / float64(n)
			q[v][p] = int(math.Floor(e + 1e-9))
			r.frac[v][p] = e - float64(q[v][p])
			r.rowLeft[v] -= q[v][p]
			r.colLeft[p] -= q[v][p]
		}
	}
	r.greedy()
	for v := range sizes {
		for r.rowLeft[v] > 0 && r.augment(v) {
		}
	}
	for v := range q {
		for p := range q[v] {
			if r.up[v][p] {
				q[v][p]++
			}
		}
	}
	return q
}

// rounding is quotas' state: each cell's fraction above its floor, which
// cells got their extra unit, and the units each stratum (row) and part
// (column) still lacks.
type rounding struct {
	frac             [][]float64
	up               [][]bool
	rowLeft, colLeft []int
}

// canUp says whether cell (v, p) may get an extra unit: its exact share
// has a fraction.
func (r *rounding) canUp(v, p int) bool { return r.frac[v][p] > 1e-9 }

// greedy gives the extra units to the cells with the largest fractions
// first, while their stratum and part still lack units.
func (r *rounding) greedy() {
	type cell struct{ v, p int }
	var cells []cell
	for v := range r.frac {
		for p := range r.frac[v] {
			if r.canUp(v, p) {
				cells = append(cells, cell{v, p})
			}
		}
	}
	slices.SortStableFunc(cells, func(a, b cell) int {
		switch fa, fb := r.frac[a.v][a.p], r.frac[b.v][b.p]; {
		case fa > fb:
			return -1
		case fa < fb:
			return 1
		}
		return 0
	})
	for _, c := range cells {
		if r.rowLeft[c.v] > 0 && r.colLeft[c.p] > 0 {
			r.up[c.v][c.p] = true
			r.rowLeft[c.v]--
			r.colLeft[c.p]--
		}
	}
}

// augment moves one unit to stratum v0 along an augmenting path: from v0
// an unused cell to a part, from a part a used cell back to another
// stratum, until a part that lacks units is reached; the path's cells
// flip. It reports whether it found one (it always does for margins that
// sum alike).
func (r *rounding) augment(v0 int) bool {
	V, P := len(r.frac), len(r.colLeft)
	fromV := make([]int, P) // the stratum a part was reached from
	fromP := make([]int, V) // the part a stratum was reached from
	for i := range fromV {
		fromV[i] = -1
	}
	seen := make([]bool, V)
	seen[v0] = true
	queue, end := []int{v0}, -1
	for len(queue) > 0 && end < 0 {
		v := queue[0]
		queue = queue[1:]
		for p := 0; p < P && end < 0; p++ {
			if fromV[p] >= 0 || r.up[v][p] || !r.canUp(v, p) {
				continue
			}
			fromV[p] = v
			if r.colLeft[p] > 0 {
				end = p
				continue
			}
			for w := range seen {
				if !seen[w] && r.up[w][p] {
					seen[w], fromP[w] = true, p
					queue = append(queue, w)
				}
			}
		}
	}
	if end < 0 {
		return false
	}
	r.colLeft[end]--
	r.rowLeft[v0]--
	for p := end; ; {
		v := fromV[p]
		r.up[v][p] = true
		if v == v0 {
			return true
		}
		p = fromP[v]
		r.up[v][p] = false
	}
}

// apportion divides total among groups in proportion to their sizes by
// largest remainder (ties to the earlier group), never giving a group more
// than its size.
func apportion(total int, sizes []int) []int {
	sum := 0
	for _, s := range sizes {
		sum += s
	}
	out := make([]int, len(sizes))
	if sum == 0 || total <= 0 {
		return out
	}
	type rem struct {
		i int
		r float64
	}
	var rems []rem
	given := 0
	for i, s := range sizes {
		q := float64(total) * float64(s) / float64(sum)
		out[i] = int(math.Floor(q))
		given += out[i]
		rems = append(rems, rem{i, q - math.Floor(q)})
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		switch {
		case a.r > b.r:
			return -1
		case a.r < b.r:
			return 1
		}
		return 0
	})
	for k := 0; given < total && k < len(rems); k++ {
		if i := rems[k].i; out[i] < sizes[i] {
			out[i]++
			given++
		}
	}
	return out
}

// Parts reads a file declared with a Split and returns its three parts
// (train, dev, test) with the line each row starts on. A file without
// Split is refused, so that one meant to be used whole is not split by
// mistake.
func (s FileSpec) Parts() (parts [3][]Example, lines [3][]int, err error) {
	rows, err := s.SplitRows()
	if err != nil {
		return parts, lines, err
	}
	for k, r := range rows {
		parts[k], lines[k] = r.Examples, r.Lines
	}
	return parts, lines, nil
}

// SplitRows reads a file declared with a Split and returns its three parts
// (train, dev, test), each with its lines; the first carries the whole
// file's label counts and dropped rows (Rows.FileLabels, Rows.Dropped).
func (s FileSpec) SplitRows() (parts [3]Rows, err error) {
	if s.Split == nil {
		return parts, fmt.Errorf("data file %s: not declared to be split (split: {dev: …, test: …})", s.Path)
	}
	all, err := s.ReadRows()
	if err != nil {
		return parts, err
	}
	labels := make([]int, len(all.Examples))
	groups := make([]string, len(all.Examples))
	for i, x := range all.Examples {
		labels[i], groups[i] = x.Label, x.Group
	}
	var train, dev, test []int
	if s.Split.Group != "" {
		train, dev, test, err = s.Split.GroupIndices(labels, groups)
	} else {
		train, dev, test, err = s.Split.Indices(labels)
	}
	if err != nil {
		return parts, fmt.Errorf("data file %s: %w", s.Path, err)
	}
	for k, idx := range [3][]int{train, dev, test} {
		parts[k] = Rows{Examples: Pick(all.Examples, idx), Lines: Pick(all.Lines, idx)}
	}
	parts[0].FileLabels, parts[0].Dropped = all.FileLabels, all.Dropped
	return parts, nil
}

// Sizes returns the dev and test row counts the split declares for a file
// of n rows (a split by group comes as close as its groups allow).
func (s Split) Sizes(n int) (dev, test int) { return s.sizes(n) }
