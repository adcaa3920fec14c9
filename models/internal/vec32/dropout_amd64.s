#include "textflag.h"

// SplitMix64's constants (models' initStream).
DATA splitmixC<>+0(SB)/8, $0x9e3779b97f4a7c15
DATA splitmixC<>+8(SB)/8, $0xbf58476d1ce4e5b9
DATA splitmixC<>+16(SB)/8, $0x94d049bb133111eb
GLOBL splitmixC<>(SB), RODATA|NOPTR, $24

// func dropoutMaskAVX512(k *float32, n int, state, least uint64, scale float32)
//
// k[i] = scale if SplitMix64's draw at state + (i+1)·γ, shifted right by
// 11, is at least least, else 0; n a multiple of 8. Eight draws at a time,
// in integer arithmetic: the same bits as the Go loop.
TEXT ·dropoutMaskAVX512(SB), NOSPLIT, $0-36
	MOVQ k+0(FP), DI
	MOVQ n+8(FP), CX
	VPBROADCASTQ state+16(FP), Z0
	VPBROADCASTQ least+24(FP), Z4
	VBROADCASTSS scale+32(FP), Y5
	VPBROADCASTQ splitmixC<>+0(SB), Z6
	VPBROADCASTQ splitmixC<>+8(SB), Z7
	VPBROADCASTQ splitmixC<>+16(SB), Z8
	// Z0 = state + (lane+1)·γ; Z9 = 8·γ, the step between blocks.
	MOVQ $0x9e3779b97f4a7c15, AX
	MOVQ state+16(FP), BX
	MOVQ $0, DX
lanes:
	ADDQ AX, BX
	MOVQ BX, X1
	VPBROADCASTQ X1, Z2
	MOVQ $1, R8
	SHLXQ DX, R8, R8
	KMOVB R8, K1
	VMOVDQA64 Z2, K1, Z0
	INCQ DX
	CMPQ DX, $8
	JNE  lanes
	MOVQ $8, R8
	MOVQ R8, X1
	VPBROADCASTQ X1, Z9
	VPMULLQ Z6, Z9, Z9
	SHRQ $3, CX
	JZ   done
loop:
	VPSRLQ  $30, Z0, Z1
	VPXORQ  Z0, Z1, Z1
	VPMULLQ Z7, Z1, Z1
	VPSRLQ  $27, Z1, Z2
	VPXORQ  Z2, Z1, Z1
	VPMULLQ Z8, Z1, Z1
	VPSRLQ  $31, Z1, Z2
	VPXORQ  Z2, Z1, Z1
	VPSRLQ  $11, Z1, Z1
	VPCMPUQ $5, Z4, Z1, K2
	VMOVUPS.Z Y5, K2, Y3
	VMOVUPS Y3, (DI)
	VPADDQ  Z9, Z0, Z0
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop
done:
	VZEROUPPER
	RET

// SplitMix64's multipliers as 32-bit halves, for AVX2's 32×32→64-bit
// products: low halves, then high halves.
DATA splitmixH<>+0(SB)/4, $0x1ce4e5b9
DATA splitmixH<>+4(SB)/4, $0x133111eb
DATA splitmixH<>+8(SB)/4, $0xbf58476d
DATA splitmixH<>+12(SB)/4, $0x94d049bb
GLOBL splitmixH<>(SB), RODATA|NOPTR, $16

// func dropoutMaskAVX2(k *float32, n int, state, least uint64, scale float32)
//
// dropoutMaskAVX512's draws four 64-bit lanes at a time: AVX2 has no 64-bit
// vector multiply, so z·c (mod 2⁶⁴) is z_lo·c_lo + ((z_hi·c_lo + z_lo·c_hi)
// << 32) from VPMULUDQ's 32×32→64-bit products; least ≤ 2⁵³ and the
// shifted draw < 2⁵³, so the signed VPCMPGTQ against least − 1 is the
// unsigned test. n a multiple of 8; the same bits as the Go loop.
TEXT ·dropoutMaskAVX2(SB), NOSPLIT, $0-36
	MOVQ k+0(FP), DI
	MOVQ n+8(FP), CX
	// Y0, Y1: the states of draws 1–4 and 5–8; Y15: 8·γ.
	MOVQ $0x9e3779b97f4a7c15, AX
	MOVQ state+16(FP), BX
	ADDQ AX, BX
	MOVQ BX, X0
	ADDQ AX, BX
	MOVQ BX, X2
	VPUNPCKLQDQ X2, X0, X0
	ADDQ AX, BX
	MOVQ BX, X2
	ADDQ AX, BX
	MOVQ BX, X3
	VPUNPCKLQDQ X3, X2, X2
	VINSERTI128 $1, X2, Y0, Y0
	ADDQ AX, BX
	MOVQ BX, X1
	ADDQ AX, BX
	MOVQ BX, X2
	VPUNPCKLQDQ X2, X1, X1
	ADDQ AX, BX
	MOVQ BX, X2
	ADDQ AX, BX
	MOVQ BX, X3
	VPUNPCKLQDQ X3, X2, X2
	VINSERTI128 $1, X2, Y1, Y1
	SHLQ $3, AX
	MOVQ AX, X15
	VPBROADCASTQ X15, Y15
	VPBROADCASTD splitmixH<>+0(SB), Y11  // c1 low
	VPBROADCASTD splitmixH<>+8(SB), Y12  // c1 high
	VPBROADCASTD splitmixH<>+4(SB), Y13  // c2 low
	VPBROADCASTD splitmixH<>+12(SB), Y14 // c2 high
	MOVQ least+24(FP), AX
	DECQ AX
	MOVQ AX, X10
	VPBROADCASTQ X10, Y10                // least − 1
	VBROADCASTSS scale+32(FP), Y9
	SHRQ $3, CX
	JZ   done2
loop2:
	VPSRLQ  $30, Y0, Y2
	VPXOR   Y0, Y2, Y2
	VPSRLQ  $30, Y1, Y3
	VPXOR   Y1, Y3, Y3
	// × c1
	VPMULUDQ Y11, Y2, Y4
	VPSRLQ   $32, Y2, Y5
	VPMULUDQ Y11, Y5, Y5
	VPMULUDQ Y12, Y2, Y6
	VPADDQ   Y6, Y5, Y5
	VPSLLQ   $32, Y5, Y5
	VPADDQ   Y5, Y4, Y2
	VPMULUDQ Y11, Y3, Y4
	VPSRLQ   $32, Y3, Y5
	VPMULUDQ Y11, Y5, Y5
	VPMULUDQ Y12, Y3, Y6
	VPADDQ   Y6, Y5, Y5
	VPSLLQ   $32, Y5, Y5
	VPADDQ   Y5, Y4, Y3
	VPSRLQ  $27, Y2, Y4
	VPXOR   Y4, Y2, Y2
	VPSRLQ  $27, Y3, Y4
	VPXOR   Y4, Y3, Y3
	// × c2
	VPMULUDQ Y13, Y2, Y4
	VPSRLQ   $32, Y2, Y5
	VPMULUDQ Y13, Y5, Y5
	VPMULUDQ Y14, Y2, Y6
	VPADDQ   Y6, Y5, Y5
	VPSLLQ   $32, Y5, Y5
	VPADDQ   Y5, Y4, Y2
	VPMULUDQ Y13, Y3, Y4
	VPSRLQ   $32, Y3, Y5
	VPMULUDQ Y13, Y5, Y5
	VPMULUDQ Y14, Y3, Y6
	VPADDQ   Y6, Y5, Y5
	VPSLLQ   $32, Y5, Y5
	VPADDQ   Y5, Y4, Y3
	VPSRLQ  $31, Y2, Y4
	VPXOR   Y4, Y2, Y2
	VPSRLQ  $31, Y3, Y4
	VPXOR   Y4, Y3, Y3
	VPSRLQ  $11, Y2, Y2
	VPSRLQ  $11, Y3, Y3
	VPCMPGTQ Y10, Y2, Y2                 // draw > least − 1
	VPCMPGTQ Y10, Y3, Y3
	// Each 64-bit mask to 32 bits: the low dwords of Y2 then of Y3.
	VSHUFPS  $0x88, Y3, Y2, Y4           // per 128-bit lane: Y2 lo dwords, Y3 lo dwords
	VPERMQ   $0xd8, Y4, Y4               // lanes in draw order
	VANDPS   Y9, Y4, Y4
	VMOVUPS  Y4, (DI)
	VPADDQ   Y15, Y0, Y0
	VPADDQ   Y15, Y1, Y1
	ADDQ     $32, DI
	DECQ     CX
	JNZ      loop2
done2:
	VZEROUPPER
	RET
