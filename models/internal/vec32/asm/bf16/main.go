// Command bf16 writes bf16_amd64.s: the conversions of the bf16 product's
// packing (package asm's VCVTNEPS2BF16, AVX-512 only): the CPU's rounding
// of 16 floats, a row into pairs, and two rows interleaved into pairs, one
// pair of rows or many. Full blocks of 16, then the rest under a mask.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/beluga-nlp/beluga/models/internal/vec32/asm"
)

func main() {
	cvt16()
	cvtPairs()
	interleave()
	interleaveRows()
	Generate()
}

func m(base GPPhysical) Mem { return Mem{Base: base} }

// lowMask sets k to the n (in CX, below 16) low bits.
func lowMask(k Op) {
	MOVQ(U64(1), RAX)
	SHLQ(CL, RAX)
	DECQ(RAX)
	KMOVW(EAX, k)
}

// pack interleaves the bf16 of Z0 (low halves) and Z2 (high halves) into
// Z5's words, as the kernel's pairs.
func pack() {
	asm.VCVTNEPS2BF16(Y1, Z0)
	asm.VCVTNEPS2BF16(Y3, Z2)
	VPMOVZXWD(Y1, Z4)
	VPMOVZXWD(Y3, Z5)
	VPSLLD(U8(16), Z5, Z5)
	VPORD(Z4, Z5, Z5)
}

func cvt16() {
	TEXT("cvtNEPS2BF16x16", NOSPLIT, "func(dst *uint16, src *float32)")
	Doc("dst[0:16] = VCVTNEPS2BF16(src[0:16]): the CPU's own rounding of floats",
		"to bf16, against which the tests check the packing's (toBF16).")
	Load(Param("dst"), RDI)
	Load(Param("src"), RSI)
	VMOVUPS(m(RSI), Z0)
	asm.VCVTNEPS2BF16(Y1, Z0)
	VMOVDQU(Y1, m(RDI))
	VZEROUPPER()
	RET()
}

func cvtPairs() {
	TEXT("bf16CvtPairs", NOSPLIT, "func(dst *uint32, src *float32, n int)")
	Doc("dst[0:n/2] = the n floats at src (n even) rounded to bf16, two to a",
		"word: element 2l in the low half of dst[l], 2l+1 in the high half.")
	dst, src, n := RDI, RSI, RCX
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("n"), n)
	Label("cvtloop")
	CMPQ(n, U8(16))
	JLT(LabelRef("cvttail"))
	VMOVUPS(m(src), Z0)
	asm.VCVTNEPS2BF16(Y1, Z0)
	VMOVDQU(Y1, m(dst))
	ADDQ(U8(64), src)
	ADDQ(U8(32), dst)
	SUBQ(U8(16), n)
	JMP(LabelRef("cvtloop"))
	Label("cvttail")
	TESTQ(n, n)
	JZ(LabelRef("cvtdone"))
	lowMask(K1) // the n%16 floats left
	SHRQ(U8(1), n)
	lowMask(K2) // their pairs
	VMOVUPS_Z(m(src), K1, Z0)
	asm.VCVTNEPS2BF16(Y1, Z0)
	VMOVDQU32(Y1, K2, m(dst))
	Label("cvtdone")
	VZEROUPPER()
	RET()
}

// pairBlocks interleaves n (in left) elements of the rows at lo and hi into
// out: blocks of 16, then the rest under the mask K1 (set by tailMask when
// not nil); name prefixes the labels, end is the label that follows.
func pairBlocks(name string, lo, hi, out, left GPPhysical, tailMask func(), end string) {
	Label(name + "block")
	CMPQ(left, U8(16))
	JLT(LabelRef(name + "tail"))
	VMOVUPS(m(lo), Z0)
	VMOVUPS(m(hi), Z2)
	pack()
	VMOVDQU32(Z5, m(out))
	ADDQ(U8(64), lo)
	ADDQ(U8(64), hi)
	ADDQ(U8(64), out)
	SUBQ(U8(16), left)
	JMP(LabelRef(name + "block"))
	Label(name + "tail")
	TESTQ(left, left)
	JZ(LabelRef(end))
	if tailMask != nil {
		tailMask()
	}
	VMOVUPS_Z(m(lo), K1, Z0)
	VMOVUPS_Z(m(hi), K1, Z2)
	pack()
	VMOVDQU32(Z5, K1, m(out))
	Label(end)
}

func interleave() {
	TEXT("bf16Interleave", NOSPLIT, "func(dst *uint32, lo, hi *float32, n int)")
	Doc("dst[j] = bf16(lo[j]) | bf16(hi[j])<<16 for j < n: two rows of B (or of",
		"Aᵀ), k = 2l and 2l+1, as the kernel's pairs.")
	dst, lo, hi, n := RDI, RSI, RDX, RCX
	Load(Param("dst"), dst)
	Load(Param("lo"), lo)
	Load(Param("hi"), hi)
	Load(Param("n"), n)
	pairBlocks("ilv", lo, hi, dst, n, func() { lowMask(K1) }, "ilvdone")
	VZEROUPPER()
	RET()
}

func interleaveRows() {
	TEXT("bf16InterleaveRows", NOSPLIT, "func(dst *uint32, dstStride int, src *float32, srcStride, n, pairs int)")
	Doc("bf16Interleave for pairs pairs of rows at once: pair l's dst at dst +",
		"l·dstStride words, its rows at src + 2l·srcStride and src +",
		"(2l+1)·srcStride floats, n elements each.")
	dst, dstStride, src, srcStride, n, pairs := RDI, R8, RSI, R9, RDX, RBX
	Load(Param("dst"), dst)
	Load(Param("dstStride"), dstStride)
	SHLQ(U8(2), dstStride)
	Load(Param("src"), src)
	Load(Param("srcStride"), srcStride)
	SHLQ(U8(2), srcStride)
	Load(Param("n"), n)
	Load(Param("pairs"), pairs)
	Comment("K1: the n%16 elements of each row's last, partial block.")
	MOVQ(n, RCX)
	ANDQ(U8(15), RCX)
	lowMask(K1)
	TESTQ(pairs, pairs)
	JZ(LabelRef("rowsdone"))
	Label("rowsloop")
	out, low, high, left := R11, R12, R13, R10
	MOVQ(dst, out)
	MOVQ(src, low)
	LEAQ(Mem{Base: src, Index: srcStride, Scale: 1}, high)
	MOVQ(n, left)
	pairBlocks("rows", low, high, out, left, nil, "rowsnext")
	ADDQ(dstStride, dst)
	LEAQ(Mem{Base: src, Index: srcStride, Scale: 2}, src)
	DECQ(pairs)
	JNZ(LabelRef("rowsloop"))
	Label("rowsdone")
	VZEROUPPER()
	RET()
}
