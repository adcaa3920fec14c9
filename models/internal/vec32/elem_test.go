package vec32

import (
	"fmt"
	"math"
	"testing"
)

// TestElementwise checks Scale, MulTo and Max on every path against the
// scalar loops, bit for bit, over lengths around the vector width, and
// that Max finds a NaN wherever it lies.
func TestElementwise(t *testing.T) {
	forEachPath(t, func(t *testing.T, kn *Kernels) {
		seed := uint64(9)
		rnd := func() float32 {
			seed = seed*6364136223846793005 + 1442695040888963407
			return float32(float64(seed>>11)/(1<<53)*2-1) * 100
		}
		for _, n := range []int{1, 5, 15, 16, 17, 31, 32, 33, 100, 257} {
			name := fmt.Sprintf("n=%d", n)
			x, y := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], y[i] = rnd(), rnd()
			}
			s := append([]float32(nil), x...)
			kn.Scale(s, 1.7)
			d := make([]float32, n)
			kn.MulTo(d, x, y)
			ma := append([]float32(nil), x...)
			kn.MulAdd(ma, ma, y, s)
			for i := range ma {
				if want := float32(x[i]*y[i]) + s[i]; ma[i] != want {
					t.Fatalf("%s: MulAdd: [%d] = %g, want %g", name, i, ma[i], want)
				}
			}
			want := x[0]
			for i := range x {
				if s[i] != x[i]*1.7 {
					t.Fatalf("%s: Scale: [%d] = %g, want %g", name, i, s[i], x[i]*1.7)
				}
				if d[i] != x[i]*y[i] {
					t.Fatalf("%s: MulTo: [%d] = %g, want %g", name, i, d[i], x[i]*y[i])
				}
				want = max(want, x[i])
			}
			if got := kn.Max(x); got != want {
				t.Fatalf("%s: Max = %g, want %g", name, got, want)
			}
			for _, at := range []int{0, n / 2, n - 1} {
				nan := append([]float32(nil), x...)
				nan[at] = float32(math.NaN())
				if got := kn.Max(nan); got == got {
					t.Fatalf("%s: Max with a NaN at %d = %g, want NaN", name, at, got)
				}
			}
		}
	})
}

// TestSumSquares checks every path's sum of squares against the eight
// partial sums of the scalar loop, bit for bit.
func TestSumSquares(t *testing.T) {
	forEachPath(t, func(t *testing.T, kn *Kernels) {
		seed := uint64(13)
		for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 1000} {
			x := make([]float32, n)
			for i := range x {
				seed = seed*6364136223846793005 + 1442695040888963407
				x[i] = float32(float64(seed>>11)/(1<<53)*2-1) * 1e4
			}
			var s [8]float64
			for i, v := range x {
				s[i%8] += float64(v) * float64(v)
			}
			want := ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
			if got := kn.SumSquares(x); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n=%d: %v, want %v", n, got, want)
			}
		}
	})
}

// TestNormRows checks every path's LayerNorm row kernels against the
// scalar loops, each operation rounded apart, bit for bit.
func TestNormRows(t *testing.T) {
	forEachPath(t, func(t *testing.T, kn *Kernels) {
		seed := uint64(17)
		rnd := func() float32 {
			seed = seed*6364136223846793005 + 1442695040888963407
			return float32(float64(seed>>11)/(1<<53)*2-1) * 3
		}
		for _, n := range []int{1, 15, 16, 17, 128, 131} {
			x, g, b, dy := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], g[i], b[i], dy[i] = rnd(), rnd(), rnd(), rnd()
			}
			mean, inv, mg, mgx := rnd(), rnd(), rnd(), rnd()
			y, xhat, dx := make([]float32, n), make([]float32, n), make([]float32, n)
			kn.NormRow(y, xhat, x, g, b, mean, inv)
			kn.NormBackRow(dx, dy, x, g, mg, mgx, inv)
			for k := range x {
				xv := (x[k] - mean) * inv
				wantY := float32(xv*g[k]) + b[k]
				wantDx := inv * (float32(dy[k]*g[k]) - mg - float32(x[k]*mgx))
				if xhat[k] != xv || y[k] != wantY || dx[k] != wantDx {
					t.Fatalf("n=%d [%d]: x̂ %g y %g dx %g, want %g %g %g", n, k, xhat[k], y[k], dx[k], xv, wantY, wantDx)
				}
			}
			// y may be x.
			in := append([]float32(nil), x...)
			kn.NormRow(in, xhat, in, g, b, mean, inv)
			for k := range in {
				if in[k] != y[k] {
					t.Fatalf("n=%d: in place y[%d] = %g, want %g", n, k, in[k], y[k])
				}
			}
		}
	})
}
