package models

import (
	"fmt"
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
	// and accumulates in float32 (backend.BF16): on CPUs with
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

func orFP32(p Precision) Precision {
	if p == "" {
		return PrecisionFP32
	}
	return p
}
