#include "textflag.h"

// AVX2 versions of the AVX-512 element-wise kernels beside them (8 floats
// a register instead of 16), the same operations in the same order: the
// bits of the scalar loops.

// func scaleAVX2(x *float32, n int, s float32)
//
// x[i] *= s for n (a multiple of 8) floats.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS s+16(FP), Y1
	SHRQ $3, CX
	JZ   sdone2
sloop2:
	VMULPS  (DI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNZ     sloop2
sdone2:
	VZEROUPPER
	RET


// func mulToAVX2(dst, a, b *float32, n int)
//
// dst[i] = a[i]·b[i] for n (a multiple of 8) floats; dst may be a.
TEXT ·mulToAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   mdone2
mloop2:
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	DECQ    CX
	JNZ     mloop2
mdone2:
	VZEROUPPER
	RET


// func addRowsAVX2(d, src *float32, rows, stride, w int)
//
// d[j] += src[r·stride + j] for r = 0, 1, …, rows−1 in order, j < w (a
// multiple of 8): each column summed as the scalar loop sums it, eight
// columns a register, four registers side by side so that four chains of
// additions overlap.
TEXT ·addRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), BX
	MOVQ stride+24(FP), R8
	SHLQ $2, R8
	MOVQ w+32(FP), CX
wide2:
	CMPQ CX, $32
	JLT  narrow2
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ SI, AX
	MOVQ BX, DX
	TESTQ DX, DX
	JZ   widestore2
wideloop2:
	VADDPS (AX), Y0, Y0
	VADDPS 32(AX), Y1, Y1
	VADDPS 64(AX), Y2, Y2
	VADDPS 96(AX), Y3, Y3
	ADDQ R8, AX
	DECQ DX
	JNZ  wideloop2
widestore2:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	SUBQ $32, CX
	JMP  wide2
narrow2:
	CMPQ CX, $8
	JLT  done2
	VMOVUPS (DI), Y0
	MOVQ SI, AX
	MOVQ BX, DX
	TESTQ DX, DX
	JZ   narrowstore2
narrowloop2:
	VADDPS (AX), Y0, Y0
	ADDQ R8, AX
	DECQ DX
	JNZ  narrowloop2
narrowstore2:
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  narrow2
done2:
	VZEROUPPER
	RET


// func addRowProductsAVX2(dg, db, dy, x *float32, rows, stride, w int)
//
// dg[j] += dy[r·stride+j]·x[r·stride+j] (the product rounded, then the
// sum) and db[j] += dy[r·stride+j] for r = 0, 1, …, rows−1 in order, j < w
// (a multiple of 8): LayerNorm's dγ and dβ, each column summed as the
// scalar loop sums it, sixteen columns a pass.
TEXT ·addRowProductsAVX2(SB), NOSPLIT, $0-56
	MOVQ dg+0(FP), DI
	MOVQ db+8(FP), R9
	MOVQ dy+16(FP), SI
	MOVQ x+24(FP), R10
	MOVQ rows+32(FP), BX
	MOVQ stride+40(FP), R8
	SHLQ $2, R8
	MOVQ w+48(FP), CX
pwide2:
	CMPQ CX, $16
	JLT  pnarrow2
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS (R9), Y2
	VMOVUPS 32(R9), Y3
	MOVQ SI, AX
	MOVQ R10, R11
	MOVQ BX, DX
	TESTQ DX, DX
	JZ   pwidestore2
pwideloop2:
	VMOVUPS (AX), Y4
	VMOVUPS 32(AX), Y5
	VMULPS  (R11), Y4, Y6
	VMULPS  32(R11), Y5, Y7
	VADDPS  Y6, Y0, Y0
	VADDPS  Y7, Y1, Y1
	VADDPS  Y4, Y2, Y2
	VADDPS  Y5, Y3, Y3
	ADDQ R8, AX
	ADDQ R8, R11
	DECQ DX
	JNZ  pwideloop2
pwidestore2:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (R9)
	VMOVUPS Y3, 32(R9)
	ADDQ $64, DI
	ADDQ $64, R9
	ADDQ $64, SI
	ADDQ $64, R10
	SUBQ $16, CX
	JMP  pwide2
pnarrow2:
	CMPQ CX, $8
	JLT  pdone2
	VMOVUPS (DI), Y0
	VMOVUPS (R9), Y2
	MOVQ SI, AX
	MOVQ R10, R11
	MOVQ BX, DX
	TESTQ DX, DX
	JZ   pnarrowstore2
pnarrowloop2:
	VMOVUPS (AX), Y4
	VMULPS  (R11), Y4, Y6
	VADDPS  Y6, Y0, Y0
	VADDPS  Y4, Y2, Y2
	ADDQ R8, AX
	ADDQ R8, R11
	DECQ DX
	JNZ  pnarrowloop2
pnarrowstore2:
	VMOVUPS Y0, (DI)
	VMOVUPS Y2, (R9)
	ADDQ $32, DI
	ADDQ $32, R9
	ADDQ $32, SI
	ADDQ $32, R10
	SUBQ $8, CX
	JMP  pnarrow2
pdone2:
	VZEROUPPER
	RET

// func normRowAVX2(y, xhat, x, gamma, beta *float32, n int, mean, inv float32)
//
// xhat[k] = (x[k] − mean)·inv and y[k] = xhat[k]·gamma[k] + beta[k] for n
// (a multiple of 8) floats, each operation rounded apart (no FMA), as Go
// rounds the scalar loop; y may be x.
TEXT ·normRowAVX2(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ xhat+8(FP), R8
	MOVQ x+16(FP), SI
	MOVQ gamma+24(FP), R9
	MOVQ beta+32(FP), R10
	MOVQ n+40(FP), CX
	VBROADCASTSS mean+48(FP), Y6
	VBROADCASTSS inv+52(FP), Y7
	SHRQ $3, CX
	JZ   ndone2
nloop2:
	VMOVUPS (SI), Y0
	VSUBPS  Y6, Y0, Y0
	VMULPS  Y7, Y0, Y0
	VMOVUPS Y0, (R8)
	VMULPS  (R9), Y0, Y0
	VADDPS  (R10), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R8
	ADDQ    $32, R9
	ADDQ    $32, R10
	DECQ    CX
	JNZ     nloop2
ndone2:
	VZEROUPPER
	RET


// func normBackRowAVX2(dx, dy, xhat, gamma *float32, n int, mg, mgx, inv float32)
//
// dx[k] = inv·((dy[k]·gamma[k] − mg) − xhat[k]·mgx) for n (a multiple of
// 8) floats, each operation rounded apart (no FMA), as Go rounds the
// scalar loop.
TEXT ·normBackRowAVX2(SB), NOSPLIT, $0-52
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ xhat+16(FP), R8
	MOVQ gamma+24(FP), R9
	MOVQ n+32(FP), CX
	VBROADCASTSS mg+40(FP), Y5
	VBROADCASTSS mgx+44(FP), Y6
	VBROADCASTSS inv+48(FP), Y7
	SHRQ $3, CX
	JZ   bdone2
bloop2:
	VMOVUPS (SI), Y0
	VMULPS  (R9), Y0, Y0
	VSUBPS  Y5, Y0, Y0
	VMULPS  (R8), Y6, Y1
	VSUBPS  Y1, Y0, Y0
	VMULPS  Y7, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R8
	ADDQ    $32, R9
	DECQ    CX
	JNZ     bloop2
bdone2:
	VZEROUPPER
	RET

// func sumSquaresAVX2(x *float32, n int, s *[8]float64)
//
// s[j] += float64(x[i])² for i ≡ j (mod 8), i < n (a multiple of 8), in
// order of i: the eight partial sums in two registers' lanes.
TEXT ·sumSquaresAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ s+16(FP), DI
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	SHRQ $3, CX
	JZ   qdone2
qloop2:
	VCVTPS2PD (SI), Y2
	VCVTPS2PD 16(SI), Y3
	VMULPD  Y2, Y2, Y2
	VMULPD  Y3, Y3, Y3
	VADDPD  Y2, Y0, Y0
	VADDPD  Y3, Y1, Y1
	ADDQ    $32, SI
	DECQ    CX
	JNZ     qloop2
qdone2:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VZEROUPPER
	RET

// func maxAVX2(x *float32, n int) (m float32, nan bool)
//
// The largest of n (a positive multiple of 8) floats, and whether any is
// NaN (VMAXPS passes a NaN on only from its second operand).
TEXT ·maxAVX2(SB), NOSPLIT, $0-21
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Y0
	VCMPPS  $3, Y0, Y0, Y2
	ADDQ $32, SI
	SUBQ $8, CX
	SHRQ $3, CX
	JZ   xreduce2
xloop2:
	VMOVUPS (SI), Y1
	VMAXPS  Y1, Y0, Y0
	VCMPPS  $3, Y1, Y1, Y3
	VORPS   Y3, Y2, Y2
	ADDQ    $32, SI
	DECQ    CX
	JNZ     xloop2
xreduce2:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS  X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS  X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS  X1, X0, X0
	VMOVSS  X0, m+16(FP)
	VMOVMSKPS Y2, AX
	TESTL   AX, AX
	SETNE   nan+20(FP)
	VZEROUPPER
	RET

// func mulAddAVX2(dst, a, b, c *float32, n int)
//
// dst[i] = a[i]·b[i] + c[i], the product rounded before the sum (no FMA),
// for n (a multiple of 8) floats; dst may be a or c.
TEXT ·mulAddAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), R8
	MOVQ n+32(FP), CX
	SHRQ $3, CX
	JZ   madone2
maloop2:
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VADDPS  (R8), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, R8
	DECQ    CX
	JNZ     maloop2
madone2:
	VZEROUPPER
	RET
