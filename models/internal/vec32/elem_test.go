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
	forEachPath(t, func(t *testing.T) {
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
			Scale(s, 1.7)
			d := make([]float32, n)
			MulTo(d, x, y)
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
			if got := Max(x); got != want {
				t.Fatalf("%s: Max = %g, want %g", name, got, want)
			}
			for _, at := range []int{0, n / 2, n - 1} {
				nan := append([]float32(nil), x...)
				nan[at] = float32(math.NaN())
				if got := Max(nan); got == got {
					t.Fatalf("%s: Max with a NaN at %d = %g, want NaN", name, at, got)
				}
			}
		}
	})
}
