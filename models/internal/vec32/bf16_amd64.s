#include "textflag.h"

// The conversions to bf16 of the bf16 product's packing (its micro-kernel,
// bf16Kernel12x32, is generated with the float32 ones: asm/gemm). The
// AVX512_BF16 instructions below are written as BYTE directives: Go's
// assembler (1.26) knows no VCVTNEPS2BF16. Each is the register form,
// EVEX.512.F3.0F38.W0 72 /r (VCVTNEPS2BF16 ymm1, zmm2); the bytes are those
// GNU as 2.40 emits for the AT&T instruction in each comment (assembled with
// `as --64` and read back with `objdump -d`), and the tests check the
// conversions bit for bit against the Go reference (toBF16).

// func cvtNEPS2BF16x16(dst *uint16, src *float32)
//
// dst[0:16] = VCVTNEPS2BF16(src[0:16]): the CPU's own rounding of floats
// to bf16, against which the tests check the packing's (toBF16).
TEXT ·cvtNEPS2BF16x16(SB), NOSPLIT, $0-16
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	VMOVUPS (SI), Z0
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8	// vcvtneps2bf16 %zmm0,%ymm1
	VMOVDQU Y1, (DI)
	VZEROUPPER
	RET

// func bf16CvtPairs(dst *uint32, src *float32, n int)
//
// dst[0:n/2] = the n floats at src (n even) rounded to bf16 by
// VCVTNEPS2BF16, two to a word: element 2l in the low half of dst[l],
// 2l+1 in the high half — a row of A (or of Bᵀ) as the kernel's pairs. 16
// floats at a time, the rest under a mask.
TEXT ·bf16CvtPairs(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

cvtloop:
	CMPQ CX, $16
	JLT  cvttail
	VMOVUPS (SI), Z0
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8 // vcvtneps2bf16 %zmm0,%ymm1
	VMOVDQU Y1, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JMP  cvtloop

cvttail:
	TESTQ CX, CX
	JZ    cvtdone
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1      // the n%16 floats left
	SHRQ $1, CX
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K2      // their pairs
	VMOVUPS.Z (SI), K1, Z0
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8 // vcvtneps2bf16 %zmm0,%ymm1
	VMOVDQU32 Y1, K2, (DI)

cvtdone:
	VZEROUPPER
	RET

// func bf16Interleave(dst *uint32, lo, hi *float32, n int)
//
// dst[j] = bf16(lo[j]) | bf16(hi[j])<<16 for j < n, rounded by
// VCVTNEPS2BF16: two rows of B (or of Aᵀ), k = 2l and 2l+1, as the
// kernel's pairs. 16 at a time, the rest under a mask.
TEXT ·bf16Interleave(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ lo+8(FP), SI
	MOVQ hi+16(FP), DX
	MOVQ n+24(FP), CX

ilvloop:
	CMPQ CX, $16
	JLT  ilvtail
	VMOVUPS (SI), Z0
	VMOVUPS (DX), Z2
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8 // vcvtneps2bf16 %zmm0,%ymm1
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xda // vcvtneps2bf16 %zmm2,%ymm3
	VPMOVZXWD Y1, Z4
	VPMOVZXWD Y3, Z5
	VPSLLD $16, Z5, Z5
	VPORD Z4, Z5, Z5
	VMOVDQU32 Z5, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  ilvloop

ilvtail:
	TESTQ CX, CX
	JZ    ilvdone
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (DX), K1, Z2
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8 // vcvtneps2bf16 %zmm0,%ymm1
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xda // vcvtneps2bf16 %zmm2,%ymm3
	VPMOVZXWD Y1, Z4
	VPMOVZXWD Y3, Z5
	VPSLLD $16, Z5, Z5
	VPORD Z4, Z5, Z5
	VMOVDQU32 Z5, K1, (DI)

ilvdone:
	VZEROUPPER
	RET

// func bf16InterleaveRows(dst *uint32, dstStride int, src *float32, srcStride, n, pairs int)
//
// bf16Interleave for pairs pairs of rows at once: pair l's dst at dst +
// l·dstStride words, its rows at src + 2l·srcStride and src +
// (2l+1)·srcStride floats, n elements each — B's (or Aᵀ's) rows into a
// packed panel without a call per pair.
TEXT ·bf16InterleaveRows(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ dstStride+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ srcStride+24(FP), R9
	SHLQ $2, R9
	MOVQ n+32(FP), DX
	MOVQ pairs+40(FP), BX
	// K1: the n%16 elements of each row's last, partial block.
	MOVQ DX, CX
	ANDQ $15, CX
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1
	TESTQ BX, BX
	JZ    rowsdone

rowsloop:
	MOVQ DI, R11         // this pair's dst
	MOVQ SI, R12         // its low row
	LEAQ (SI)(R9*1), R13 // its high row
	MOVQ DX, R10

rowsblock:
	CMPQ R10, $16
	JLT  rowstail
	VMOVUPS (R12), Z0
	VMOVUPS (R13), Z2
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8 // vcvtneps2bf16 %zmm0,%ymm1
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xda // vcvtneps2bf16 %zmm2,%ymm3
	VPMOVZXWD Y1, Z4
	VPMOVZXWD Y3, Z5
	VPSLLD $16, Z5, Z5
	VPORD Z4, Z5, Z5
	VMOVDQU32 Z5, (R11)
	ADDQ $64, R12
	ADDQ $64, R13
	ADDQ $64, R11
	SUBQ $16, R10
	JMP  rowsblock

rowstail:
	TESTQ R10, R10
	JZ    rowsnext
	VMOVUPS.Z (R12), K1, Z0
	VMOVUPS.Z (R13), K1, Z2
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8 // vcvtneps2bf16 %zmm0,%ymm1
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xda // vcvtneps2bf16 %zmm2,%ymm3
	VPMOVZXWD Y1, Z4
	VPMOVZXWD Y3, Z5
	VPSLLD $16, Z5, Z5
	VPORD Z4, Z5, Z5
	VMOVDQU32 Z5, K1, (R11)

rowsnext:
	ADDQ R8, DI
	LEAQ (SI)(R9*2), SI
	DECQ BX
	JNZ  rowsloop

rowsdone:
	VZEROUPPER
	RET
