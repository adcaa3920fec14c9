package metrics_test

import (
	"fmt"

	"github.com/beluga-nlp/beluga/metrics"
)

// BeLUGA's G combines the i.i.d. score with a suite score by their harmonic
// mean, so a model cannot make up for one with the other.
func ExampleHarmonicMean() {
	fmt.Printf("%.4f\n", metrics.HarmonicMean(0.9, 0.5))
	// Output: 0.6429
}

// McNemarExact tests whether two models differ in which i.i.d. examples
// they get right: of the 10 examples where they disagree, the second model
// wins 9.
func ExampleMcNemarExact() {
	a := []float64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}
	b := []float64{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	p, err := metrics.McNemarExact(a, b)
	if err != nil {
		panic(err)
	}
	fmt.Printf("p = %.4f\n", p)
	// Output: p = 0.0215
}
