#include "textflag.h"

// The AVX512_BF16 instructions below are written as BYTE directives: Go's
// assembler (1.26) knows neither VDPBF16PS nor VCVTNEPS2BF16. Each is the
// register form, EVEX.512.F3.0F38.W0 52 /r (VDPBF16PS zmm1, zmm2, zmm3) and
// EVEX.512.F3.0F38.W0 72 /r (VCVTNEPS2BF16 ymm1, zmm2); the bytes are those
// GNU as 2.40 emits for the AT&T instruction in each comment (assembled with
// `as --64` and read back with `objdump -d`), and TestGemmBF16 checks the
// kernel bit for bit against the Go reference of the same sums.

// func bf16Kernel12x32(kp int, a *uint32, rs, ks int, b *uint32, c *float32, ldc int)
//
// C[12×32] += A·B for kp pairs of k: A's pair l of row i (element 2l in the
// low half of the word, 2l+1 in the high half) at a + i·rs + l·ks bytes (a
// packed panel: rs = 4, ks = 48; rows of pairs converted where they lie in
// A: rs = 4·stride, ks = 4), and a packed panel of B holding kp pairs per
// column (b[l*32+j]: column j's rows 2l and 2l+1); C's rows are ldc floats
// apart. 24 accumulators of 16 floats (Z0–Z23) start from zero; per pair,
// two loads of B, twelve broadcasts of A's pairs and 24 VDPBF16PS, each
// adding, per float lane, the high pair's product and then the low pair's
// to the accumulator (fp32, RNE); the accumulators are then added to C.
TEXT ·bf16Kernel12x32(SB), NOSPLIT, $0-56
	MOVQ kp+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rs+16(FP), R9
	MOVQ ks+24(FP), R12
	MOVQ b+32(FP), DI
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8
	LEAQ (R9)(R9*2), R10   // 3·rs
	LEAQ (SI)(R9*4), R11   // row 4
	LEAQ (R11)(R9*4), R13  // row 8
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	TESTQ CX, CX
	JZ    storebf16

loopbf16:
	VMOVUPS (DI), Z24
	VMOVUPS 64(DI), Z25
	VBROADCASTSS (SI), Z26
	BYTE $0x62; BYTE $0x92; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xc2	// vdpbf16ps %zmm26,%zmm24,%zmm0
	BYTE $0x62; BYTE $0x92; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xca	// vdpbf16ps %zmm26,%zmm25,%zmm1
	VBROADCASTSS (SI)(R9*1), Z27
	BYTE $0x62; BYTE $0x92; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xd3	// vdpbf16ps %zmm27,%zmm24,%zmm2
	BYTE $0x62; BYTE $0x92; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xdb	// vdpbf16ps %zmm27,%zmm25,%zmm3
	VBROADCASTSS (SI)(R9*2), Z28
	BYTE $0x62; BYTE $0x92; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xe4	// vdpbf16ps %zmm28,%zmm24,%zmm4
	BYTE $0x62; BYTE $0x92; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xec	// vdpbf16ps %zmm28,%zmm25,%zmm5
	VBROADCASTSS (SI)(R10*1), Z29
	BYTE $0x62; BYTE $0x92; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xf5	// vdpbf16ps %zmm29,%zmm24,%zmm6
	BYTE $0x62; BYTE $0x92; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xfd	// vdpbf16ps %zmm29,%zmm25,%zmm7
	VBROADCASTSS (R11), Z30
	BYTE $0x62; BYTE $0x12; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xc6	// vdpbf16ps %zmm30,%zmm24,%zmm8
	BYTE $0x62; BYTE $0x12; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xce	// vdpbf16ps %zmm30,%zmm25,%zmm9
	VBROADCASTSS (R11)(R9*1), Z31
	BYTE $0x62; BYTE $0x12; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xd7	// vdpbf16ps %zmm31,%zmm24,%zmm10
	BYTE $0x62; BYTE $0x12; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xdf	// vdpbf16ps %zmm31,%zmm25,%zmm11
	VBROADCASTSS (R11)(R9*2), Z26
	BYTE $0x62; BYTE $0x12; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xe2	// vdpbf16ps %zmm26,%zmm24,%zmm12
	BYTE $0x62; BYTE $0x12; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xea	// vdpbf16ps %zmm26,%zmm25,%zmm13
	VBROADCASTSS (R11)(R10*1), Z27
	BYTE $0x62; BYTE $0x12; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xf3	// vdpbf16ps %zmm27,%zmm24,%zmm14
	BYTE $0x62; BYTE $0x12; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xfb	// vdpbf16ps %zmm27,%zmm25,%zmm15
	VBROADCASTSS (R13), Z28
	BYTE $0x62; BYTE $0x82; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xc4	// vdpbf16ps %zmm28,%zmm24,%zmm16
	BYTE $0x62; BYTE $0x82; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xcc	// vdpbf16ps %zmm28,%zmm25,%zmm17
	VBROADCASTSS (R13)(R9*1), Z29
	BYTE $0x62; BYTE $0x82; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xd5	// vdpbf16ps %zmm29,%zmm24,%zmm18
	BYTE $0x62; BYTE $0x82; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xdd	// vdpbf16ps %zmm29,%zmm25,%zmm19
	VBROADCASTSS (R13)(R9*2), Z30
	BYTE $0x62; BYTE $0x82; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xe6	// vdpbf16ps %zmm30,%zmm24,%zmm20
	BYTE $0x62; BYTE $0x82; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xee	// vdpbf16ps %zmm30,%zmm25,%zmm21
	VBROADCASTSS (R13)(R10*1), Z31
	BYTE $0x62; BYTE $0x82; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xf7	// vdpbf16ps %zmm31,%zmm24,%zmm22
	BYTE $0x62; BYTE $0x82; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xff	// vdpbf16ps %zmm31,%zmm25,%zmm23
	ADDQ R12, SI
	ADDQ R12, R11
	ADDQ R12, R13
	ADDQ $128, DI
	DECQ CX
	JNZ  loopbf16

storebf16:
	VADDPS (DX), Z0, Z0
	VMOVUPS Z0, (DX)
	VADDPS 64(DX), Z1, Z1
	VMOVUPS Z1, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z2, Z2
	VMOVUPS Z2, (DX)
	VADDPS 64(DX), Z3, Z3
	VMOVUPS Z3, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z4, Z4
	VMOVUPS Z4, (DX)
	VADDPS 64(DX), Z5, Z5
	VMOVUPS Z5, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z6, Z6
	VMOVUPS Z6, (DX)
	VADDPS 64(DX), Z7, Z7
	VMOVUPS Z7, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z8, Z8
	VMOVUPS Z8, (DX)
	VADDPS 64(DX), Z9, Z9
	VMOVUPS Z9, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z10, Z10
	VMOVUPS Z10, (DX)
	VADDPS 64(DX), Z11, Z11
	VMOVUPS Z11, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z12, Z12
	VMOVUPS Z12, (DX)
	VADDPS 64(DX), Z13, Z13
	VMOVUPS Z13, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z14, Z14
	VMOVUPS Z14, (DX)
	VADDPS 64(DX), Z15, Z15
	VMOVUPS Z15, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z16, Z16
	VMOVUPS Z16, (DX)
	VADDPS 64(DX), Z17, Z17
	VMOVUPS Z17, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z18, Z18
	VMOVUPS Z18, (DX)
	VADDPS 64(DX), Z19, Z19
	VMOVUPS Z19, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z20, Z20
	VMOVUPS Z20, (DX)
	VADDPS 64(DX), Z21, Z21
	VMOVUPS Z21, 64(DX)
	ADDQ R8, DX
	VADDPS (DX), Z22, Z22
	VMOVUPS Z22, (DX)
	VADDPS 64(DX), Z23, Z23
	VMOVUPS Z23, 64(DX)
	VZEROUPPER
	RET

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
