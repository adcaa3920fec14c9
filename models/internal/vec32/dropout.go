package vec32

// SplitMix64's increment: the stream's state after i draws is its seed
// plus i·Gamma.
const Gamma = 0x9e3779b97f4a7c15

// SplitMix64 is the draw a SplitMix64 stream makes at state (its state
// after the draw's increment).
func SplitMix64(state uint64) uint64 {
	z := state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// DropoutMask sets k[i] to scale when SplitMix64(state + (i+1)·Gamma)>>11
// is at least least, else to 0: the multipliers of inverted dropout from
// the draws that follow a stream at state, a draw u = (x>>11)/2⁵³ keeping
// its unit when u ≥ least/2⁵³. Integer arithmetic: every path gives the
// same bits; the avx512 path draws eight at a time.
func (kn *Kernels) DropoutMask(k []float32, state, least uint64, scale float32) {
	done := kn.dropout(k, state, least, scale)
	state += uint64(done) * Gamma
	for i := done; i < len(k); i++ {
		state += Gamma
		k[i] = 0
		if SplitMix64(state)>>11 >= least {
			k[i] = scale
		}
	}
}
