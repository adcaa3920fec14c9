package vec32

import "testing"

// BenchmarkPackBTrans packs a transposed 768×256 block of B (a bert-base
// weight, one block of k) into 24 panels of 32 columns.
func BenchmarkPackBTrans(b *testing.B) {
	const n, kb, nr = 768, 256, 32
	src, bp := make([]float32, n*768), make([]float32, n*kb)
	b.SetBytes(4 * n * kb)
	for b.Loop() {
		packB(bp, true, src, 768, 0, kb, n, nr, 0, n/nr)
	}
}
