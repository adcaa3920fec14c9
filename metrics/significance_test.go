package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/internal/nprand"
)

type refSignificance struct {
	Binom []struct {
		K, N int
		P    float64
	}
	Randomisation struct {
		Tasks           []string
		Scores          []string
		Functionalities map[string][]string
		Trials          int
		Seed            uint32
		A, B            refScores
		PG              []float64 `json:"p_g"`
		PAvg            float64   `json:"p_avg"`
	}
	SuiteOnly struct {
		P float64
	} `json:"suite_only"`
}

type refScores struct {
	IID   map[string][]*float64
	Suite map[string]map[string]map[string][]*float64
}

func (r refScores) scores() Scores {
	conv := func(xs []*float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = math.NaN()
			if x != nil {
				out[i] = *x
			}
		}
		return out
	}
	s := Scores{IID: map[string][]float64{}, Suite: map[string]map[string]map[string][]float64{}}
	for t, v := range r.IID {
		s.IID[t] = conv(v)
	}
	for t, byScore := range r.Suite {
		s.Suite[t] = map[string]map[string][]float64{}
		for sc, byFunc := range byScore {
			s.Suite[t][sc] = map[string][]float64{}
			for f, v := range byFunc {
				s.Suite[t][sc][f] = conv(v)
			}
		}
	}
	return s
}

// loadRef reads a reference file of testdata/ (written by its gen_*.py).
func loadRef[T any](t *testing.T, name string) T {
	t.Helper()
	var r T
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func loadSignificance(t *testing.T) refSignificance {
	return loadRef[refSignificance](t, "significance.json")
}

func TestBinomTestMatchesScipy(t *testing.T) {
	for _, c := range loadSignificance(t).Binom {
		got := BinomTest(c.K, c.N, 0.5)
		if math.Abs(got-c.P) > 1e-9*math.Max(1, c.P) && math.Abs(got-c.P)/c.P > 1e-9 {
			t.Errorf("BinomTest(%d, %d) = %g, scipy %g", c.K, c.N, got, c.P)
		}
	}
}

func TestMcNemarExact(t *testing.T) {
	a := []float64{1, 1, 0, 0, 1, 0, 0, 0, 0, 0}
	b := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 0}
	// 6 discordant items, all won by b: p = 2 * 0.5^6.
	got, err := McNemarExact(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * math.Pow(0.5, 6); math.Abs(got-want) > 1e-12 {
		t.Errorf("McNemarExact = %g, want %g", got, want)
	}
	if _, err := McNemarExact(a, b[:3]); err == nil {
		t.Error("no error for different lengths")
	}
}

// exactRef is testdata/exact_randomisation.json (gen_exact_randomisation.py):
// the randomisation test's p-values in rational arithmetic, and those of
// BeLUGA's float comparison, on the fixture of significance.json and on a
// HateCheck-like one.
type exactRef struct {
	Significance struct {
		PG             []float64 `json:"p_g"`
		PAvg           float64   `json:"p_avg"`
		PGFloat        []float64 `json:"p_g_float"`
		PAvgFloat      float64   `json:"p_avg_float"`
		SuiteOnly      float64   `json:"suite_only"`
		SuiteOnlyFloat float64   `json:"suite_only_float"`
	}
	HateCheck struct {
		Functionalities []string
		Trials          int
		Seed            uint32
		A, B            map[string][]float64
		P               float64
		PFloat          float64 `json:"p_float"`
	}
}

func loadExact(t *testing.T) exactRef { return loadRef[exactRef](t, "exact_randomisation.json") }

// The trials are BeLUGA's (its items, order and random bits); the
// p-values are the exact-arithmetic reference's. BeLUGA's own float
// comparison (significance.json, from numpy) drops exact ties: its
// p-values are never larger, and equal where no tie was dropped.
func TestRandomisationMatchesBeLUGA(t *testing.T) {
	r := loadSignificance(t).Randomisation
	ex := loadExact(t).Significance
	res, err := Randomisation(r.A.scores(), r.B.scores(), RandomisationOptions{
		Tasks: r.Tasks, ScoreNames: r.Scores, Functionalities: r.Functionalities, Trials: r.Trials, Seed: r.Seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, exact, exactFloat, beluga float64) {
		t.Helper()
		if got != exact {
			t.Errorf("p(%s) = %g, exact reference %g", what, got, exact)
		}
		if exactFloat != beluga {
			t.Errorf("p(%s): the exact reference's float count %g is not BeLUGA's %g (the references disagree on the trials)", what, exactFloat, beluga)
		}
		if beluga > exact {
			t.Errorf("p(%s): BeLUGA's float comparison %g is above the exact %g: it may only drop ties", what, beluga, exact)
		}
	}
	k := 0
	for _, task := range r.Tasks {
		for _, s := range r.Scores {
			check("G "+task+" "+s, res.G[task][s], ex.PG[k], ex.PGFloat[k], r.PG[k])
			k++
		}
	}
	check("Avg", res.Avg, ex.PAvg, ex.PAvgFloat, r.PAvg)
}

// A task without i.i.d. items is tested on its suite score alone: the
// reference swaps the same items (task sa's seen functionalities) and
// compares the mean of per-functionality pass rates.
func TestRandomisationOfSuiteScoresAlone(t *testing.T) {
	ref := loadSignificance(t)
	ex := loadExact(t).Significance
	r := ref.Randomisation
	a, b := r.A.scores(), r.B.scores()
	only := func(s Scores) Scores {
		return Scores{Suite: map[string]map[string]map[string][]float64{"sa": {"seen": s.Suite["sa"]["seen"]}}}
	}
	res, err := Randomisation(only(a), only(b), RandomisationOptions{
		Tasks: []string{"sa"}, ScoreNames: []string{"seen"}, Functionalities: map[string][]string{"sa": r.Functionalities["sa"]},
		Trials: r.Trials, Seed: r.Seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.G["sa"]["seen"]; got != ex.SuiteOnly {
		t.Errorf("p(suite score) = %g, exact reference %g (BeLUGA's floats: %g)", got, ex.SuiteOnly, ref.SuiteOnly.P)
	}
	if ex.SuiteOnlyFloat != ref.SuiteOnly.P {
		t.Errorf("the exact reference's float count %g is not BeLUGA's %g", ex.SuiteOnlyFloat, ref.SuiteOnly.P)
	}
}

// TestRandomisationCountsExactTies: on equal-size functionalities (a
// HateCheck group's per-group test) many trials tie the observed suite
// score exactly; summed in floats in another order, some of them fall an
// ulp short. The p-value is the exact-arithmetic reference's, not the
// smaller float one.
func TestRandomisationCountsExactTies(t *testing.T) {
	h := loadExact(t).HateCheck
	if h.P == h.PFloat {
		t.Fatal("the fixture has no tie that floats drop: it tests nothing")
	}
	wrap := func(m map[string][]float64) Scores {
		return Scores{Suite: map[string]map[string]map[string][]float64{"hc": {"seen": m}}}
	}
	res, err := Randomisation(wrap(h.A), wrap(h.B), RandomisationOptions{
		Tasks: []string{"hc"}, ScoreNames: []string{"seen"}, Functionalities: map[string][]string{"hc": h.Functionalities},
		Trials: h.Trials, Seed: h.Seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.G["hc"]["seen"]; got != h.P {
		t.Errorf("p = %g (%d trials reach the observed), exact reference %g (%d); floats give %g",
			got, int(math.Round(got*float64(h.Trials+1)))-1, h.P, int(math.Round(h.P*float64(h.Trials+1)))-1, h.PFloat)
	}
}

func TestAggregates(t *testing.T) {
	if got := HarmonicMean(0.8, 0.6); math.Abs(got-2*0.8*0.6/1.4) > 1e-15 {
		t.Errorf("HarmonicMean = %g", got)
	}
	if HarmonicMean(0, 0.5) != 0 {
		t.Error("HarmonicMean with a zero score is not 0")
	}
	hits := map[string][]float64{"a": {1, 0, math.NaN(), 1}, "b": {math.NaN(), math.NaN()}, "c": {0, 0}}
	if got, want := SuiteScore(hits, []string{"a", "b", "c"}), (2.0/3+0)/2; math.Abs(got-want) > 1e-15 {
		t.Errorf("SuiteScore = %g, want %g (b is all filtered)", got, want)
	}
	if got := F1([]int{1, 1, 0, 0}, []int{1, 0, 1, 0}, 1); got != 0.5 {
		t.Errorf("F1 = %g, want 0.5", got)
	}
	tests := []struct {
		pred   string
		golds  []string
		em, f1 float64
	}{
		{"The Eiffel Tower!", []string{"eiffel tower"}, 1, 1},
		{"in Paris, France", []string{"Paris"}, 0, 0.5},
		{"Denver Broncos", []string{"Carolina Panthers", "Broncos"}, 0, 2.0 / 3},
		{"", []string{"x"}, 0, 0},
	}
	for _, tc := range tests {
		if em, f1 := ExactMatch(tc.pred, tc.golds), TokenF1(tc.pred, tc.golds); em != tc.em || math.Abs(f1-tc.f1) > 1e-12 {
			t.Errorf("%q vs %q: EM %g F1 %g, want %g %g", tc.pred, tc.golds, em, f1, tc.em, tc.f1)
		}
	}
}

func BenchmarkRandomisation(b *testing.B) {
	// SENT-sized: 436 i.i.d. items, 4 scores × 36 functionalities × 600 cases.
	mk := func(p float64, seed int) Scores {
		s := Scores{IID: map[string][]float64{"sa": make([]float64, 436)}, Suite: map[string]map[string]map[string][]float64{"sa": {}}}
		x := uint32(seed)
		next := func() float64 { x = x*1664525 + 1013904223; return float64(x>>8) / (1 << 24) }
		for i := range s.IID["sa"] {
			if next() < p {
				s.IID["sa"][i] = 1
			}
		}
		for _, sc := range []string{"seen", "func", "class", "type"} {
			s.Suite["sa"][sc] = map[string][]float64{}
			for f := 0; f < 36; f++ {
				v := make([]float64, 600)
				for i := range v {
					if next() < p {
						v[i] = 1
					}
				}
				s.Suite["sa"][sc][string(rune('A'+f))] = v
			}
		}
		return s
	}
	a, c := mk(0.8, 1), mk(0.85, 2)
	funcs := make([]string, 36)
	for f := range funcs {
		funcs[f] = string(rune('A' + f))
	}
	opt := RandomisationOptions{Tasks: []string{"sa"}, ScoreNames: []string{"seen", "func", "class", "type"},
		Functionalities: map[string][]string{"sa": funcs}, Trials: 100, Seed: 42}
	for i := 0; i < b.N; i++ {
		if _, err := Randomisation(a, c, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRandomisationEqualCells is a HateCheck-sized per-group test:
// 30 functionalities of 120 cases each, two models of one pass rate,
// 10,000 trials — equal cells, so many trials tie the observed statistic
// and are decided in rational arithmetic.
func BenchmarkRandomisationEqualCells(b *testing.B) {
	rng := nprand.NewPythonRandom(3)
	names := make([]string, 30)
	a := map[string][]float64{}
	c := map[string][]float64{}
	for i := range names {
		names[i] = fmt.Sprintf("f%02d", i)
		for range 120 {
			a[names[i]] = append(a[names[i]], float64(rng.GetRandBits(1)))
			c[names[i]] = append(c[names[i]], float64(rng.GetRandBits(1)))
		}
	}
	wrap := func(m map[string][]float64) Scores {
		return Scores{Suite: map[string]map[string]map[string][]float64{"hc": {"seen": m}}}
	}
	opt := RandomisationOptions{Tasks: []string{"hc"}, ScoreNames: []string{"seen"}, Functionalities: map[string][]string{"hc": names}, Trials: 10000, Seed: 42}
	for b.Loop() {
		if _, err := Randomisation(wrap(a), wrap(c), opt); err != nil {
			b.Fatal(err)
		}
	}
}

// exactSuite's int64 sum over the common denominator equals the plain
// rational mean, whether the cells share sizes or their sizes' least
// common multiple overflows int64 (distinct primes: the big.Rat path).
func TestExactSuite(t *testing.T) {
	primes := []int{53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113}
	for name, sizes := range map[string][]int{"equal": {10, 10, 10, 10}, "mixed": {7, 12, 30, 45}, "primes": primes} {
		var comps []*component
		var cells []int
		want := new(big.Rat)
		for i, n := range sizes {
			s := (i*7 + 3) % (n + 1)
			comps = append(comps, &component{sum: [2]float64{float64(s)}, n: [2]float64{float64(n)}})
			cells = append(cells, i)
			want.Add(want, big.NewRat(int64(s), int64(n)))
		}
		want.Quo(want, big.NewRat(int64(len(sizes)), 1))
		if got := exactSuite(comps, cells, 0); got == nil || got.Cmp(want) != 0 {
			t.Errorf("%s: exactSuite = %v, want %v", name, got, want)
		}
		if got := exactSuite(comps, cells, 1); got != nil {
			t.Errorf("%s: model 1 has no items, exactSuite = %v, want nil", name, got)
		}
	}
	if _, _, ok := addFrac(0, 1, 1, math.MaxInt64); !ok {
		t.Error("addFrac(0/1 + 1/MaxInt64) overflowed")
	}
	if _, _, ok := addFrac(1, math.MaxInt64-1, 1, math.MaxInt64); ok {
		t.Error("addFrac over a denominator beyond int64 did not report it")
	}
}
