//go:build !amd64

package vec32

// available is the portable path alone off amd64.
func available() []*Kernels { return []*Kernels{goKernels} }

func packBTrans(panel, b []float32, ldb, kb, nr int) int { return 0 }
