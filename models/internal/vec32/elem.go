package vec32

import "math"

// Scale multiplies x by s in place.
func (kn *Kernels) Scale(x []float32, s float32) {
	for i := kn.scale(x, s); i < len(x); i++ {
		x[i] *= s
	}
}

// MulTo sets dst[i] = a[i]·b[i] (dst may be a): dropout's multipliers
// applied to a copy or in place.
func (kn *Kernels) MulTo(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := kn.mulTo(dst, a, b); i < len(dst); i++ {
		dst[i] = a[i] * b[i]
	}
}

// MulAdd sets dst[i] = a[i]·b[i] + c[i], the product rounded before the sum
// (dst may be a or c): dropout's multipliers and a residual connection in
// one pass, the bits of the two passes.
func (kn *Kernels) MulAdd(dst, a, b, c []float32) {
	a, b, c = a[:len(dst)], b[:len(dst)], c[:len(dst)]
	for i := kn.mulAdd(dst, a, b, c); i < len(dst); i++ {
		dst[i] = float32(a[i]*b[i]) + c[i]
	}
}

// Max returns the largest element of x (not empty), NaN if any is NaN.
// The sign of a zero maximum is either zero's.
func (kn *Kernels) Max(x []float32) float32 {
	m, nan, i := kn.max(x)
	if i == 0 {
		m = x[0]
	}
	for ; i < len(x); i++ {
		v := x[i]
		nan = nan || v != v
		if v > m {
			m = v
		}
	}
	if nan {
		return float32(math.NaN())
	}
	return m
}

// SumSquares returns Σ x² in float64, in eight partial sums (element i in
// sum i mod 8) added pairwise: squares of float32 are exact in float64, so
// only the additions round, in an order fixed by len(x) on every path.
func (kn *Kernels) SumSquares(x []float32) float64 {
	var s [8]float64
	i := kn.sumSquares(x, &s)
	for ; i+8 <= len(x); i += 8 {
		v := (*[8]float32)(x[i : i+8])
		for j := range s {
			s[j] += float64(v[j]) * float64(v[j])
		}
	}
	for j := 0; i < len(x); i, j = i+1, j+1 {
		s[j] += float64(x[i]) * float64(x[i])
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}
