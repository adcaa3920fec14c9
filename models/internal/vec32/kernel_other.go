//go:build !amd64

package vec32

import "unsafe"

// HasAVX2FMA is false off amd64: Gemm runs the portable kernel.
const HasAVX2FMA = false

// sgemmKernel4x16 is the portable form of the amd64 kernel.
func sgemmKernel4x16(k int, a, b, c *float32, ldc int) {
	ap, bp := unsafe.Slice(a, 4*k), unsafe.Slice(b, 16*k)
	cp := unsafe.Slice(c, 3*ldc+16)
	for i := 0; i < 4; i++ {
		for j := 0; j < 16; j++ {
			var s float32
			for l := 0; l < k; l++ {
				s += ap[l*4+i] * bp[l*16+j]
			}
			cp[i*ldc+j] += s
		}
	}
}

// geluForwardVec, geluBackwardVec and expShiftVec have no vector form here: they leave
// all the work to the portable loops.
func geluForwardVec(y, x []float32) int { return 0 }

func geluBackwardVec(dx, dy, x []float32) int { return 0 }

func expShiftVec(x []float32, shift float32) (int, float32) { return 0, 0 }
