#include "textflag.h"

// func packBTransAVX(panel, b *float32, ldb, kb, nr int)
//
// The packing of a transposed B's full panel: panel[l·nr + j] =
// b[j·ldb + l] for j < nr (a multiple of 8) and l < kb (a multiple of 8),
// by 8×8 blocks transposed in registers (the scalar loop gathers one
// float per load).
TEXT ·packBTransAVX(SB), NOSPLIT, $0-40
	MOVQ panel+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ ldb+16(FP), R8
	SHLQ $2, R8               // ldb in bytes
	MOVQ kb+24(FP), R9
	SHRQ $3, R9               // blocks of l
	MOVQ nr+32(FP), R10
	SHLQ $2, R10              // a packed row in bytes
	LEAQ (R8)(R8*2), R11      // 3·ldb
	LEAQ (R10)(R10*2), R12    // 3 packed rows
	TESTQ R9, R9
	JZ   pdone
lblock:
	MOVQ SI, AX               // b at (j0 = 0, l)
	MOVQ DI, DX               // panel at (l, j0 = 0)
	MOVQ nr+32(FP), CX
	SHRQ $3, CX               // blocks of j
jblock:
	LEAQ (AX)(R8*4), BX       // row j0+4
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(R8*1), Y1
	VMOVUPS (AX)(R8*2), Y2
	VMOVUPS (AX)(R11*1), Y3
	VMOVUPS (BX), Y4
	VMOVUPS (BX)(R8*1), Y5
	VMOVUPS (BX)(R8*2), Y6
	VMOVUPS (BX)(R11*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	LEAQ (DX)(R10*4), BX      // packed row l+4
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, (DX)(R10*1)
	VMOVUPS Y10, (DX)(R10*2)
	VMOVUPS Y11, (DX)(R12*1)
	VMOVUPS Y12, (BX)
	VMOVUPS Y13, (BX)(R10*1)
	VMOVUPS Y14, (BX)(R10*2)
	VMOVUPS Y15, (BX)(R12*1)
	LEAQ (AX)(R8*8), AX       // next 8 rows of b (j0 += 8)
	ADDQ $32, DX              // next 8 columns of the panel
	DECQ CX
	JNZ  jblock
	ADDQ $32, SI              // l += 8
	LEAQ (DI)(R10*8), DI      // 8 packed rows on
	DECQ R9
	JNZ  lblock
pdone:
	VZEROUPPER
	RET
