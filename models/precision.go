package models

import (
	"fmt"

	"github.com/beluga-nlp/beluga/models/backend"
)

// Precision is the arithmetic of a model's matrix products: every product
// of its passes — the linear layers forward and backward, attention's
// scores and context — runs in it, while the element-wise work (GELU,
// softmax, LayerNorm, dropout), the losses, the parameters themselves
// (master weights) and the optimiser stay float32. It belongs to the model,
// not to the process: two models of different precisions may train at
// once (beluga run --jobs 2).
type Precision string

const (
	// PrecisionFP32 is float32 throughout: the default.
	PrecisionFP32 Precision = "fp32"
	// PrecisionBF16 rounds both operands of every product to bfloat16
	// and accumulates in float32 (backend.GemmBF16): on CPUs with
	// AVX512_BF16 twice the multiply-adds per instruction; elsewhere the
	// same bits from a portable kernel, many times slower.
	PrecisionBF16 Precision = "bf16"
)

// Precisions lists the precisions a model can compute in, the default first.
func Precisions() []Precision { return []Precision{PrecisionFP32, PrecisionBF16} }

// ParsePrecision reads a precision setting; "" is the default, fp32.
func ParsePrecision(s string) (Precision, error) {
	switch Precision(s) {
	case "", PrecisionFP32:
		return PrecisionFP32, nil
	case PrecisionBF16:
		return PrecisionBF16, nil
	}
	return "", fmt.Errorf("unknown precision %q (want %s or %s)", s, PrecisionFP32, PrecisionBF16)
}

// gemm32 is a float32 product in precision p on the current backend.
func (p Precision) gemm32(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if p == PrecisionBF16 {
		backend.GemmBF16(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	compute().Gemm(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// BF16Kernel names the kernel a bf16 model's products run on now:
// "avx512_bf16" (VDPBF16PS) or "go" (the portable kernel, the same bits).
func BF16Kernel() string { return backend.BF16Kernel() }

// SetPrecision makes the model's matrix products run in p from its next
// pass on; its parameters stay float32 (the master weights the optimiser
// updates).
func (c *core) SetPrecision(p Precision) { c.precision = p }

// Precision returns the arithmetic of the model's products.
func (c *core) Precision() Precision { return orFP32(c.precision) }

// SetPrecision makes the pooler's and classifier's products run in p.
func (m *WordVec) SetPrecision(p Precision) { m.precision = p }

// Precision returns the arithmetic of the model's products.
func (m *WordVec) Precision() Precision { return orFP32(m.precision) }

func orFP32(p Precision) Precision {
	if p == "" {
		return PrecisionFP32
	}
	return p
}
