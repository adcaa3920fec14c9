package vec32

import "math"

// Erf is erf to within 4·10⁻⁷ (absolute, a few ulp): a rational
// approximation on [−4, 4] (erf is ±1 in float32 outside), as in Eigen and
// XLA. The float64 series of math.Erf was most of a BERT training step.
func Erf(x float32) float32 {
	x = min(max(x, -4), 4)
	x2 := x * x
	p := x2*-2.72614225801306e-10 + 2.77068142495902e-08
	p = x2*p + -2.10102402082508e-06
	p = x2*p + -5.69250639462346e-05
	p = x2*p + -7.34990630326855e-04
	p = x2*p + -2.95459980854025e-03
	p = x2*p + -1.60960333262415e-02
	q := x2*-1.45660718464996e-05 + -2.13374055278905e-04
	q = x2*q + -1.68282697438203e-03
	q = x2*q + -7.37332916720468e-03
	q = x2*q + -1.42647390514189e-02
	return x * p / q
}

// Exp is eˣ to about 2 ulp (Cephes' expf: e^x = 2ⁿ·e^r with |r| ≤ ln2/2
// and a degree-6 polynomial for e^r); it flushes results below 2⁻¹²⁶ to 0.
func Exp(x float32) float32 {
	if x > 88.72283 {
		return float32(math.Inf(1))
	}
	if x < -87.33654 {
		return 0
	}
	t := x * 1.44269504088896341
	var n float32
	if t >= 0 {
		n = float32(int32(t + 0.5))
	} else {
		n = float32(int32(t - 0.5))
	}
	r := x - n*0.693359375 - n*-2.12194440e-4
	z := r * r
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	p = p*z + r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// GELU sets y = ½x(1 + erf(x/√2)), eight or sixteen floats at a time on
// the vector paths.
func (kn *Kernels) GELU(y, x []float32) {
	y = y[:len(x)]
	for i := kn.geluF(y, x); i < len(x); i++ {
		v := x[i]
		y[i] = 0.5 * v * (1 + Erf(v*math.Sqrt2/2))
	}
}

// GELUBackward sets dx = dy·(Φ(x) + x·φ(x)), the gradient of GELU; dx may
// be dy.
func (kn *Kernels) GELUBackward(dx, dy, x []float32) {
	const invSqrt2Pi = 0.3989422804014327
	dx, dy = dx[:len(x)], dy[:len(x)]
	for i := kn.geluB(dx, dy, x); i < len(x); i++ {
		v := x[i]
		cdf := 0.5 * (1 + Erf(v*math.Sqrt2/2))
		pdf := invSqrt2Pi * Exp(max(-0.5*v*v, -87.33654))
		dx[i] = dy[i] * (cdf + v*pdf)
	}
}

// ExpShiftSum replaces each x[i] by e^(x[i]−shift) and returns their sum:
// the exponentials of a softmax, shift being the row's maximum (every x[i]
// must be at most shift).
func (kn *Kernels) ExpShiftSum(x []float32, shift float32) float32 {
	var sums [8]float32
	i := kn.expShift(x, shift, &sums)
	var sum float32
	for _, v := range sums {
		sum += v
	}
	for ; i < len(x); i++ {
		e := Exp(x[i] - shift)
		x[i] = e
		sum += e
	}
	return sum
}
