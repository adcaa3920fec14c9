#include "textflag.h"

// func normRowAVX512(y, xhat, x, gamma, beta *float32, n int, mean, inv float32)
//
// xhat[k] = (x[k] − mean)·inv and y[k] = xhat[k]·gamma[k] + beta[k] for n
// (a multiple of 16) floats, each operation rounded apart (no FMA), as Go
// rounds the scalar loop; y may be x.
TEXT ·normRowAVX512(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ xhat+8(FP), R8
	MOVQ x+16(FP), SI
	MOVQ gamma+24(FP), R9
	MOVQ beta+32(FP), R10
	MOVQ n+40(FP), CX
	VBROADCASTSS mean+48(FP), Z6
	VBROADCASTSS inv+52(FP), Z7
	SHRQ $4, CX
	JZ   ndone
nloop:
	VMOVUPS (SI), Z0
	VSUBPS  Z6, Z0, Z0
	VMULPS  Z7, Z0, Z0
	VMOVUPS Z0, (R8)
	VMULPS  (R9), Z0, Z0
	VADDPS  (R10), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	ADDQ    $64, R8
	ADDQ    $64, R9
	ADDQ    $64, R10
	DECQ    CX
	JNZ     nloop
ndone:
	VZEROUPPER
	RET

// func normBackRowAVX512(dx, dy, xhat, gamma *float32, n int, mg, mgx, inv float32)
//
// dx[k] = inv·((dy[k]·gamma[k] − mg) − xhat[k]·mgx) for n (a multiple of
// 16) floats, each operation rounded apart (no FMA), as Go rounds the
// scalar loop.
TEXT ·normBackRowAVX512(SB), NOSPLIT, $0-52
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ xhat+16(FP), R8
	MOVQ gamma+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS mg+40(FP), Z5
	VBROADCASTSS mgx+44(FP), Z6
	VBROADCASTSS inv+48(FP), Z7
	SHRQ $4, CX
	JZ   bdone
bloop:
	VMOVUPS (SI), Z0
	VMULPS  (R9), Z0, Z0
	VSUBPS  Z5, Z0, Z0
	VMULPS  (R8), Z6, Z1
	VSUBPS  Z1, Z0, Z0
	VMULPS  Z7, Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	ADDQ    $64, R8
	ADDQ    $64, R9
	DECQ    CX
	JNZ     bloop
bdone:
	VZEROUPPER
	RET
