//go:build !amd64

package vec32

// Off amd64 the bf16 product runs on the portable kernel.
func bf16Fast() bool { return false }

func bf16KernelAsm(kp int, a, b []uint32, c []float32, ldc int) { bf16KernelGo(kp, a, b, c, ldc) }

var asmPacker = goPacker
