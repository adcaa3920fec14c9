package backend

import (
	"math"
	"runtime"
	"testing"
)

// TestLayerNormBackwardAnyCores: LayerNorm's backward pass gives the same
// bits on 1, 2, 3 or 64 cores, and the bits the two-core row split gave
// before it summed dγ and dβ by columns (the pinned tables were trained
// with those).
func TestLayerNormBackwardAnyCores(t *testing.T) {
	for _, rows := range []int{3, 100, 4096} {
		const h = 256
		seed := uint64(rows)
		fill := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				seed = seed*6364136223846793005 + 1442695040888963407
				x[i] = float32(float64(seed>>11)/(1<<53)*2 - 1)
			}
			return x
		}
		dy, xhat, rstd, gamma := fill(rows*h), fill(rows*h), fill(rows), fill(h)
		dg0, db0 := fill(h), fill(h)
		// The two-core row split: each range's partial sums from zero in
		// row order, added to dγ, dβ in order of the ranges.
		wantG, wantB := append([]float32(nil), dg0...), append([]float32(nil), db0...)
		parts := min(2, rows/(ElementGrain/h))
		step := rows
		if parts > 1 {
			step = (rows + parts - 1) / parts
		}
		for lo := 0; lo < rows; lo += step {
			pg, pb := make([]float32, h), make([]float32, h)
			for r := lo; r < min(rows, lo+step); r++ {
				for k := 0; k < h; k++ {
					pg[k] += dy[r*h+k] * xhat[r*h+k]
					pb[k] += dy[r*h+k]
				}
			}
			for k := range pg {
				wantG[k] += pg[k]
				wantB[k] += pb[k]
			}
		}
		var wantDx []float32
		for _, procs := range []int{2, 1, 3, 64} {
			prev := runtime.GOMAXPROCS(procs)
			dx, dg, db := make([]float32, rows*h), append([]float32(nil), dg0...), append([]float32(nil), db0...)
			LayerNormBackward(dx, dg, db, dy, xhat, rstd, gamma, h)
			runtime.GOMAXPROCS(prev)
			if wantDx == nil {
				wantDx = dx
			}
			for name, pair := range map[string][2][]float32{"dγ": {dg, wantG}, "dβ": {db, wantB}, "dx": {dx, wantDx}} {
				for i := range pair[0] {
					if math.Float32bits(pair[0][i]) != math.Float32bits(pair[1][i]) {
						t.Fatalf("%d rows, GOMAXPROCS=%d: %s[%d] = %g, want %g", rows, procs, name, i, pair[0][i], pair[1][i])
					}
				}
			}
		}
	}
}

// TestAddSquaresAnyCores: the global norm's sum of squares has the same
// bits on any number of cores, and is the exact sum to float64 rounding.
func TestAddSquaresAnyCores(t *testing.T) {
	for _, n := range []int{0, 5, 9, squaresBlock, 3*squaresBlock + 17} {
		x := make([]float32, n)
		exact := 0.0
		for i := range x {
			x[i] = float32(i%97)/50 - 1
			exact += float64(x[i]) * float64(x[i])
		}
		var want float64
		for i, procs := range []int{1, 2, 3, 64} {
			prev := runtime.GOMAXPROCS(procs)
			got := cpu{portable}.AddSquares(0.5, x)
			runtime.GOMAXPROCS(prev)
			if i == 0 {
				want = got
			}
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n=%d, GOMAXPROCS=%d: %v, on one core %v", n, procs, got, want)
			}
			if math.Abs(got-0.5-exact) > 1e-12*math.Max(1, exact) {
				t.Fatalf("n=%d: %v, want %v", n, got-0.5, exact)
			}
		}
	}
}

// TestLayerNormRowsSideBySide checks that rows normalised side by side (four
// at a time forward, two backward) have the bits of each row done alone.
func TestLayerNormRowsSideBySide(t *testing.T) {
	const h = 96
	for _, rows := range []int{1, 2, 3, 4, 5, 7, 9, 300} {
		seed := uint64(rows)
		fill := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				seed = seed*6364136223846793005 + 1442695040888963407
				x[i] = float32(float64(seed>>11)/(1<<53)*4 - 1)
			}
			return x
		}
		x, gamma, beta, dy := fill(rows*h), fill(h), fill(h), fill(rows*h)
		y, xhat, rstd, dx := make([]float32, rows*h), make([]float32, rows*h), make([]float32, rows), make([]float32, rows*h)
		LayerNormForward(y, xhat, rstd, x, gamma, beta, h, 1e-12)
		LayerNormBackward(dx, nil, nil, dy, xhat, rstd, gamma, h)
		for r := 0; r < rows; r++ {
			row := func(v []float32) []float32 { return v[r*h : (r+1)*h] }
			y1, xhat1, rstd1, dx1 := make([]float32, h), make([]float32, h), make([]float32, 1), make([]float32, h)
			LayerNormForward(y1, xhat1, rstd1, row(x), gamma, beta, h, 1e-12)
			LayerNormBackward(dx1, nil, nil, row(dy), row(xhat), rstd[r:r+1], gamma, h)
			for name, pair := range map[string][2][]float32{"y": {row(y), y1}, "x̂": {row(xhat), xhat1}, "rstd": {rstd[r : r+1], rstd1}, "dx": {row(dx), dx1}} {
				for i := range pair[0] {
					if math.Float32bits(pair[0][i]) != math.Float32bits(pair[1][i]) {
						t.Fatalf("%d rows: row %d %s[%d] = %g side by side, %g alone", rows, r, name, i, pair[0][i], pair[1][i])
					}
				}
			}
		}
	}
}
