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
