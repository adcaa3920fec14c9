package models

import (
	"math"
	"runtime"
	"sync"
)

// Single-precision erf and exp for the float32 kernels, and the loop that
// spreads element-wise work over the cores. The float64 instantiations of
// the kernels (the finite-difference checks) keep math.Erf and math.Exp;
// the float32 ones, which train, would otherwise spend most of a step in
// math.Erf's float64 series (the GELU of BERT-tiny's FFN is 2·10⁶ erfs per
// step forward and as many, with as many exps, backward).

// erf32 is erf to within 4·10⁻⁷ (absolute, a few ulp): a rational approximation on
// [−4, 4] (erf is ±1 in float32 outside), as in Eigen and XLA.
func erf32(x float32) float32 {
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

// exp32 is eˣ to about 2 ulp (Cephes' expf: e^x = 2ⁿ·e^r with |r| ≤ ln2/2
// and a degree-6 polynomial for e^r); it flushes results below 2⁻¹²⁶ to 0.
func exp32(x float32) float32 {
	if x > 88.72283 {
		return float32(math.Inf(1))
	}
	if x < -87.33654 {
		return 0
	}
	n := float32(math.Floor(float64(x*1.44269504088896341 + 0.5)))
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

// parallelFor calls fn over [0, n) split into at most GOMAXPROCS contiguous
// ranges of at least grain elements, the caller's goroutine taking the first.
func parallelFor(n, grain int, fn func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/max(grain, 1))
	if parts <= 1 {
		fn(0, n)
		return
	}
	step := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for lo := step; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(n, lo+step))
	}
	fn(0, step)
	wg.Wait()
}
