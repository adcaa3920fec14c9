package models

import (
	"github.com/beluga-nlp/beluga/models/backend"
	"math"
	"testing"

	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// TestFloat32KernelsMatchFloat64 checks the float32 kernels, which use
// their own erf, exp and threads, against the float64 ones the
// finite-difference tests check.
func TestFloat32KernelsMatchFloat64(t *testing.T) {
	r := &rng{7}
	n := 3*elementGrain + 5 // several goroutines, one short range
	x64, dy64 := randVec(r, n), randVec(r, n)
	for i := range x64 {
		x64[i] *= 5
	}
	x32, dy32 := make([]float32, n), make([]float32, n)
	for i := range x64 {
		x32[i], dy32[i] = float32(x64[i]), float32(dy64[i])
	}
	y64, dx64 := make([]float64, n), make([]float64, n)
	y32, dx32 := make([]float32, n), make([]float32, n)
	geluForward(backend.Reference(), y64, x64)
	geluForward(backend.Reference(), y32, x32)
	geluBackward(backend.Reference(), dx64, dy64, x64)
	geluBackward(backend.Reference(), dx32, dy32, x32)
	for i := range x64 {
		if math.Abs(float64(y32[i])-y64[i]) > 2e-6*math.Max(1, math.Abs(y64[i])) {
			t.Fatalf("gelu(%g) = %g in float32, %g in float64", x64[i], y32[i], y64[i])
		}
		if math.Abs(float64(dx32[i])-dx64[i]) > 2e-6 {
			t.Fatalf("gelu'(%g)·%g = %g in float32, %g in float64", x64[i], dy64[i], dx32[i], dx64[i])
		}
	}
	row64 := randVec(r, 97)
	row64[3] = -math.MaxFloat32
	row32 := make([]float32, len(row64))
	for i, v := range row64 {
		row32[i] = float32(v * 10)
		row64[i] = float64(row32[i])
	}
	softmaxRow(backend.Reference(), row64)
	softmaxRow(backend.Reference(), row32)
	for i := range row64 {
		if math.Abs(float64(row32[i])-row64[i]) > 1e-6 {
			t.Fatalf("softmax[%d] = %g in float32, %g in float64", i, row32[i], row64[i])
		}
	}
}

func TestParallelForCoversEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 100, elementGrain, 2*elementGrain + 1, 7 * elementGrain} {
		seen := make([]int32, n)
		vec32.ParallelFor(n, elementGrain, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, c)
			}
		}
	}
}
