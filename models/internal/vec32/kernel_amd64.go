package vec32

//go:noescape
func sgemmKernel4x16(k int, a, b, c *float32, ldc int)

func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax, edx uint32)

// HasAVX2FMA says whether the CPU and the OS support AVX2 and FMA: whether
// Gemm runs at its speed (elsewhere it runs a portable kernel, slowly).
var HasAVX2FMA = func() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&fma == 0 || ecx1&osxsave == 0 || ecx1&avx == 0 {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 { // the OS saves the YMM registers
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<5) != 0
}()

//go:noescape
func geluForwardAVX(y, x *float32, n int)

//go:noescape
func geluBackwardAVX(dx, dy, x *float32, n int)

// geluForwardVec runs the AVX2 kernel over the longest prefix of x whose
// length is a multiple of 8, and returns that length.
func geluForwardVec(y, x []float32) int {
	n := len(x) &^ 7
	if !HasAVX2FMA || n == 0 {
		return 0
	}
	geluForwardAVX(&y[0], &x[0], n)
	return n
}

// geluBackwardVec is geluForwardVec for the gradient.
func geluBackwardVec(dx, dy, x []float32) int {
	n := len(x) &^ 7
	if !HasAVX2FMA || n == 0 {
		return 0
	}
	geluBackwardAVX(&dx[0], &dy[0], &x[0], n)
	return n
}

//go:noescape
func expShiftAVX(x *float32, n int, shift float32, sums *[8]float32)

// expShiftVec runs the AVX2 kernel of ExpShiftSum over the longest prefix
// of x whose length is a multiple of 8, returning that length and the sum.
func expShiftVec(x []float32, shift float32) (int, float32) {
	n := len(x) &^ 7
	if !HasAVX2FMA || n == 0 {
		return 0, 0
	}
	var sums [8]float32
	expShiftAVX(&x[0], n, shift, &sums)
	var s float32
	for _, v := range sums {
		s += v
	}
	return n, s
}
