package vec32

import "math"

// Scale multiplies x by s in place.
func Scale(x []float32, s float32) {
	for i := active.Load().scale(x, s); i < len(x); i++ {
		x[i] *= s
	}
}

// MulTo sets dst[i] = a[i]·b[i] (dst may be a): dropout's multipliers
// applied to a copy or in place.
func MulTo(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := active.Load().mulTo(dst, a, b); i < len(dst); i++ {
		dst[i] = a[i] * b[i]
	}
}

// Max returns the largest element of x (not empty), NaN if any is NaN.
// The sign of a zero maximum is either zero's.
func Max(x []float32) float32 {
	m, nan, i := active.Load().max(x)
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
