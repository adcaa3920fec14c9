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
