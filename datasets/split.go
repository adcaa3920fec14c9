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
//
// The dev part is the i.i.d. validation set and the test part the i.i.d.
// test set, as BeLUGA's halves of an official validation set are.
type Split struct {
	Dev  float64 `json:"dev,omitempty" yaml:"dev,omitempty"`
	Test float64 `json:"test" yaml:"test"`
	// Seed of the permutations; a declaration without one gets
	// BeLUGAHalvingSeed, and records it.
	Seed *uint32 `json:"seed,omitempty" yaml:"seed,omitempty"`
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
// test, each in file order. It is stratified: each class is split in the
// file's proportions, its share of a part apportioned by largest
// remainder so that the parts have exactly the declared sizes. Each
// class's rows, in file order, are shuffled with one permutation of
// numpy's default_rng(seed) stream, drawn class after class in class
// order; a shuffled class gives its first rows to test, the next to dev.
func (s Split) Indices(labels []int) (train, dev, test []int, err error) {
	n := len(labels)
	if err := s.Validate("split", n); err != nil {
		return nil, nil, nil, err
	}
	nDev, nTest := s.sizes(n)
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
	sizes := make([]int, len(classes))
	for i, c := range classes {
		sizes[i] = len(byClass[c])
	}
	testQ := apportion(nTest, sizes)
	rest := make([]int, len(classes))
	for i := range sizes {
		rest[i] = sizes[i] - testQ[i]
	}
	devQ := apportion(nDev, rest)
	gen := nprand.NewGenerator(s.SeedOrDefault())
	for i, c := range classes {
		rows := byClass[c]
		perm := nprand.Permutation(gen, len(rows))
		for k, p := range perm {
			switch {
			case k < testQ[i]:
				test = append(test, rows[p])
			case k < testQ[i]+devQ[i]:
				dev = append(dev, rows[p])
			default:
				train = append(train, rows[p])
			}
		}
	}
	slices.Sort(train)
	slices.Sort(dev)
	slices.Sort(test)
	return train, dev, test, nil
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
// with the line each row starts on. A file without Split is refused, so
// that one meant to be used whole is not split by mistake.
func (s FileSpec) Parts() (parts [3][]Example, lines [3][]int, err error) {
	if s.Split == nil {
		return parts, lines, fmt.Errorf("data file %s: not declared to be split (split: {dev: …, test: …})", s.Path)
	}
	xs, ls, err := s.ReadLines()
	if err != nil {
		return parts, lines, err
	}
	labels := make([]int, len(xs))
	for i, x := range xs {
		labels[i] = x.Label
	}
	train, dev, test, err := s.Split.Indices(labels)
	if err != nil {
		return parts, lines, fmt.Errorf("data file %s: %w", s.Path, err)
	}
	for k, idx := range [3][]int{train, dev, test} {
		parts[k], lines[k] = Pick(xs, idx), Pick(ls, idx)
	}
	return parts, lines, nil
}
