package backend

import "github.com/beluga-nlp/beluga/models/internal/vec32"

// GemmBF16 is the bf16 matrix product, C = alpha·op(A)·op(B) + beta·C with
// op(A) scaled by alpha and both operands rounded to bfloat16 (to nearest,
// ties to even), the products summed in float32 (vec32.GemmBF16): the
// product of a model in bf16 precision, on every CPU backend. On a CPU
// with AVX512_BF16 it runs on VDPBF16PS; elsewhere (or with a kernel path
// other than avx512 forced) on a portable kernel with the same bits.
func GemmBF16(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	vec32.GemmBF16(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// BF16Kernel names the kernel GemmBF16 runs on now: "avx512_bf16" or "go".
func BF16Kernel() string { return vec32.BF16Path() }

// BF16 returns b with its matrix product replaced by GemmBF16 and
// everything else b's: the backend a bf16 model computes on, which the
// conformance suite checks (within bf16's tolerances) against b.
func BF16(b Backend) Backend { return bf16Backend{b} }

type bf16Backend struct{ Backend }

func (b bf16Backend) Name() string { return b.Backend.Name() + "+bf16" }

func (bf16Backend) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	GemmBF16(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
