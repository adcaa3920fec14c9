#include "textflag.h"

// func adamWAVX(value, grad, m, v *float32, n int, c *AdamWCoef)
//
// One AdamW update of n (a multiple of 8) floats, each operation rounded
// as Go rounds the scalar loop (AdamW in adamw.go: products and sums apart,
// no FMA; VSQRTPS is the float32 rounding of the float64 square root), so
// that every path gives the bits of the portable loop.
TEXT ·adamWAVX(SB), NOSPLIT, $0-48
	MOVQ value+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), R8
	VBROADCASTSS 0(R8), Y8
	VBROADCASTSS 4(R8), Y9
	VBROADCASTSS 8(R8), Y10
	VBROADCASTSS 12(R8), Y11
	VBROADCASTSS 16(R8), Y12
	VBROADCASTSS 20(R8), Y13
	VBROADCASTSS 24(R8), Y14
	VBROADCASTSS 28(R8), Y15
	SHRQ $3, CX
	JZ   adoneAVX
aloopAVX:
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y8, Y1
	VMULPS  Y0, Y9, Y2
	VADDPS  Y2, Y1, Y1
	VMOVUPS Y1, (DX)
	VMULPS  (BX), Y10, Y3
	VMULPS  Y0, Y11, Y4
	VMULPS  Y0, Y4, Y4
	VADDPS  Y4, Y3, Y3
	VMOVUPS Y3, (BX)
	VSQRTPS Y3, Y5
	VMULPS  Y12, Y5, Y5
	VADDPS  Y13, Y5, Y5
	VMULPS  Y15, Y1, Y6
	VDIVPS  Y5, Y6, Y6
	VMULPS  (DI), Y14, Y7
	VSUBPS  Y6, Y7, Y7
	VMOVUPS Y7, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, BX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     aloopAVX
adoneAVX:
	VZEROUPPER
	RET

// func adamWAVX512(value, grad, m, v *float32, n int, c *AdamWCoef)
//
// One AdamW update of n (a multiple of 16) floats, each operation rounded
// as Go rounds the scalar loop (AdamW in adamw.go: products and sums apart,
// no FMA; VSQRTPS is the float32 rounding of the float64 square root), so
// that every path gives the bits of the portable loop.
TEXT ·adamWAVX512(SB), NOSPLIT, $0-48
	MOVQ value+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), R8
	VBROADCASTSS 0(R8), Z8
	VBROADCASTSS 4(R8), Z9
	VBROADCASTSS 8(R8), Z10
	VBROADCASTSS 12(R8), Z11
	VBROADCASTSS 16(R8), Z12
	VBROADCASTSS 20(R8), Z13
	VBROADCASTSS 24(R8), Z14
	VBROADCASTSS 28(R8), Z15
	SHRQ $4, CX
	JZ   adoneAVX512
aloopAVX512:
	VMOVUPS (SI), Z0
	VMULPS  (DX), Z8, Z1
	VMULPS  Z0, Z9, Z2
	VADDPS  Z2, Z1, Z1
	VMOVUPS Z1, (DX)
	VMULPS  (BX), Z10, Z3
	VMULPS  Z0, Z11, Z4
	VMULPS  Z0, Z4, Z4
	VADDPS  Z4, Z3, Z3
	VMOVUPS Z3, (BX)
	VSQRTPS Z3, Z5
	VMULPS  Z12, Z5, Z5
	VADDPS  Z13, Z5, Z5
	VMULPS  Z15, Z1, Z6
	VDIVPS  Z5, Z6, Z6
	VMULPS  (DI), Z14, Z7
	VSUBPS  Z6, Z7, Z7
	VMOVUPS Z7, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, BX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     aloopAVX512
adoneAVX512:
	VZEROUPPER
	RET
