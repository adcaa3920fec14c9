package vec32

// NormRow finishes a LayerNorm row from its mean and 1/σ: xhat[k] =
// (x[k] − mean)·inv, y[k] = xhat[k]·gamma[k] + beta[k] (y may be x). Each
// operation is rounded apart, on every path the scalar loop's bits.
func (kn *Kernels) NormRow(y, xhat, x, gamma, beta []float32, mean, inv float32) {
	xhat, y, gamma, beta = xhat[:len(x)], y[:len(x)], gamma[:len(x)], beta[:len(x)]
	for k := kn.normRow(y, xhat, x, gamma, beta, mean, inv); k < len(x); k++ {
		xv := (x[k] - mean) * inv
		xhat[k] = xv
		y[k] = float32(xv*gamma[k]) + beta[k]
	}
}

// NormBackRow sets a LayerNorm row's input gradient from the row's means of
// g = dy·γ (mg) and of g·x̂ (mgx): dx[k] = inv·((dy[k]·γ[k] − mg) −
// x̂[k]·mgx), each operation rounded apart, on every path the scalar loop's
// bits.
func (kn *Kernels) NormBackRow(dx, dy, xhat, gamma []float32, mg, mgx, inv float32) {
	dx, xhat, gamma = dx[:len(dy)], xhat[:len(dy)], gamma[:len(dy)]
	for k := kn.normBackRow(dx, dy, xhat, gamma, mg, mgx, inv); k < len(dy); k++ {
		dx[k] = inv * (float32(dy[k]*gamma[k]) - mg - float32(xhat[k]*mgx))
	}
}
