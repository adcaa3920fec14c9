package vec32

import "testing"

// BenchmarkPackBTrans packs a transposed 768×256 block of B (a bert-base
// weight, one block of k) into 24 panels of 32 columns.
func BenchmarkPackBTrans(b *testing.B) {
	const n, kb, nr = 768, 256, 32
	src, bp := make([]float32, n*768), make([]float32, n*kb)
	b.SetBytes(4 * n * kb)
	for b.Loop() {
		avx512Kernels.packB(bp, true, src, 768, 0, kb, n, nr, 0, n/nr)
	}
}

// BenchmarkPackBRows packs an untransposed 256×1024 block of B (a BERT-mini
// FFN weight's) into 64 panels of 16 columns.
func BenchmarkPackBRows(b *testing.B) {
	const n, kb, ldb = 1024, 256, 1024
	src, bp := make([]float32, kb*ldb), make([]float32, n*kb)
	b.SetBytes(4 * n * kb)
	for b.Loop() {
		avx2Kernels.packB(bp, false, src, ldb, 0, kb, n, 16, 0, n/16)
	}
}
