package vec32

import "golang.org/x/sys/cpu"

//go:noescape
func bf16Kernel12x32(kp int, a *uint32, rs, ks int, b *uint32, c *float32, ldc int)

//go:noescape
func cvtNEPS2BF16x16(dst *uint16, src *float32)

//go:noescape
func bf16CvtPairs(dst *uint32, src *float32, n int)

//go:noescape
func bf16Interleave(dst *uint32, lo, hi *float32, n int)

//go:noescape
func bf16InterleaveRows(dst *uint32, dstStride int, src *float32, srcStride, n, pairs int)

// hasBF16: the CPU has AVX512_BF16 (x/sys/cpu checks that the OS saves
// the AVX-512 registers).
var hasBF16 = hasAVX512 && cpu.X86.HasAVX512BF16

// bf16Fast says whether the bf16 product runs on VDPBF16PS: the CPU has
// it and the avx512 path is in use (BELUGA_KERNELS=avx2 or go forces the
// portable kernel, so that it is exercised where the fast one exists).
func (kn *Kernels) bf16Fast() bool { return hasBF16 && kn.name == PathAVX512 }

func bf16KernelAsm(kp int, a []uint32, rs, ks int, b []uint32, c []float32, ldc int) {
	if kp == 0 {
		return
	}
	// The kernel reads kp pairs of 12 rows of A and of 32 columns of B,
	// and 12 rows of 32 floats of C from c[0], ldc apart.
	_, _, _ = a[11*rs+(kp-1)*ks], b[32*kp-1], c[11*ldc+31]
	bf16Kernel12x32(kp, &a[0], 4*rs, 4*ks, &b[0], &c[0], ldc)
}

// asmPacker rounds with VCVTNEPS2BF16 (bf16CvtPairs, bf16Interleave).
var asmPacker = bf16Packer{
	pairs: func(dst []uint32, src []float32) {
		if len(dst) == 0 {
			return
		}
		_ = src[2*len(dst)-1]
		bf16CvtPairs(&dst[0], &src[0], 2*len(dst))
	},
	interleave: func(dst []uint32, lo, hi []float32) {
		if len(dst) == 0 {
			return
		}
		_, _ = lo[len(dst)-1], hi[len(dst)-1]
		bf16Interleave(&dst[0], &lo[0], &hi[0], len(dst))
	},
	rows: func(dst []uint32, dstStride int, src []float32, srcStride, n, pairs int) {
		if n == 0 || pairs == 0 {
			return
		}
		_, _ = dst[(pairs-1)*dstStride+n-1], src[(2*pairs-1)*srcStride+n-1]
		bf16InterleaveRows(&dst[0], dstStride, &src[0], srcStride, n, pairs)
	},
}
