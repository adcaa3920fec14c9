package metrics

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/beluga-nlp/beluga/internal/nprand"
)

// BinomTest is the exact two-sided binomial test of k successes in n trials
// with success probability p (scipy.stats.binomtest): the probability of
// every outcome no more likely than k.
func BinomTest(k, n int, p float64) float64 {
	if n == 0 {
		return 1
	}
	d := binomPMF(k, n, p)
	// scipy's relative tolerance for "as likely as the observed outcome".
	const rerr = 1 + 1e-7
	total := 0.0
	for i := 0; i <= n; i++ {
		if v := binomPMF(i, n, p); v <= d*rerr {
			total += v
		}
	}
	return math.Min(1, total)
}

func binomPMF(k, n int, p float64) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}

// McNemarExact compares two models' correctness on the same items (1
// correct, 0 wrong) as BeLUGA does: an exact binomial test (p = ½) of the
// items the second model gets right among those where they disagree.
func McNemarExact(a, b []float64) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("mcnemar: %d and %d items", len(a), len(b))
	}
	wins, trials := 0, 0
	for i := range a {
		if d := b[i] - a[i]; d != 0 {
			trials++
			if d == 1 {
				wins++
			}
		}
	}
	return BinomTest(wins, trials, 0.5), nil
}

// Scores are one model's per-item outcomes for a randomisation test: per
// task, its i.i.d. hits (1 correct, 0 wrong) and, per score name (seen,
// func, class, type), the per-case suite hits of each functionality
// (1 pass, 0 fail, NaN filtered).
type Scores struct {
	IID   map[string][]float64
	Suite map[string]map[string]map[string][]float64
}

// RandomisationOptions fixes the items a randomisation test visits, in
// BeLUGA's order: the i.i.d. items of every task first, then the suite items
// by task, score, functionality and case.
type RandomisationOptions struct {
	Tasks      []string
	ScoreNames []string
	// TaskScores, when it has an entry for a task, replaces ScoreNames for
	// that task: the scores a row has (a sweep without func runs has no
	// G_func to test). The order within is ScoreNames'.
	TaskScores      map[string][]string
	Functionalities map[string][]string // per task, in suite order
	Trials          int                 // BeLUGA: 10,000
	Seed            uint32              // BeLUGA: 42
}

// RandomisationResult holds the p-values of an approximate randomisation test.
type RandomisationResult struct {
	// Avg is the p-value of the difference of the mean of all G scores.
	Avg float64
	// G holds the p-value of each task's G score per score name.
	G map[string]map[string]float64
}

// statDef is one statistic's layout: its i.i.d. component (-1 for a task
// tested on its suite scores alone) and its suite components.
type statDef struct {
	iid   int
	suite []int
}

// component is one (task, score, functionality) or one task's i.i.d. set,
// with the running sums of both models.
type component struct {
	sum, n [2]float64
}

func (c *component) mean(m int) float64 {
	if c.n[m] == 0 {
		return math.NaN()
	}
	return c.sum[m] / c.n[m]
}

// Randomisation is BeLUGA's approximate randomisation test of G differences
// between models a and b: every item on which the two differ (NaN counts as
// differing from everything, itself included, as in Python) is swapped
// between them with probability ½ — one bit of CPython's
// random.Random(seed).getrandbits(1) per item, in the order of opt — and
// the p-value of each statistic is (count+1)/(trials+1), count being the
// trials whose |ΔG| reaches the observed one. "Reaches" is decided exactly
// (see reaches): a trial whose |ΔG| equals the observed one in rational
// arithmetic counts, however its floats were summed. BeLUGA compares
// numpy floats, summed in another order for a trial than for the
// observation, and so drops some exact ties — always making p smaller;
// with equal-size cells (HateCheck's) such ties are common. Where no
// trial's statistic is an exact tie of the observed one, the p-values are
// BeLUGA's to the bit. G is the harmonic mean of the
// i.i.d. accuracy and the suite score (mean of functionalities' pass rates).
// A task given no i.i.d. items (a suite without i.i.d. data, or a
// comparison of suite scores on one set of cases) is tested on its suite
// scores alone: the statistic of each of its scores is the suite score.
func Randomisation(a, b Scores, opt RandomisationOptions) (RandomisationResult, error) {
	l, err := newLayout(a, b, opt)
	if err != nil {
		return RandomisationResult{}, err
	}
	observed := make([]float64, len(l.defs)+1)
	l.diff(observed)
	// The observed statistics exactly, for trials whose statistic comes
	// within tieBand of them.
	obsExact := make([]*big.Rat, len(observed))
	for i := range obsExact {
		obsExact[i] = exactDiff(l.comps, l.defs, i)
	}
	start := make([]component, len(l.comps))
	for i, c := range l.comps {
		start[i] = *c
	}
	counts := make([]int, len(observed))
	rng := nprand.NewPythonRandom(opt.Seed)
	d := make([]float64, len(observed))
	for trial := 0; trial < opt.Trials; trial++ {
		for _, sw := range l.swaps {
			if rng.GetRandBits(1) == 1 {
				c := l.comps[sw.comp]
				c.sum[0] += sw.sum
				c.n[0] += sw.n
				c.sum[1] -= sw.sum
				c.n[1] -= sw.n
			}
		}
		l.diff(d)
		for i := range d {
			if reaches(d[i], observed[i], func() int { return cmpExact(exactDiff(l.comps, l.defs, i), obsExact[i]) }) {
				counts[i]++
			}
		}
		// The sums are whole numbers, held exactly: a trial starts from a
		// copy of the untouched sums rather than swapping its items back.
		for i := range l.comps {
			*l.comps[i] = start[i]
		}
	}
	p := func(c int) float64 { return float64(c+1) / float64(opt.Trials+1) }
	res := RandomisationResult{G: map[string]map[string]float64{}}
	k := 0
	for _, t := range opt.Tasks {
		res.G[t] = map[string]float64{}
		for _, s := range opt.scores(t) {
			res.G[t][s] = p(counts[k])
			k++
		}
	}
	res.Avg = p(counts[k])
	return res, nil
}

// scores are the score names tested for task t.
func (o RandomisationOptions) scores(t string) []string {
	if s, ok := o.TaskScores[t]; ok {
		return s
	}
	return o.ScoreNames
}

// layout is a randomisation test's components (both models' running
// sums), its swappable items in visiting order, and its statistics.
type layout struct {
	comps []*component
	swaps []swap
	defs  []statDef
	gs    [2][]float64 // scratch: each model's statistics
}

// swap is one swappable item as the change it makes to model 0's sum and
// count of its component when swapped (model 1's is the opposite).
type swap struct {
	comp   int
	sum, n float64
}

// newLayout visits the items in BeLUGA's order: every task's i.i.d. items,
// then the suite items by task, score, functionality and case.
func newLayout(a, b Scores, opt RandomisationOptions) (*layout, error) {
	l := &layout{}
	add := func(va, vb []float64, where string) (int, error) {
		if len(va) != len(vb) {
			return 0, fmt.Errorf("randomisation: %s has %d items for one model and %d for the other", where, len(va), len(vb))
		}
		c := &component{}
		idx := len(l.comps)
		l.comps = append(l.comps, c)
		for i := range va {
			sw := swap{comp: idx}
			for m, v := range [2]float64{va[i], vb[i]} {
				if !math.IsNaN(v) {
					c.sum[m] += v
					c.n[m]++
					sign := float64(1 - 2*m) // model 0 loses va, gains vb
					sw.sum -= sign * v
					sw.n -= sign
				}
			}
			if va[i] != vb[i] || math.IsNaN(va[i]) {
				l.swaps = append(l.swaps, sw)
			}
		}
		return idx, nil
	}
	iidComp := map[string]int{}
	for _, t := range opt.Tasks {
		i, err := add(a.IID[t], b.IID[t], t+" i.i.d.")
		if err != nil {
			return nil, err
		}
		iidComp[t] = i
	}
	for _, t := range opt.Tasks {
		for _, s := range opt.scores(t) {
			d := statDef{iid: iidComp[t]}
			if len(a.IID[t]) == 0 {
				d.iid = -1
			}
			for _, f := range opt.Functionalities[t] {
				i, err := add(a.Suite[t][s][f], b.Suite[t][s][f], fmt.Sprintf("%s %s %q", t, s, f))
				if err != nil {
					return nil, err
				}
				d.suite = append(d.suite, i)
			}
			l.defs = append(l.defs, d)
		}
	}
	l.gs = [2][]float64{make([]float64, len(l.defs)+1), make([]float64, len(l.defs)+1)}
	return l, nil
}

// stat computes, for model m, every G in task/score order and their mean
// into gs (len(defs)+1), summing in the order Mean does, so that the
// values are those of the slices' means.
func (l *layout) stat(m int, gs []float64) {
	sumG := 0.0
	for k, d := range l.defs {
		sum, n := 0.0, 0
		for _, ci := range d.suite {
			if r := l.comps[ci].mean(m); !math.IsNaN(r) {
				sum += r
				n++
			}
		}
		suite := math.NaN()
		if n > 0 {
			suite = sum / float64(n)
		}
		g := suite
		if d.iid >= 0 {
			g = HarmonicMean(l.comps[d.iid].mean(m), suite)
		}
		gs[k] = g
		sumG += g
	}
	gs[len(l.defs)] = math.NaN()
	if len(l.defs) > 0 {
		gs[len(l.defs)] = sumG / float64(len(l.defs))
	}
}

// diff writes every statistic's |ΔG| between the models into d.
func (l *layout) diff(d []float64) {
	l.stat(0, l.gs[0])
	l.stat(1, l.gs[1])
	for i := range d {
		d[i] = math.Abs(l.gs[0][i] - l.gs[1][i])
	}
}

// tieBand is how close, in absolute terms, two statistics computed in
// floats must be for reaches to decide between them exactly. A statistic
// is a harmonic mean of means of at most millions of 0/1 hits, each in
// [0, 1]: its float error is below 1e-12, far inside the band, and two
// statistics further apart than the band are ordered rightly by their
// floats.
const tieBand = 1e-9

// reaches reports whether a trial's statistic d reaches the observed one,
// obs: by the floats when they are clearly apart, else by exact, the
// comparison of their rational values (-1, 0, 1 as big.Rat's Cmp). A NaN
// statistic (a score without items) reaches nothing, as in floats.
func reaches(d, obs float64, exact func() int) bool {
	if math.IsNaN(d) || math.IsNaN(obs) || math.Abs(d-obs) > tieBand {
		return d >= obs
	}
	return exact() >= 0
}

// cmpExact compares two exact statistics; nil (undefined) is below all.
func cmpExact(a, b *big.Rat) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return a.Cmp(b)
}

// exactDiff returns statistic k's |ΔG| between the two models in rational
// arithmetic from the components' current sums (whole numbers, held
// exactly in floats), k == len(defs) being the mean of all G. It returns
// nil where the statistic is undefined (NaN in floats).
func exactDiff(comps []*component, defs []statDef, k int) *big.Rat {
	g := func(m int, d statDef) *big.Rat {
		mean := func(c *component) *big.Rat {
			if c.n[m] == 0 {
				return nil
			}
			return new(big.Rat).SetFrac(big.NewInt(int64(c.sum[m])), big.NewInt(int64(c.n[m])))
		}
		suite := exactSuite(comps, d.suite, m)
		if suite == nil {
			return nil
		}
		if d.iid < 0 {
			return suite
		}
		iid := mean(comps[d.iid])
		if iid == nil {
			return nil
		}
		// HarmonicMean: 0 when either is 0, else 2ab/(a+b).
		if iid.Sign() <= 0 || suite.Sign() <= 0 {
			return new(big.Rat)
		}
		num := new(big.Rat).Mul(iid, suite)
		num.Mul(num, big.NewRat(2, 1))
		return num.Quo(num, new(big.Rat).Add(iid, suite))
	}
	stat := func(m int) *big.Rat {
		if k < len(defs) {
			return g(m, defs[k])
		}
		if len(defs) == 0 {
			return nil
		}
		sum := new(big.Rat)
		for _, d := range defs {
			v := g(m, d)
			if v == nil {
				return nil
			}
			sum.Add(sum, v)
		}
		return sum.Quo(sum, new(big.Rat).SetInt64(int64(len(defs))))
	}
	a, b := stat(0), stat(1)
	if a == nil || b == nil {
		return nil
	}
	return a.Abs(a.Sub(a, b))
}

// exactSuite returns the mean of the components' pass rates for model m
// in rational arithmetic (nil when none has items). The rates share
// small denominators (the cells' sizes), so their sum is kept as one
// fraction over the least common multiple in int64 — a big.Rat per rate,
// normalised at every addition, made each tie cost a millisecond — and
// only a sum that would overflow is added in big.Rat.
func exactSuite(comps []*component, cells []int, m int) *big.Rat {
	num, den, n := int64(0), int64(1), 0
	fits := true
	for _, ci := range cells {
		c := comps[ci]
		if c.n[m] == 0 {
			continue
		}
		n++
		if fits {
			num, den, fits = addFrac(num, den, int64(c.sum[m]), int64(c.n[m]))
		}
	}
	if n == 0 {
		return nil
	}
	if !fits {
		sum := new(big.Rat)
		for _, ci := range cells {
			if c := comps[ci]; c.n[m] != 0 {
				sum.Add(sum, big.NewRat(int64(c.sum[m]), int64(c.n[m])))
			}
		}
		return sum.Quo(sum, big.NewRat(int64(n), 1))
	}
	d := new(big.Int).Mul(big.NewInt(den), big.NewInt(int64(n)))
	return new(big.Rat).SetFrac(big.NewInt(num), d)
}

// addFrac returns a/b + c/d over lcm(b, d) for non-negative a, c and
// positive b, d, and false if a value would not fit an int64.
func addFrac(a, b, c, d int64) (num, den int64, ok bool) {
	g := b
	for x := d; x != 0; {
		g, x = x, g%x
	}
	den, ok = mul64(b/g, d)
	if !ok {
		return 0, 0, false
	}
	x, ok1 := mul64(a, den/b)
	y, ok2 := mul64(c, den/d)
	if !ok1 || !ok2 || x > math.MaxInt64-y {
		return 0, 0, false
	}
	return x + y, den, true
}

func mul64(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return int64(lo), hi == 0 && lo <= math.MaxInt64
}
