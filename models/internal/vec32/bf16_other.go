//go:build !amd64

package vec32

// Off amd64 the bf16 product runs on the portable kernel.
func (*Kernels) bf16Fast() bool { return false }

func bf16KernelAsm(kp int, a []uint32, rs, ks int, b []uint32, c []float32, ldc int) {
	bf16KernelGo(kp, a, rs, ks, b, c, ldc)
}

var asmPacker = goPacker

// hasBF16: no AVX512_BF16 off amd64.
const hasBF16 = false
