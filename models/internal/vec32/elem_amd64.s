#include "textflag.h"

// func scaleAVX512(x *float32, n int, s float32)
//
// x[i] *= s for n (a multiple of 16) floats.
TEXT ·scaleAVX512(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS s+16(FP), Z1
	SHRQ $4, CX
	JZ   sdone
sloop:
	VMULPS  (DI), Z1, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	DECQ    CX
	JNZ     sloop
sdone:
	VZEROUPPER
	RET

// func mulToAVX512(dst, a, b *float32, n int)
//
// dst[i] = a[i]·b[i] for n (a multiple of 16) floats; dst may be a.
TEXT ·mulToAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   mdone
mloop:
	VMOVUPS (SI), Z0
	VMULPS  (DX), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	ADDQ    $64, SI
	ADDQ    $64, DX
	DECQ    CX
	JNZ     mloop
mdone:
	VZEROUPPER
	RET

// func maxAVX512(x *float32, n int) (m float32, nan bool)
//
// The largest of n (a positive multiple of 16) floats, and whether any is
// NaN (VMAXPS passes a NaN on only from its second operand).
TEXT ·maxAVX512(SB), NOSPLIT, $0-21
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Z0
	VCMPPS  $3, Z0, Z0, K1
	ADDQ $64, SI
	SUBQ $16, CX
	SHRQ $4, CX
	JZ   xreduce
xloop:
	VMOVUPS (SI), Z1
	VMAXPS  Z1, Z0, Z0
	VCMPPS  $3, Z1, Z1, K2
	KORW    K2, K1, K1
	ADDQ    $64, SI
	DECQ    CX
	JNZ     xloop
xreduce:
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS  Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS  X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS  X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS  X1, X0, X0
	VMOVSS  X0, m+16(FP)
	KMOVW   K1, AX
	TESTW   AX, AX
	SETNE   nan+20(FP)
	VZEROUPPER
	RET

// func sumSquaresAVX512(x *float32, n int, s *[8]float64)
//
// s[j] += float64(x[i])² for i ≡ j (mod 8), i < n (a multiple of 8), in
// order of i: one float64 lane per partial sum, as the Go loop keeps them
// (a float32's square is exact in float64, so only the additions round).
TEXT ·sumSquaresAVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ s+16(FP), DI
	VMOVUPD (DI), Z0
	SHRQ $3, CX
	JZ   qdone
qloop:
	VCVTPS2PD (SI), Z1
	VMULPD  Z1, Z1, Z1
	VADDPD  Z1, Z0, Z0
	ADDQ    $32, SI
	DECQ    CX
	JNZ     qloop
qdone:
	VMOVUPD Z0, (DI)
	VZEROUPPER
	RET

// func mulAddAVX512(dst, a, b, c *float32, n int)
//
// dst[i] = a[i]·b[i] + c[i], the product rounded before the sum (no FMA),
// for n (a multiple of 16) floats; dst may be a or c.
TEXT ·mulAddAVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), R8
	MOVQ n+32(FP), CX
	SHRQ $4, CX
	JZ   madone
maloop:
	VMOVUPS (SI), Z0
	VMULPS  (DX), Z0, Z0
	VADDPS  (R8), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, R8
	DECQ    CX
	JNZ     maloop
madone:
	VZEROUPPER
	RET
