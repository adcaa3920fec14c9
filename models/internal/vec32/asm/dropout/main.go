// Command dropout writes dropout_amd64.s: dropout's multipliers from
// SplitMix64's stream (models' initStream), eight draws at a time, for
// AVX-512 and AVX2. The widths differ in how they multiply 64-bit lanes
// (VPMULLQ, or 32×32→64-bit VPMULUDQ products on AVX2) and so in their
// code; both compute the Go loop's integers exactly, the same bits.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// SplitMix64's constants: the increment γ and the two multipliers.
const (
	gamma uint64 = 0x9e3779b97f4a7c15
	c1    uint64 = 0xbf58476d1ce4e5b9
	c2    uint64 = 0x94d049bb133111eb
)

const signature = "func(k *float32, n int, state, least uint64, scale float32)"

func main() {
	avx512()
	avx2()
	Generate()
}

// avx512 draws eight 64-bit lanes of a ZMM a pass, multiplying with VPMULLQ.
func avx512() {
	consts := GLOBL("splitmixC", RODATA|NOPTR)
	for i, c := range []uint64{gamma, c1, c2} {
		DATA(8*i, U64(c))
	}
	TEXT("dropoutMaskAVX512", NOSPLIT, signature)
	Doc("k[i] = scale if SplitMix64's draw at state + (i+1)·γ, shifted right by",
		"11, is at least least, else 0; n a multiple of 8.")
	k, n := RDI, RCX
	Load(Param("k"), k)
	Load(Param("n"), n)
	VPBROADCASTQ(NewParamAddr("state", 16), Z0)
	VPBROADCASTQ(NewParamAddr("least", 24), Z4)
	VBROADCASTSS(NewParamAddr("scale", 32), Y5)
	for i, z := range []VecPhysical{Z6, Z7, Z8} {
		VPBROADCASTQ(consts.Offset(8*i), z)
	}
	Comment("Z0 = state + (lane+1)·γ; Z9 = 8·γ, the step between blocks.")
	MOVQ(U64(gamma), RAX)
	Load(Param("state"), RBX)
	MOVQ(U64(0), RDX)
	Label("lanes")
	ADDQ(RAX, RBX)
	MOVQ(RBX, X1)
	VPBROADCASTQ(X1, Z2)
	MOVQ(U64(1), R8)
	SHLXQ(RDX, R8, R8)
	KMOVB(R8L, K1)
	VMOVDQA64(Z2, K1, Z0)
	INCQ(RDX)
	CMPQ(RDX, U8(8))
	JNE(LabelRef("lanes"))
	MOVQ(U64(8), R8)
	MOVQ(R8, X1)
	VPBROADCASTQ(X1, Z9)
	VPMULLQ(Z6, Z9, Z9)
	SHRQ(U8(3), n)
	JZ(LabelRef("done"))
	Label("loop")
	VPSRLQ(U8(30), Z0, Z1)
	VPXORQ(Z0, Z1, Z1)
	VPMULLQ(Z7, Z1, Z1)
	VPSRLQ(U8(27), Z1, Z2)
	VPXORQ(Z2, Z1, Z1)
	VPMULLQ(Z8, Z1, Z1)
	VPSRLQ(U8(31), Z1, Z2)
	VPXORQ(Z2, Z1, Z1)
	VPSRLQ(U8(11), Z1, Z1)
	VPCMPUQ(U8(5), Z4, Z1, K2)
	VMOVUPS_Z(Y5, K2, Y3)
	VMOVUPS(Y3, Mem{Base: k})
	VPADDQ(Z9, Z0, Z0)
	ADDQ(U32(32), k)
	DECQ(n)
	JNZ(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// avx2 draws four 64-bit lanes of a YMM twice a pass. AVX2 has no 64-bit
// vector multiply, so z·c (mod 2⁶⁴) is z_lo·c_lo + ((z_hi·c_lo + z_lo·c_hi)
// << 32) from VPMULUDQ's products; least ≤ 2⁵³ and the shifted draw < 2⁵³,
// so the signed VPCMPGTQ against least − 1 is the unsigned test.
func avx2() {
	halves := GLOBL("splitmixH", RODATA|NOPTR)
	for i, h := range []uint64{c1 & 0xffffffff, c2 & 0xffffffff, c1 >> 32, c2 >> 32} {
		DATA(4*i, U32(h))
	}
	TEXT("dropoutMaskAVX2", NOSPLIT, signature)
	Doc("dropoutMaskAVX512's draws, four 64-bit lanes a register.")
	k, n := RDI, RCX
	Load(Param("k"), k)
	Load(Param("n"), n)
	Comment("Y0, Y1: the states of draws 1–4 and 5–8; Y15: 8·γ.")
	MOVQ(U64(gamma), RAX)
	Load(Param("state"), RBX)
	// Four states into a YMM: two quadwords per XMM, the high XMM inserted.
	four := func(dst VecPhysical, lo VecPhysical) {
		ADDQ(RAX, RBX)
		MOVQ(RBX, lo)
		ADDQ(RAX, RBX)
		MOVQ(RBX, X2)
		VPUNPCKLQDQ(X2, lo, lo)
		ADDQ(RAX, RBX)
		MOVQ(RBX, X2)
		ADDQ(RAX, RBX)
		MOVQ(RBX, X3)
		VPUNPCKLQDQ(X3, X2, X2)
		VINSERTI128(U8(1), X2, dst, dst)
	}
	four(Y0, X0)
	four(Y1, X1)
	SHLQ(U8(3), RAX)
	MOVQ(RAX, X15)
	VPBROADCASTQ(X15, Y15)
	VPBROADCASTD(halves.Offset(0), Y11)  // c1 low
	VPBROADCASTD(halves.Offset(8), Y12)  // c1 high
	VPBROADCASTD(halves.Offset(4), Y13)  // c2 low
	VPBROADCASTD(halves.Offset(12), Y14) // c2 high
	Load(Param("least"), RAX)
	DECQ(RAX)
	MOVQ(RAX, X10)
	VPBROADCASTQ(X10, Y10) // least − 1
	VBROADCASTSS(NewParamAddr("scale", 32), Y9)
	SHRQ(U8(3), n)
	JZ(LabelRef("done"))
	Label("loop")
	shiftXor := func(s int) {
		VPSRLQ(U8(s), Y2, Y4)
		VPXOR(Y4, Y2, Y2)
		VPSRLQ(U8(s), Y3, Y4)
		VPXOR(Y4, Y3, Y3)
	}
	// mul sets z = z·c (mod 2⁶⁴) for c's halves lo and hi.
	mul := func(z, lo, hi VecPhysical) {
		VPMULUDQ(lo, z, Y4)
		VPSRLQ(U8(32), z, Y5)
		VPMULUDQ(lo, Y5, Y5)
		VPMULUDQ(hi, z, Y6)
		VPADDQ(Y6, Y5, Y5)
		VPSLLQ(U8(32), Y5, Y5)
		VPADDQ(Y5, Y4, z)
	}
	VPSRLQ(U8(30), Y0, Y2)
	VPXOR(Y0, Y2, Y2)
	VPSRLQ(U8(30), Y1, Y3)
	VPXOR(Y1, Y3, Y3)
	Comment("× c1")
	mul(Y2, Y11, Y12)
	mul(Y3, Y11, Y12)
	shiftXor(27)
	Comment("× c2")
	mul(Y2, Y13, Y14)
	mul(Y3, Y13, Y14)
	shiftXor(31)
	VPSRLQ(U8(11), Y2, Y2)
	VPSRLQ(U8(11), Y3, Y3)
	VPCMPGTQ(Y10, Y2, Y2) // draw > least − 1
	VPCMPGTQ(Y10, Y3, Y3)
	Comment("Each 64-bit mask to 32 bits: the low dwords of Y2 then of Y3, in draw order.")
	VSHUFPS(U8(0x88), Y3, Y2, Y4)
	VPERMQ(U8(0xd8), Y4, Y4)
	VANDPS(Y9, Y4, Y4)
	VMOVUPS(Y4, Mem{Base: k})
	VPADDQ(Y15, Y0, Y0)
	VPADDQ(Y15, Y1, Y1)
	ADDQ(U32(32), k)
	DECQ(n)
	JNZ(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}
