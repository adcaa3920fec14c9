package vec32

import (
	"fmt"
	"math"
	"testing"
)

// TestDropoutMask checks every path's dropout multipliers against the
// serial SplitMix64 loop, element for element, over lengths around the
// vector width and thresholds at both ends.
func TestDropoutMask(t *testing.T) {
	forEachPath(t, func(t *testing.T, kn *Kernels) {
		for _, n := range []int{0, 1, 7, 8, 9, 16, 23, 1000} {
			for _, rate := range []float64{0, 0.1, 0.5, 0.999, 1} {
				name := fmt.Sprintf("n=%d rate=%g", n, rate)
				least := uint64(math.Ceil(rate * (1 << 53)))
				state := uint64(0xfeedface12345678) + uint64(n)
				k := make([]float32, n)
				for i := range k {
					k[i] = -1 // dirty: every element must be written
				}
				kn.DropoutMask(k, state, least, 2.5)
				s := state
				for i, got := range k {
					s += Gamma
					want := float32(0)
					if float64(SplitMix64(s)>>11)/(1<<53) >= rate {
						want = 2.5
					}
					if got != want {
						t.Fatalf("%s: k[%d] = %g, the serial draw gives %g", name, i, got, want)
					}
				}
			}
		}
	})
}

func BenchmarkDropoutMask(b *testing.B) {
	forEachPathB(b, func(b *testing.B, kn *Kernels) {
		k := make([]float32, 1<<20)
		b.SetBytes(4 << 20)
		for i := 0; b.Loop(); i++ {
			kn.DropoutMask(k, uint64(i), 1<<50, 1.1)
		}
	})
}
