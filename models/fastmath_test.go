package models

import (
	"math"
	"testing"
)

func TestErf32(t *testing.T) {
	worst := 0.0
	for x := -6.0; x <= 6; x += 1e-3 {
		worst = math.Max(worst, math.Abs(float64(erf32(float32(x)))-math.Erf(float64(float32(x)))))
	}
	if worst > 4e-7 {
		t.Errorf("erf32 is off by up to %.2g", worst)
	}
}

func TestExp32(t *testing.T) {
	worst := 0.0
	for x := -87.0; x <= 88; x += 1e-3 {
		want := math.Exp(float64(float32(x)))
		worst = math.Max(worst, math.Abs(float64(exp32(float32(x)))-want)/want)
	}
	if worst > 3e-7 {
		t.Errorf("exp32 is off by up to %.2g (relative)", worst)
	}
	if exp32(-100) != 0 || !math.IsInf(float64(exp32(100)), 1) {
		t.Errorf("exp32 out of range: %g, %g", exp32(-100), exp32(100))
	}
}

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
	geluForward(y64, x64)
	geluForward(y32, x32)
	geluBackward(dx64, dy64, x64, y64)
	geluBackward(dx32, dy32, x32, y32)
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
	softmaxRow(row64)
	softmaxRow(row32)
	for i := range row64 {
		if math.Abs(float64(row32[i])-row64[i]) > 1e-6 {
			t.Fatalf("softmax[%d] = %g in float32, %g in float64", i, row32[i], row64[i])
		}
	}
}

func TestParallelForCoversEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 100, elementGrain, 2*elementGrain + 1, 7 * elementGrain} {
		seen := make([]int32, n)
		parallelFor(n, elementGrain, func(lo, hi int) {
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

func BenchmarkGELU(b *testing.B) {
	n := 1 << 20
	x, y, dy, dx := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	r := &rng{5}
	for i := range x {
		x[i], dy[i] = float32(3*r.f()), float32(r.f())
	}
	b.Run("forward", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			geluForward(y, x)
		}
	})
	b.Run("backward", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			geluBackward(dx, dy, x, y)
		}
	})
}
