package metrics

import (
	"fmt"
	"math"
	"testing"
)

// refStatistics holds testdata/statistics.json, written by gen_statistics.py
// with numpy and scipy.
type refStatistics struct {
	MeanSE []struct {
		X    []float64
		Mean float64
		SE   *float64
	} `json:"mean_se"`
	TTest []struct {
		A, B []float64
		P    float64
	}
	Bootstrap []struct {
		Name      string
		Groups    [][]*float64
		Stat      string
		Resamples int
		Level     float64
		Seed      uint32
		Lo, Hi    float64
	}
	Hierarchical []struct {
		Name      string
		Groups    [][]*float64
		Clusters  [][][]int
		Stat      string
		Resamples int
		Level     float64
		Seed      uint32
		Lo, Hi    float64
	}
	Scipy struct {
		Groups [][]*float64
		Level  float64
		Lo, Hi float64
	}
	Spread []struct {
		X                        []float64
		Min, Q1, Median, Q3, Max float64
	}
	BH []struct {
		P, Q []*float64
	}
}

func loadStatistics(t *testing.T) refStatistics {
	return loadRef[refStatistics](t, "statistics.json")
}

func nanFloats(xs []*float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.NaN()
		if x != nil {
			out[i] = *x
		}
	}
	return out
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

func TestMeanSEMatchesScipy(t *testing.T) {
	for _, c := range loadStatistics(t).MeanSE {
		m, se := MeanSE(c.X)
		want := math.NaN()
		if c.SE != nil {
			want = *c.SE
		}
		if !near(m, c.Mean) || !near(se, want) {
			t.Errorf("MeanSE(%v) = %v ± %v, numpy/scipy %v ± %v", c.X, m, se, c.Mean, want)
		}
	}
}

func TestPairedTTestMatchesScipy(t *testing.T) {
	for _, c := range loadStatistics(t).TTest {
		p, err := PairedTTest(c.A, c.B)
		if err != nil || !near(p, c.P) {
			t.Errorf("PairedTTest(%v, %v) = %v, %v; scipy %v", c.A, c.B, p, err, c.P)
		}
	}
	for _, tc := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2}, []float64{1, 2}, math.NaN()}, // no difference at all
		{[]float64{1, 2}, []float64{2, 3}, 0},          // the same non-zero difference
		{[]float64{1}, []float64{2}, math.NaN()},       // one pair
	} {
		if p, _ := PairedTTest(tc.a, tc.b); !near(p, tc.want) {
			t.Errorf("PairedTTest(%v, %v) = %v, want %v", tc.a, tc.b, p, tc.want)
		}
	}
	if _, err := PairedTTest([]float64{1}, []float64{1, 2}); err == nil {
		t.Error("no error for unpaired values")
	}
}

var bootstrapStats = map[string]func([][]float64) float64{
	"pass_rate": PassRateStat, "suite": SuiteScoreStat, "g": GStat,
	"suite2": func(g [][]float64) float64 {
		return (SuiteScoreStat(g[:len(g)/2]) + SuiteScoreStat(g[len(g)/2:])) / 2
	},
}

func TestHierarchicalBootstrapMatchesNumpy(t *testing.T) {
	ref := loadStatistics(t).Hierarchical
	if len(ref) == 0 {
		t.Fatal("no hierarchical cases in testdata/statistics.json")
	}
	for _, c := range ref {
		t.Run(c.Name, func(t *testing.T) {
			groups := make([][]float64, len(c.Groups))
			for i, g := range c.Groups {
				groups[i] = nanFloats(g)
			}
			var cl []Cluster
			for _, blocks := range c.Clusters {
				cl = append(cl, Cluster{Blocks: blocks})
			}
			got, err := Bootstrap(groups, bootstrapStats[c.Stat], BootstrapOptions{Resamples: c.Resamples, Level: c.Level, Seed: c.Seed, Clusters: cl})
			if err != nil {
				t.Fatal(err)
			}
			if !near(got.Lo, c.Lo) || !near(got.Hi, c.Hi) {
				t.Errorf("interval [%v, %v], numpy [%v, %v]", got.Lo, got.Hi, c.Lo, c.Hi)
			}
			flat, err := Bootstrap(groups, bootstrapStats[c.Stat], BootstrapOptions{Resamples: c.Resamples, Level: c.Level, Seed: c.Seed})
			if err != nil {
				t.Fatal(err)
			}
			// Resampling functionalities too can only widen a suite
			// score's interval when functionalities differ.
			if len(c.Clusters[0][0]) > 1 && !(got.Hi-got.Lo > flat.Hi-flat.Lo) {
				t.Errorf("hierarchical interval %v not wider than the case-level %v", got, flat)
			}
		})
	}
}

func TestHierarchicalBootstrapRejectsBadClusters(t *testing.T) {
	g := [][]float64{{1, 0}, {1}, {0, 0}}
	for name, cl := range map[string][]Cluster{
		"ragged blocks":    {{Blocks: [][]int{{0, 1}, {2}}}},
		"out of range":     {{Blocks: [][]int{{0, 3}}}},
		"group used twice": {{Blocks: [][]int{{0, 1}}}, {Blocks: [][]int{{1, 2}}}},
	} {
		if _, err := Bootstrap(g, SuiteScoreStat, BootstrapOptions{Level: 0.95, Resamples: 10, Clusters: cl}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestBootstrapMatchesNumpy(t *testing.T) {
	for _, c := range loadStatistics(t).Bootstrap {
		t.Run(c.Name, func(t *testing.T) {
			groups := make([][]float64, len(c.Groups))
			for i, g := range c.Groups {
				groups[i] = nanFloats(g)
			}
			got, err := Bootstrap(groups, bootstrapStats[c.Stat], BootstrapOptions{Resamples: c.Resamples, Level: c.Level, Seed: c.Seed})
			if err != nil {
				t.Fatal(err)
			}
			if !near(got.Lo, c.Lo) || !near(got.Hi, c.Hi) {
				t.Errorf("interval [%v, %v], numpy [%v, %v]", got.Lo, got.Hi, c.Lo, c.Hi)
			}
		})
	}
}

// TestBootstrapAgreesWithScipy checks the method, not the draws: scipy's
// percentile bootstrap of the same pass rate (its own 9,999 resamples) must
// land within a point of this one's.
func TestBootstrapAgreesWithScipy(t *testing.T) {
	ref := loadStatistics(t).Scipy
	got, err := Bootstrap([][]float64{nanFloats(ref.Groups[0])}, PassRateStat, BootstrapOptions{Resamples: 9999, Level: ref.Level, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Lo-ref.Lo) > 2.5 || math.Abs(got.Hi-ref.Hi) > 2.5 {
		t.Errorf("interval [%v, %v], scipy.stats.bootstrap [%v, %v]", got.Lo, got.Hi, ref.Lo, ref.Hi)
	}
}

func TestBootstrapRejectsBadOptions(t *testing.T) {
	g := [][]float64{{1, 0, 1}}
	for _, opt := range []BootstrapOptions{{Level: 0}, {Level: 1}, {Level: 0.95, Resamples: -1}} {
		if _, err := Bootstrap(g, PassRateStat, opt); err == nil {
			t.Errorf("no error for %+v", opt)
		}
	}
}

func TestPercentileMatchesNumpyLinear(t *testing.T) {
	xs := []float64{1, 2, 4, 8}
	for _, tc := range []struct{ q, want float64 }{
		{0, 1}, {100, 8}, {50, 3}, {2.5, 1.075}, {97.5, 7.7}, {25, 1.75},
	} {
		if got := Percentile(xs, tc.q); !near(got, tc.want) {
			t.Errorf("Percentile(%v, %v) = %v, want %v", xs, tc.q, got, tc.want)
		}
	}
	// To the last bit: numpy 1.24's np.percentile([0.3, 0.35, 0.6, 0.8],
	// np.linspace(0, 1, 16)[2]*100) is 0.32, an equal-mass calibration
	// edge; the virtual index n·q + (1 − q) − 1 gave 0.31999999999999995.
	if got := Percentile([]float64{0.3, 0.35, 0.6, 0.8}, 2*(1.0/15)*100); got != 0.32 {
		t.Errorf("Percentile = %v, numpy 0.32", got)
	}
}

func TestBenjaminiHochbergMatchesScipyDefinition(t *testing.T) {
	for i, c := range loadStatistics(t).BH {
		got := BenjaminiHochberg(nanFloats(c.P))
		want := nanFloats(c.Q)
		for k := range want {
			if !near(got[k], want[k]) {
				t.Errorf("family %d, p %d: q %v, reference %v", i, k, got[k], want[k])
			}
		}
	}
}

func ExampleBenjaminiHochberg() {
	// Five functionalities compared with the baseline.
	q := BenjaminiHochberg([]float64{0.01, 0.04, 0.03, 0.005, 0.5})
	for _, v := range q {
		fmt.Printf("%.3f ", v)
	}
	fmt.Println()
	// Output: 0.025 0.050 0.050 0.025 0.500
}

func ExampleBootstrap() {
	// Eight test cases of one functionality: 1 pass, 0 fail, NaN filtered.
	hits := []float64{1, 1, 0, 1, math.NaN(), 1, 0, 1}
	ci, _ := Bootstrap([][]float64{hits}, PassRateStat, BootstrapOptions{Resamples: 1000, Level: 0.95, Seed: 42})
	fmt.Printf("pass rate %.1f %%, 95 %% CI [%.1f, %.1f]\n", 100*NanMean(hits), ci.Lo, ci.Hi)
	// Output: pass rate 71.4 %, 95 % CI [33.3, 100.0]
}

// BenchmarkBootstrapG is one row-task of a full SENT table: G over 436
// i.i.d. examples and 38 functionalities of 250 cases, 1,000 resamples.
func BenchmarkBootstrapG(b *testing.B) {
	groups := [][]float64{make([]float64, 436)}
	for f := 0; f < 38; f++ {
		g := make([]float64, 250)
		for i := range g {
			g[i] = float64((i * (f + 3)) % 2)
		}
		groups = append(groups, g)
	}
	for b.Loop() {
		if _, err := Bootstrap(groups, GStat, BootstrapOptions{Resamples: 1000, Level: 0.95, Seed: 42}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSpreadMatchesNumpy(t *testing.T) {
	ref := loadStatistics(t).Spread
	if len(ref) == 0 {
		t.Fatal("no spread cases in testdata/statistics.json")
	}
	for _, c := range ref {
		got := SpreadOf(append(c.X, math.NaN()))
		want := Spread{N: len(c.X), Min: c.Min, Q1: c.Q1, Median: c.Median, Q3: c.Q3, Max: c.Max}
		if got.N != want.N || !near(got.Min, want.Min) || !near(got.Q1, want.Q1) || !near(got.Median, want.Median) ||
			!near(got.Q3, want.Q3) || !near(got.Max, want.Max) {
			t.Errorf("SpreadOf(%v) = %+v, numpy %+v", c.X, got, want)
		}
	}
	if s := SpreadOf([]float64{math.NaN()}); s.N != 0 || !math.IsNaN(s.Range()) {
		t.Errorf("SpreadOf(NaN) = %+v", s)
	}
}

// TestNoDisagreementEntersBHWithPOne pins what docs/statistics.md says: a
// functionality on which the two models never disagree has McNemar's
// p = 1 (binomtest of 0 of 0) and still counts in the Benjamini–Hochberg
// family, raising the others' q-values (m = 3, not 2).
func TestNoDisagreementEntersBHWithPOne(t *testing.T) {
	same := []float64{1, 0, 1, 1}
	p, err := McNemarExact(same, same)
	if err != nil || p != 1 {
		t.Fatalf("McNemar of identical verdicts: %v, %v; want p = 1", p, err)
	}
	q := BenjaminiHochberg([]float64{0.01, 0.02, p})
	if !near(q[0], 0.03) || !near(q[1], 0.03) || q[2] != 1 {
		t.Errorf("q-values %v, want [0.03 0.03 1]", q)
	}
}
