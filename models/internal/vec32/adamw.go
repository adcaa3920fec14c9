package vec32

import "math"

// AdamWCoef holds one AdamW update's coefficients (float32, as the update
// rounds them):
//
//	m ← B1·m + OneMinusB1·g,   v ← B2·v + OneMinusB2·g·g
//	θ ← θ·Decay − StepSize·m / (√v·InvBC2 + Eps)
//
// The field order is the assembly's.
type AdamWCoef struct {
	B1, OneMinusB1, B2, OneMinusB2, InvBC2, Eps, Decay, StepSize float32
}

// AdamW applies one AdamW update to value from grad, updating the moments
// m and v in place, sixteen or eight floats at a time on the vector paths.
// Every path gives the same bits: the vector kernels round each product
// and sum as this loop does, with no FMA.
func (kn *Kernels) AdamW(value, grad, m, v []float32, c AdamWCoef) {
	grad, m, v = grad[:len(value)], m[:len(value)], v[:len(value)]
	for i := kn.adamW(value, grad, m, v, &c); i < len(value); i++ {
		g := grad[i]
		// Explicit conversions keep each product rounded apart (Go may
		// fuse a·b + c into an FMA elsewhere than amd64).
		m[i] = float32(c.B1*m[i]) + float32(c.OneMinusB1*g)
		v[i] = float32(c.B2*v[i]) + float32(float32(c.OneMinusB2*g)*g)
		denom := float32(float32(math.Sqrt(float64(v[i])))*c.InvBC2) + c.Eps
		value[i] = float32(value[i]*c.Decay) - float32(c.StepSize*m[i])/denom
	}
}
