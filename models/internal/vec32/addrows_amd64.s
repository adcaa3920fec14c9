#include "textflag.h"

// func addRowsAVX512(d, src *float32, rows, stride, w int)
//
// d[j] += src[r·stride + j] for r = 0, 1, …, rows−1 in order, j < w (a
// multiple of 16): each column summed as the scalar loop sums it, sixteen
// columns a register, four registers side by side so that four chains of
// additions overlap.
TEXT ·addRowsAVX512(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), BX
	MOVQ stride+24(FP), R8
	SHLQ $2, R8
	MOVQ w+32(FP), CX
wide:
	CMPQ CX, $64
	JLT  narrow
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	MOVQ SI, AX
	MOVQ BX, DX
	TESTQ DX, DX
	JZ   widestore
wideloop:
	VADDPS (AX), Z0, Z0
	VADDPS 64(AX), Z1, Z1
	VADDPS 128(AX), Z2, Z2
	VADDPS 192(AX), Z3, Z3
	ADDQ R8, AX
	DECQ DX
	JNZ  wideloop
widestore:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	SUBQ $64, CX
	JMP  wide
narrow:
	CMPQ CX, $16
	JLT  done
	VMOVUPS (DI), Z0
	MOVQ SI, AX
	MOVQ BX, DX
	TESTQ DX, DX
	JZ   narrowstore
narrowloop:
	VADDPS (AX), Z0, Z0
	ADDQ R8, AX
	DECQ DX
	JNZ  narrowloop
narrowstore:
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  narrow
done:
	VZEROUPPER
	RET

// func addRowProductsAVX512(dg, db, dy, x *float32, rows, stride, w int)
//
// dg[j] += dy[r·stride+j]·x[r·stride+j] (the product rounded, then the
// sum) and db[j] += dy[r·stride+j] for r = 0, 1, …, rows−1 in order, j < w
// (a multiple of 16): LayerNorm's dγ and dβ, each column summed as the
// scalar loop sums it, thirty-two columns a pass.
TEXT ·addRowProductsAVX512(SB), NOSPLIT, $0-56
	MOVQ dg+0(FP), DI
	MOVQ db+8(FP), R9
	MOVQ dy+16(FP), SI
	MOVQ x+24(FP), R10
	MOVQ rows+32(FP), BX
	MOVQ stride+40(FP), R8
	SHLQ $2, R8
	MOVQ w+48(FP), CX
pwide:
	CMPQ CX, $32
	JLT  pnarrow
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS (R9), Z2
	VMOVUPS 64(R9), Z3
	MOVQ SI, AX
	MOVQ R10, R11
	MOVQ BX, DX
	TESTQ DX, DX
	JZ   pwidestore
pwideloop:
	VMOVUPS (AX), Z4
	VMOVUPS 64(AX), Z5
	VMULPS  (R11), Z4, Z6
	VMULPS  64(R11), Z5, Z7
	VADDPS  Z6, Z0, Z0
	VADDPS  Z7, Z1, Z1
	VADDPS  Z4, Z2, Z2
	VADDPS  Z5, Z3, Z3
	ADDQ R8, AX
	ADDQ R8, R11
	DECQ DX
	JNZ  pwideloop
pwidestore:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, (R9)
	VMOVUPS Z3, 64(R9)
	ADDQ $128, DI
	ADDQ $128, R9
	ADDQ $128, SI
	ADDQ $128, R10
	SUBQ $32, CX
	JMP  pwide
pnarrow:
	CMPQ CX, $16
	JLT  pdone
	VMOVUPS (DI), Z0
	VMOVUPS (R9), Z2
	MOVQ SI, AX
	MOVQ R10, R11
	MOVQ BX, DX
	TESTQ DX, DX
	JZ   pnarrowstore
pnarrowloop:
	VMOVUPS (AX), Z4
	VMULPS  (R11), Z4, Z6
	VADDPS  Z6, Z0, Z0
	VADDPS  Z4, Z2, Z2
	ADDQ R8, AX
	ADDQ R8, R11
	DECQ DX
	JNZ  pnarrowloop
pnarrowstore:
	VMOVUPS Z0, (DI)
	VMOVUPS Z2, (R9)
	ADDQ $64, DI
	ADDQ $64, R9
	ADDQ $64, SI
	ADDQ $64, R10
	SUBQ $16, CX
	JMP  pnarrow
pdone:
	VZEROUPPER
	RET
