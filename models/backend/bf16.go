package backend

import "github.com/beluga-nlp/beluga/models/internal/vec32"

// BF16 returns b with its matrix product replaced by the bf16 product and
// everything else b's: the backend a model in bf16 precision computes on,
// which the conformance suite checks (within bf16's tolerances) against b.
//
// The bf16 product is C = alpha·op(A)·op(B) + beta·C with op(A) scaled by
// alpha and both operands rounded to bfloat16 (to nearest, ties to even),
// the products summed in float32 (vec32's GemmBF16). On b's kernel path
// avx512, on a CPU with AVX512_BF16, it runs on VDPBF16PS; elsewhere on a
// portable kernel with the same bits.
func BF16(b Backend) Backend { return bf16Backend{b, kernelsOf(b)} }

// kernelsOf is the kernels of b's kernel path, the portable ones for a
// backend off the CPU's kernel paths.
func kernelsOf(b Backend) *vec32.Kernels {
	kn, err := vec32.Lookup(b.Kernels())
	if err != nil {
		return portable
	}
	return kn
}

type bf16Backend struct {
	Backend
	kn *vec32.Kernels
}

func (b bf16Backend) Name() string { return b.Backend.Name() + "+bf16" }

func (b bf16Backend) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, bm []float32, ldb int, beta float32, c []float32, ldc int) {
	b.kn.GemmBF16(parallel, transA, transB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
}

// BF16Kernel names the kernel the bf16 product runs on with b's kernel
// path: "avx512_bf16" (VDPBF16PS) or "go" (the portable kernel, the same
// bits).
func BF16Kernel(b Backend) string { return kernelsOf(b).BF16Path() }
