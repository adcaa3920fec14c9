package vec32

import (
	"math"
	"testing"
)

func TestErf(t *testing.T) {
	worst := 0.0
	for x := -6.0; x <= 6; x += 1e-3 {
		worst = math.Max(worst, math.Abs(float64(Erf(float32(x)))-math.Erf(float64(float32(x)))))
	}
	if worst > 4e-7 {
		t.Errorf("Erf is off by up to %.2g", worst)
	}
}

func TestExp(t *testing.T) {
	worst := 0.0
	for x := -87.0; x <= 88; x += 1e-3 {
		want := math.Exp(float64(float32(x)))
		worst = math.Max(worst, math.Abs(float64(Exp(float32(x)))-want)/want)
	}
	if worst > 3e-7 {
		t.Errorf("Exp is off by up to %.2g (relative)", worst)
	}
	if Exp(-100) != 0 || !math.IsInf(float64(Exp(100)), 1) {
		t.Errorf("Exp out of range: %g, %g", Exp(-100), Exp(100))
	}
}

// TestGELU checks the vector kernels and the portable tail (lengths that
// are not multiples of 8) against float64, over the whole range erf and
// exp are clamped in and beyond.
func TestGELU(t *testing.T) { forEachPath(t, testGELU) }

func testGELU(t *testing.T, kn *Kernels) {
	for _, n := range []int{1, 7, 8, 13, 16, 24, 31, 1000} {
		x, dy := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(-30 + 60*float64(i)/float64(max(n-1, 1)))
			dy[i] = float32(1 + i%3)
		}
		x[0] = 0
		y, dx := make([]float32, n), make([]float32, n)
		kn.GELU(y, x)
		kn.GELUBackward(dx, dy, x)
		for i, v := range x {
			xv := float64(v)
			wantY := 0.5 * xv * (1 + math.Erf(xv/math.Sqrt2))
			wantD := float64(dy[i]) * (0.5*(1+math.Erf(xv/math.Sqrt2)) + xv*math.Exp(-xv*xv/2)/math.Sqrt(2*math.Pi))
			if math.Abs(float64(y[i])-wantY) > 2e-6*math.Max(1, math.Abs(wantY)) {
				t.Fatalf("n=%d: gelu(%g) = %g, want %g", n, v, y[i], wantY)
			}
			if math.Abs(float64(dx[i])-wantD) > 4e-6*math.Max(1, math.Abs(wantD)) {
				t.Fatalf("n=%d: gelu'(%g)·%g = %g, want %g", n, v, dy[i], dx[i], wantD)
			}
		}
	}
}

func TestExpShiftSum(t *testing.T) { forEachPath(t, testExpShiftSum) }

func testExpShiftSum(t *testing.T, kn *Kernels) {
	for _, n := range []int{1, 8, 13, 16, 24, 40, 100} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(-3 + 0.07*float64(i))
		}
		x[n/2] = -math.MaxFloat32 // a masked position
		shift := float32(4)
		want := make([]float64, n)
		wantSum := 0.0
		for i, v := range x {
			want[i] = math.Exp(float64(v) - float64(shift))
			wantSum += want[i]
		}
		sum := kn.ExpShiftSum(x, shift)
		for i := range x {
			if math.Abs(float64(x[i])-want[i]) > 3e-7*want[i] {
				t.Fatalf("n=%d: e^(x[%d]-shift) = %g, want %g", n, i, x[i], want[i])
			}
		}
		if x[n/2] != 0 {
			t.Fatalf("n=%d: masked position gives %g, want 0", n, x[n/2])
		}
		if math.Abs(float64(sum)-wantSum) > 1e-6*wantSum {
			t.Fatalf("n=%d: sum %g, want %g", n, sum, wantSum)
		}
	}
}

func BenchmarkGELU(b *testing.B) {
	kn, err := FromEnv()
	if err != nil {
		b.Fatal(err)
	}
	n := 1 << 20
	x, y, dy := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], dy[i] = float32(i%600)/100-3, 1
	}
	b.Run("forward", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			kn.GELU(y, x)
		}
	})
	b.Run("backward", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			kn.GELUBackward(y, dy, x)
		}
	})
}
