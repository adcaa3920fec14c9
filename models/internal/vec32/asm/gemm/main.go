// Command gemm writes kernel_amd64.s: the micro-kernels of vec32's matrix
// product, C[mr×2·lanes] += A·B, for AVX2 (6×16) and AVX-512 (12×32) from
// one source (package asm) — and the bf16 product's 12×32 kernel from the
// same tile with VDPBF16PS for the FMA — beside the FMA peak loop at each
// width (the floor tool's) and the packing of a transposed B.
//
// The tile is two registers of B wide and as many rows of A as the
// registers allow: 2·mr accumulators, two registers for B's row and the
// rest for A's broadcasts (6×16: 12 + 2 + 2 of the 16 YMM; 12×32: 24 + 2 +
// 6 of the 32 ZMM). Each element of C is summed over k in order, one FMA a
// step, from zero, then added to C: the same bits at either width.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/beluga-nlp/beluga/models/internal/vec32/asm"
)

// tile is a micro-kernel's shape at a width: mr rows of A, addressed from
// a base pointer per group of rows (rows base + j·rs, j < group). With
// bf16 it is the bf16 product's kernel: A and B hold pairs of bf16, each
// step a VDPBF16PS (a pair's two products added to a float32 lane) instead
// of an FMA, B a packed panel, C always read.
type tile struct {
	w     asm.Width
	mr    int
	group int
	bf16  bool
}

func main() {
	for _, t := range []tile{{asm.AVX2, 6, 3, false}, {asm.AVX512, 12, 4, false}, {asm.AVX512, 12, 4, true}} {
		kernel(t)
	}
	for _, w := range asm.Widths {
		fmaPeak(w)
	}
	for _, t := range []tile{{asm.AVX2, 6, 3, false}, {asm.AVX512, 12, 4, false}} {
		packATrans(t.mr)
	}
	for _, w := range asm.Widths {
		packBRows(w)
	}
	packBTrans()
	Generate()
}

// fmaPeak is the FMA units' throughput at the width: n iterations of
// fmaChains independent FMAs (more than the FMA latency times the FMA ports
// of any x86 core), the micro-kernels' instruction without their loads:
// the peak the floor tool measures the products against.
func fmaPeak(w asm.Width) {
	TEXT("fmaPeak"+w.Suffix, NOSPLIT, "func(n int)")
	n := RCX
	Load(Param("n"), n)
	for i := 0; i < fmaChains+2; i++ {
		w.Zero(w.V(i))
	}
	Label("loop")
	for i := 0; i < fmaChains; i++ {
		VFMADD231PS(w.V(fmaChains), w.V(fmaChains+1), w.V(i))
	}
	DECQ(n)
	JNZ(LabelRef("loop"))
	VZEROUPPER()
	RET()
}

// fmaChains is the FMAs of an iteration of fmaPeak.
const fmaChains = 12

func kernel(t tile) {
	w := t.w
	nr := 2 * w.Lanes
	k, a, rs, ks, b, bs, c, ldc := RCX, RSI, R9, R12, RDI, RBX, RDX, R8
	if t.bf16 {
		TEXT(fmt.Sprintf("bf16Kernel%dx%d", t.mr, nr), NOSPLIT,
			"func(kp int, a *uint32, rs, ks int, b *uint32, c *float32, ldc int)")
		Doc(fmt.Sprintf("C[%d×%d] += A·B for kp pairs of k: A's pair l of row i at a + i·rs + l·ks", t.mr, nr),
			"bytes, a packed panel of B's pairs; C's rows are ldc floats apart.")
		Load(Param("kp"), k)
	} else {
		TEXT(fmt.Sprintf("sgemmKernel%dx%d", t.mr, nr), NOSPLIT,
			"func(k int, a *float32, rs, ks int, b *float32, bs int, c *float32, ldc int, fresh bool)")
		Doc(fmt.Sprintf("C[%d×%d] += A·B for A's element (i, l) at a + i·rs + l·ks bytes and B's", t.mr, nr),
			"row l at b + l·bs bytes; C's rows are ldc floats apart. With fresh set",
			"C is not read: each element is set to its sum plus +0.")
		Load(Param("k"), k)
	}
	Load(Param("a"), a)
	Load(Param("rs"), rs)
	Load(Param("ks"), ks)
	Load(Param("b"), b)
	if !t.bf16 {
		Load(Param("bs"), bs)
	}
	Load(Param("c"), c)
	Load(Param("ldc"), ldc)
	SHLQ(U8(2), ldc)
	// The rows' addresses: a base pointer per group of rows, the rows of a
	// group at base + j·rs (j·rs by the index scale, or 3·rs in R10).
	bases := []GPPhysical{a}
	offsets := []Mem{{Base: a}, {Base: a, Index: rs, Scale: 1}, {Base: a, Index: rs, Scale: 2}}
	if t.group == 4 {
		LEAQ(Mem{Base: rs, Index: rs, Scale: 2}, R10)
		offsets = append(offsets, Mem{Base: a, Index: R10, Scale: 1})
		for _, r := range []GPPhysical{R11, R13}[:t.mr/4-1] {
			LEAQ(Mem{Base: bases[len(bases)-1], Index: rs, Scale: 4}, r)
			bases = append(bases, r)
		}
	} else {
		LEAQ(Mem{Base: a, Index: rs, Scale: 2}, R11)
		ADDQ(rs, R11)
		bases = append(bases, R11)
	}
	row := func(i int) Mem {
		m := offsets[i%t.group]
		m.Base = bases[i/t.group]
		return m
	}
	acc := func(i, j int) VecPhysical { return w.V(2*i + j) }
	bReg := func(j int) VecPhysical { return w.V(2*t.mr + j) }
	bcasts := w.Registers() - 2*t.mr - 2
	bcast := func(i int) VecPhysical { return w.V(2*t.mr + 2 + i%bcasts) }
	for i := 0; i < 2*t.mr; i++ {
		w.Zero(w.V(i))
	}
	TESTQ(k, k)
	JZ(LabelRef("store"))
	Label("loop")
	VMOVUPS(Mem{Base: b}, bReg(0))
	VMOVUPS(Mem{Base: b, Disp: w.Bytes()}, bReg(1))
	for i := 0; i < t.mr; i++ {
		VBROADCASTSS(row(i), bcast(i))
		for j := 0; j < 2; j++ {
			if t.bf16 {
				asm.VDPBF16PS(acc(i, j), bReg(j), bcast(i))
			} else {
				VFMADD231PS(bReg(j), bcast(i), acc(i, j))
			}
		}
	}
	for _, p := range bases {
		ADDQ(ks, p)
	}
	if t.bf16 {
		ADDQ(U32(nr*4), b) // a packed pair-row of B
	} else {
		ADDQ(bs, b)
	}
	DECQ(k)
	JNZ(LabelRef("loop"))

	Label("store")
	if t.bf16 {
		store(t, acc, func(j int) Op { return Mem{Base: c, Disp: j * w.Bytes()} })
		return
	}
	MOVBQZX(NewParamAddr("fresh", 64), RAX)
	TESTQ(RAX, RAX)
	JNZ(LabelRef("fresh"))
	store(t, acc, func(j int) Op { return Mem{Base: c, Disp: j * w.Bytes()} })
	Label("fresh")
	zero := bReg(0)
	w.Zero(zero)
	store(t, acc, func(int) Op { return zero })
}

// store adds the accumulators to addend(j) (C's row, or zeros) and writes
// them to C, row after row, and returns.
func store(t tile, acc func(i, j int) VecPhysical, addend func(j int) Op) {
	c, ldc := RDX, R8
	for i := 0; i < t.mr; i++ {
		for j := 0; j < 2; j++ {
			VADDPS(addend(j), acc(i, j), acc(i, j))
			VMOVUPS(acc(i, j), Mem{Base: c, Disp: j * t.w.Bytes()})
		}
		if i < t.mr-1 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()
}

// packATrans packs a transposed A for the kernels of mr rows: row l of A's
// storage holds the block's rows side by side, and each micro-panel's row l
// is mr of them. One row of the storage after another (sequential reads),
// each split into the panels (panels·mr floats): ap[p·mr·kb + l·mr + i] =
// a[l·lda + p·mr + i]. A Go loop spends a nanosecond a float on this.
func packATrans(mr int) {
	TEXT(fmt.Sprintf("packATrans%d", mr), NOSPLIT, "func(ap, a *float32, lda, kb, panels int)")
	Doc(fmt.Sprintf("ap[p·%d·kb + l·%d + i] = a[l·lda + p·%d + i] for l < kb, i < %d, p < panels (> 0).", mr, mr, mr, mr))
	ap, a, lda, kb, panel := RDI, RSI, R8, R9, R11
	packArgs("ap", "a", "lda", ap, a, lda, kb)
	IMUL3Q(U32(4*mr), kb, panel) // a micro-panel in bytes
	TESTQ(kb, kb)
	JZ(LabelRef("adone"))
	Label("arow")
	MOVQ(a, RAX)
	MOVQ(ap, RDX)
	Load(Param("panels"), RCX)
	Label("apanel")
	// mr floats: 16 + 8 bytes for 6, 32 + 16 for 12.
	head, tail := asm.AVX2.V(0), X1
	if mr == 6 {
		head = X0
	}
	VMOVUPS(Mem{Base: RAX}, head)
	VMOVUPS(head, Mem{Base: RDX})
	if mr == 6 {
		MOVQ(Mem{Base: RAX, Disp: 16}, RBX)
		MOVQ(RBX, Mem{Base: RDX, Disp: 16})
	} else {
		VMOVUPS(Mem{Base: RAX, Disp: 32}, tail)
		VMOVUPS(tail, Mem{Base: RDX, Disp: 32})
	}
	ADDQ(U32(4*mr), RAX)
	ADDQ(panel, RDX)
	DECQ(RCX)
	JNZ(LabelRef("apanel"))
	ADDQ(lda, a)
	ADDQ(U32(4*mr), ap)
	DECQ(kb)
	JNZ(LabelRef("arow"))
	Label("adone")
	VZEROUPPER()
	RET()
}

// packBRows packs a panel of an untransposed B for the kernels of the
// width: kb rows of its two registers' worth of columns, ldb floats apart,
// into a contiguous panel (a Go copy of a row is a call to memmove).
func packBRows(w asm.Width) {
	TEXT("packBRows"+w.Suffix, NOSPLIT, "func(panel, b *float32, ldb, kb int)")
	Doc(fmt.Sprintf("panel[l·%d + j] = b[l·ldb + j] for l < kb, j < %d.", 2*w.Lanes, 2*w.Lanes))
	panel, b, ldb, kb := RDI, RSI, R8, R9
	packArgs("panel", "b", "ldb", panel, b, ldb, kb)
	TESTQ(kb, kb)
	JZ(LabelRef("bdone"))
	Label("brow")
	VMOVUPS(Mem{Base: b}, w.V(0))
	VMOVUPS(Mem{Base: b, Disp: w.Bytes()}, w.V(1))
	VMOVUPS(w.V(0), Mem{Base: panel})
	VMOVUPS(w.V(1), Mem{Base: panel, Disp: w.Bytes()})
	ADDQ(ldb, b)
	ADDQ(U32(2*w.Bytes()), panel)
	DECQ(kb)
	JNZ(LabelRef("brow"))
	Label("bdone")
	VZEROUPPER()
	RET()
}

// packArgs loads a packer's arguments: the destination and the source,
// the source's row stride (in floats, turned into bytes) and kb.
func packArgs(dst, src, ld string, d, s, l, kb GPPhysical) {
	Load(Param(dst), d)
	Load(Param(src), s)
	Load(Param(ld), l)
	SHLQ(U8(2), l) // bytes
	Load(Param("kb"), kb)
}

// packBTrans packs a transposed B's full panel for the kernels:
// panel[l·nr + j] = b[j·ldb + l] for j < nr and l < kb (multiples of 8), by
// 8×8 blocks transposed in YMM registers (the scalar loop gathers one
// float per load). The transpose is 8 floats wide at either width.
func packBTrans() {
	TEXT("packBTransAVX", NOSPLIT, "func(panel, b *float32, ldb, kb, nr int)")
	panel, b, ldb, kb, row := RDI, RSI, R8, R9, R10
	packArgs("panel", "b", "ldb", panel, b, ldb, kb)
	SHRQ(U8(3), kb) // blocks of l
	Load(Param("nr"), row)
	SHLQ(U8(2), row) // a packed row in bytes
	LEAQ(Mem{Base: ldb, Index: ldb, Scale: 2}, R11)
	LEAQ(Mem{Base: row, Index: row, Scale: 2}, R12)
	// The four rows from base: base + {0, 1, 2, 3}·stride (3·stride in s3).
	four := func(base, stride, s3 GPPhysical) []Mem {
		return []Mem{{Base: base}, {Base: base, Index: stride, Scale: 1}, {Base: base, Index: stride, Scale: 2}, {Base: base, Index: s3, Scale: 1}}
	}
	y := func(i int) VecPhysical { return asm.AVX2.V(i) }
	TESTQ(kb, kb)
	JZ(LabelRef("pdone"))
	Label("lblock")
	MOVQ(b, RAX)     // b at (j0 = 0, l)
	MOVQ(panel, RDX) // panel at (l, j0 = 0)
	Load(Param("nr"), RCX)
	SHRQ(U8(3), RCX) // blocks of j
	Label("jblock")
	LEAQ(Mem{Base: RAX, Index: ldb, Scale: 4}, RBX) // row j0+4
	rows := append(four(RAX, ldb, R11), four(RBX, ldb, R11)...)
	for i, r := range rows {
		VMOVUPS(r, y(i))
	}
	for i := 0; i < 4; i++ {
		VUNPCKLPS(y(2*i+1), y(2*i), y(8+2*i))
		VUNPCKHPS(y(2*i+1), y(2*i), y(9+2*i))
	}
	for i := 0; i < 2; i++ {
		lo, hi := 8+4*i, 10+4*i
		VSHUFPS(U8(0x44), y(hi), y(lo), y(4*i))
		VSHUFPS(U8(0xEE), y(hi), y(lo), y(4*i+1))
		VSHUFPS(U8(0x44), y(hi+1), y(lo+1), y(4*i+2))
		VSHUFPS(U8(0xEE), y(hi+1), y(lo+1), y(4*i+3))
	}
	for i := 0; i < 4; i++ {
		VPERM2F128(U8(0x20), y(4+i), y(i), y(8+i))
	}
	for i := 0; i < 4; i++ {
		VPERM2F128(U8(0x31), y(4+i), y(i), y(12+i))
	}
	LEAQ(Mem{Base: RDX, Index: row, Scale: 4}, RBX) // packed row l+4
	for i, r := range append(four(RDX, row, R12), four(RBX, row, R12)...) {
		VMOVUPS(y(8+i), r)
	}
	LEAQ(Mem{Base: RAX, Index: ldb, Scale: 8}, RAX) // next 8 rows of b
	ADDQ(U32(32), RDX)                              // next 8 columns of the panel
	DECQ(RCX)
	JNZ(LabelRef("jblock"))
	ADDQ(U32(32), b)                                    // l += 8
	LEAQ(Mem{Base: panel, Index: row, Scale: 8}, panel) // 8 packed rows on
	DECQ(kb)
	JNZ(LabelRef("lblock"))
	Label("pdone")
	VZEROUPPER()
	RET()
}
