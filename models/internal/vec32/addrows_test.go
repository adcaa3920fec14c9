package vec32

import (
	"fmt"
	"math"
	"testing"
)

// TestAddRows checks every path's column sums against the scalar loop, bit
// for bit, over widths around the vector width and row counts around the
// Go loop's four-row step.
func TestAddRows(t *testing.T) {
	forEachPath(t, func(t *testing.T, kn *Kernels) {
		seed := uint64(5)
		for _, w := range []int{1, 15, 16, 17, 63, 64, 65, 130, 256} {
			for _, rows := range []int{0, 1, 3, 4, 5, 100} {
				name := fmt.Sprintf("w=%d rows=%d", w, rows)
				stride := w + 3
				src, d := make([]float32, rows*stride), make([]float32, w)
				for _, v := range [][]float32{src, d} {
					for i := range v {
						seed = seed*6364136223846793005 + 1442695040888963407
						v[i] = float32(float64(seed>>11)/(1<<53)*2-1) * 1e3
					}
				}
				want := append([]float32(nil), d...)
				for r := 0; r < rows; r++ {
					for j := range want {
						want[j] += src[r*stride+j]
					}
				}
				kn.AddRows(d, src, rows, stride)
				for j := range want {
					if math.Float32bits(d[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%s: d[%d] = %g, the scalar loop %g", name, j, d[j], want[j])
					}
				}
			}
		}
	})
}

func BenchmarkAddRows(b *testing.B) {
	const rows, w = 4096, 256
	src, d := make([]float32, rows*w), make([]float32, w)
	forEachPathB(b, func(b *testing.B, kn *Kernels) {
		b.SetBytes(4 * rows * w)
		for b.Loop() {
			kn.AddRows(d, src, rows, w)
		}
	})
}

// TestAddRowProducts checks every path's LayerNorm column sums against the
// scalar loop, bit for bit.
func TestAddRowProducts(t *testing.T) {
	forEachPath(t, func(t *testing.T, kn *Kernels) {
		seed := uint64(21)
		for _, w := range []int{1, 15, 16, 17, 32, 33, 48, 130} {
			for _, rows := range []int{0, 1, 2, 5, 64} {
				stride := w + 5
				dy, x, dg, db := make([]float32, rows*stride), make([]float32, rows*stride), make([]float32, w), make([]float32, w)
				for _, v := range [][]float32{dy, x, dg, db} {
					for i := range v {
						seed = seed*6364136223846793005 + 1442695040888963407
						v[i] = float32(float64(seed>>11)/(1<<53)*2 - 1)
					}
				}
				wantG, wantB := append([]float32(nil), dg...), append([]float32(nil), db...)
				for r := 0; r < rows; r++ {
					for j := range wantG {
						wantG[j] += float32(dy[r*stride+j] * x[r*stride+j])
						wantB[j] += dy[r*stride+j]
					}
				}
				kn.AddRowProducts(dg, db, dy, x, rows, stride)
				for j := range wantG {
					if math.Float32bits(dg[j]) != math.Float32bits(wantG[j]) || math.Float32bits(db[j]) != math.Float32bits(wantB[j]) {
						t.Fatalf("w=%d rows=%d: [%d] = %g, %g; want %g, %g", w, rows, j, dg[j], db[j], wantG[j], wantB[j])
					}
				}
			}
		}
	})
}
