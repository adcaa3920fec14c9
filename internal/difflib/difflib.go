// Package difflib is a port of the part of CPython's difflib.SequenceMatcher
// that BeLUGA's SQuAD invariance loss depends on: get_matching_blocks with
// no junk predicate and autojunk=True. The port is exact — including the
// "popular element" heuristic (with autojunk, an element that occurs more
// than len(b)/100+1 times in a b of 200 or more elements is never used to
// start a match, only to extend one) — because its output decides which
// token positions the loss compares.
package difflib

import "sort"

// Match is a block of n equal elements: a[A:A+N] == b[B:B+N].
type Match struct{ A, B, N int }

// MatchingBlocks returns what Python's
// SequenceMatcher(None, a, b, autojunk=autojunk).get_matching_blocks()
// returns: non-adjacent matching blocks in increasing order of A and B,
// followed by the sentinel {len(a), len(b), 0}.
func MatchingBlocks[T comparable](a, b []T, autojunk bool) []Match {
	m := matcher[T]{a: a, b: b}
	m.chainB(autojunk)
	type span struct{ alo, ahi, blo, bhi int }
	queue := []span{{0, len(a), 0, len(b)}}
	var blocks []Match
	for len(queue) > 0 {
		s := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		x := m.longest(s.alo, s.ahi, s.blo, s.bhi)
		if x.N == 0 {
			continue
		}
		blocks = append(blocks, x)
		if s.alo < x.A && s.blo < x.B {
			queue = append(queue, span{s.alo, x.A, s.blo, x.B})
		}
		if x.A+x.N < s.ahi && x.B+x.N < s.bhi {
			queue = append(queue, span{x.A + x.N, s.ahi, x.B + x.N, s.bhi})
		}
	}
	sort.Slice(blocks, func(i, j int) bool {
		if blocks[i].A != blocks[j].A {
			return blocks[i].A < blocks[j].A
		}
		if blocks[i].B != blocks[j].B {
			return blocks[i].B < blocks[j].B
		}
		return blocks[i].N < blocks[j].N
	})
	var out []Match
	cur := Match{}
	for _, x := range blocks {
		if cur.A+cur.N == x.A && cur.B+cur.N == x.B {
			cur.N += x.N
			continue
		}
		if cur.N > 0 {
			out = append(out, cur)
		}
		cur = x
	}
	if cur.N > 0 {
		out = append(out, cur)
	}
	return append(out, Match{len(a), len(b), 0})
}

type matcher[T comparable] struct {
	a, b []T
	b2j  map[T][]int
	// Without a junk predicate bjunk is empty, so the junk-extension loops
	// of find_longest_match never run; popular elements are not junk.
}

// chainB is SequenceMatcher.__chain_b without a junk predicate.
func (m *matcher[T]) chainB(autojunk bool) {
	m.b2j = map[T][]int{}
	for i, e := range m.b {
		m.b2j[e] = append(m.b2j[e], i)
	}
	if n := len(m.b); autojunk && n >= 200 {
		ntest := n/100 + 1
		for e, idx := range m.b2j {
			if len(idx) > ntest {
				delete(m.b2j, e)
			}
		}
	}
}

// longest is SequenceMatcher.find_longest_match.
func (m *matcher[T]) longest(alo, ahi, blo, bhi int) Match {
	a, b := m.a, m.b
	besti, bestj, bestsize := alo, blo, 0
	j2len := map[int]int{}
	for i := alo; i < ahi; i++ {
		newj2len := map[int]int{}
		for _, j := range m.b2j[a[i]] {
			if j < blo {
				continue
			}
			if j >= bhi {
				break
			}
			k := j2len[j-1] + 1
			newj2len[j] = k
			if k > bestsize {
				besti, bestj, bestsize = i-k+1, j-k+1, k
			}
		}
		j2len = newj2len
	}
	for besti > alo && bestj > blo && a[besti-1] == b[bestj-1] {
		besti, bestj, bestsize = besti-1, bestj-1, bestsize+1
	}
	for besti+bestsize < ahi && bestj+bestsize < bhi && a[besti+bestsize] == b[bestj+bestsize] {
		bestsize++
	}
	return Match{besti, bestj, bestsize}
}
