package vec32

import (
	"math"
	"testing"
)

// TestToBF16MatchesCPU checks toBF16 against the CPU's own VCVTNEPS2BF16
// on a million float bit patterns (every class: normals, denormals,
// infinities, NaNs, ties) where the CPU has AVX512_BF16.
func TestToBF16MatchesCPU(t *testing.T) {
	if !hasBF16 {
		t.Skip("no AVX512_BF16 on this CPU")
	}
	seed := uint64(7)
	var src [16]float32
	var dst [16]uint16
	for round := 0; round < 1<<16; round++ {
		for i := range src {
			seed = seed*6364136223846793005 + 1442695040888963407
			u := uint32(seed >> 32)
			switch i % 4 {
			case 1: // a tie or near one
				u = u&^0xffff | 0x8000 | uint32(seed>>20)&1
			case 2: // a denormal, an infinity or a NaN
				u &= 0x807fffff
				if seed>>30&1 == 1 {
					u |= 0x7f800000
				}
			}
			src[i] = math.Float32frombits(u)
		}
		cvtNEPS2BF16x16(&dst[0], &src[0])
		for i, v := range src {
			if got, want := toBF16(v), uint32(dst[i]); got != want {
				t.Fatalf("toBF16(%#08x) = %#04x, VCVTNEPS2BF16 gives %#04x", math.Float32bits(v), got, want)
			}
		}
	}
}
