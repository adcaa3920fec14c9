// Command elem writes elem_amd64.s: the element-wise kernels (scaling,
// products, dropout-and-residual, the maximum, sums of squares, LayerNorm's
// rows and column sums, AdamW's update) for AVX2 and AVX-512 from one source (package
// asm). Each is the scalar Go loop's operations in its order, a register
// of lanes at a time, each operation rounded apart (no FMA): the bits of
// the scalar loops on either width.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/beluga-nlp/beluga/models/internal/vec32/asm"
)

func main() {
	for _, k := range []func(asm.Width){scale, mulTo, mulAdd, maxOf, sumSquares, normRow, normBackRow, addRows, addRowProducts, adamW} {
		for _, w := range asm.Widths {
			k(w)
		}
	}
	Generate()
}

func m(base GPPhysical, disp int) Mem { return Mem{Base: base, Disp: disp} }

func end() {
	VZEROUPPER()
	RET()
}

func scale(w asm.Width) {
	TEXT("scale"+w.Suffix, NOSPLIT, "func(x *float32, n int, s float32)")
	x, n, v := RDI, RCX, w.V
	Load(Param("x"), x)
	Load(Param("n"), n)
	VBROADCASTSS(NewParamAddr("s", 16), v(1))
	w.Loop("s", n, []GPPhysical{x}, func() {
		VMULPS(m(x, 0), v(1), v(0))
		VMOVUPS(v(0), m(x, 0))
	})
	end()
}

func mulTo(w asm.Width) {
	TEXT("mulTo"+w.Suffix, NOSPLIT, "func(dst, a, b *float32, n int)")
	dst, a, b, n, v := RDI, RSI, RDX, RCX, w.V
	Load(Param("dst"), dst)
	Load(Param("a"), a)
	Load(Param("b"), b)
	Load(Param("n"), n)
	w.Loop("m", n, []GPPhysical{dst, a, b}, func() {
		VMOVUPS(m(a, 0), v(0))
		VMULPS(m(b, 0), v(0), v(0))
		VMOVUPS(v(0), m(dst, 0))
	})
	end()
}

func mulAdd(w asm.Width) {
	TEXT("mulAdd"+w.Suffix, NOSPLIT, "func(dst, a, b, c *float32, n int)")
	dst, a, b, c, n, v := RDI, RSI, RDX, R8, RCX, w.V
	Load(Param("dst"), dst)
	Load(Param("a"), a)
	Load(Param("b"), b)
	Load(Param("c"), c)
	Load(Param("n"), n)
	w.Loop("ma", n, []GPPhysical{dst, a, b, c}, func() {
		VMOVUPS(m(a, 0), v(0))
		VMULPS(m(b, 0), v(0), v(0))
		VADDPS(m(c, 0), v(0), v(0))
		VMOVUPS(v(0), m(dst, 0))
	})
	end()
}

// maxOf is the largest of n (a positive multiple of the lanes) floats and
// whether any is NaN (VMAXPS passes a NaN on only from its second
// operand): the NaN flags gather in a mask register (AVX-512) or a vector
// of compare results (AVX2), the lanes' maxima reduce pairwise.
func maxOf(w asm.Width) {
	TEXT("max"+w.Suffix, NOSPLIT, "func(x *float32, n int) (m float32, nan bool)")
	x, n, v := RSI, RCX, w.V
	Load(Param("x"), x)
	Load(Param("n"), n)
	VMOVUPS(m(x, 0), v(0))
	if w.Wide() {
		VCMPPS(U8(3), v(0), v(0), K1)
	} else {
		VCMPPS(U8(3), v(0), v(0), v(2))
	}
	ADDQ(U32(w.Bytes()), x)
	SUBQ(U32(w.Lanes), n)
	w.Loop("x", n, []GPPhysical{x}, func() {
		VMOVUPS(m(x, 0), v(1))
		VMAXPS(v(1), v(0), v(0))
		if w.Wide() {
			VCMPPS(U8(3), v(1), v(1), K2)
			KORW(K2, K1, K1)
		} else {
			VCMPPS(U8(3), v(1), v(1), v(3))
			VORPS(v(3), v(2), v(2))
		}
	})
	if w.Wide() {
		VEXTRACTF64X4(U8(1), Z0, Y1)
		VMAXPS(Y1, Y0, Y0)
	}
	VEXTRACTF128(U8(1), Y0, X1)
	VMAXPS(X1, X0, X0)
	VPERMILPS(U8(0x4e), X0, X1)
	VMAXPS(X1, X0, X0)
	VPERMILPS(U8(0xb1), X0, X1)
	VMAXPS(X1, X0, X0)
	VMOVSS(X0, NewParamAddr("m", 16))
	if w.Wide() {
		KMOVW(K1, EAX)
		TESTW(AX, AX)
	} else {
		VMOVMSKPS(Y2, EAX)
		TESTL(EAX, EAX)
	}
	SETNE(NewParamAddr("nan", 20))
	end()
}

// sumSquares adds float64(x[i])² into s[i mod 8] for i < n (a multiple of
// 8), in order of i: a float32's square is exact in float64, so only the
// additions round. The eight sums are one ZMM's lanes, or two YMMs'.
func sumSquares(w asm.Width) {
	TEXT("sumSquares"+w.Suffix, NOSPLIT, "func(x *float32, n int, s *[8]float64)")
	x, n, s := RSI, RCX, RDI
	Load(Param("x"), x)
	Load(Param("n"), n)
	Load(Param("s"), s)
	if w.Wide() {
		VMOVUPD(m(s, 0), Z0)
	} else {
		VMOVUPD(m(s, 0), Y0)
		VMOVUPD(m(s, 32), Y1)
	}
	// Eight floats a pass on both widths: the sums' lanes.
	SHRQ(U8(3), n)
	JZ(LabelRef("qdone"))
	Label("qloop")
	if w.Wide() {
		VCVTPS2PD(m(x, 0), Z1)
		VMULPD(Z1, Z1, Z1)
		VADDPD(Z1, Z0, Z0)
	} else {
		VCVTPS2PD(m(x, 0), Y2)
		VCVTPS2PD(m(x, 16), Y3)
		VMULPD(Y2, Y2, Y2)
		VMULPD(Y3, Y3, Y3)
		VADDPD(Y2, Y0, Y0)
		VADDPD(Y3, Y1, Y1)
	}
	ADDQ(U32(32), x)
	DECQ(n)
	JNZ(LabelRef("qloop"))
	Label("qdone")
	if w.Wide() {
		VMOVUPD(Z0, m(s, 0))
	} else {
		VMOVUPD(Y0, m(s, 0))
		VMOVUPD(Y1, m(s, 32))
	}
	end()
}

func normRow(w asm.Width) {
	TEXT("normRow"+w.Suffix, NOSPLIT, "func(y, xhat, x, gamma, beta *float32, n int, mean, inv float32)")
	Doc("xhat[k] = (x[k] − mean)·inv and y[k] = xhat[k]·gamma[k] + beta[k]; y may be x.")
	y, xhat, x, gamma, beta, n, v := RDI, R8, RSI, R9, R10, RCX, w.V
	Load(Param("y"), y)
	Load(Param("xhat"), xhat)
	Load(Param("x"), x)
	Load(Param("gamma"), gamma)
	Load(Param("beta"), beta)
	Load(Param("n"), n)
	VBROADCASTSS(NewParamAddr("mean", 48), v(6))
	VBROADCASTSS(NewParamAddr("inv", 52), v(7))
	w.Loop("n", n, []GPPhysical{x, y, xhat, gamma, beta}, func() {
		VMOVUPS(m(x, 0), v(0))
		VSUBPS(v(6), v(0), v(0))
		VMULPS(v(7), v(0), v(0))
		VMOVUPS(v(0), m(xhat, 0))
		VMULPS(m(gamma, 0), v(0), v(0))
		VADDPS(m(beta, 0), v(0), v(0))
		VMOVUPS(v(0), m(y, 0))
	})
	end()
}

func normBackRow(w asm.Width) {
	TEXT("normBackRow"+w.Suffix, NOSPLIT, "func(dx, dy, xhat, gamma *float32, n int, mg, mgx, inv float32)")
	Doc("dx[k] = inv·((dy[k]·gamma[k] − mg) − xhat[k]·mgx).")
	dx, dy, xhat, gamma, n, v := RDI, RSI, R8, R9, RCX, w.V
	Load(Param("dx"), dx)
	Load(Param("dy"), dy)
	Load(Param("xhat"), xhat)
	Load(Param("gamma"), gamma)
	Load(Param("n"), n)
	VBROADCASTSS(NewParamAddr("mg", 40), v(5))
	VBROADCASTSS(NewParamAddr("mgx", 44), v(6))
	VBROADCASTSS(NewParamAddr("inv", 48), v(7))
	w.Loop("b", n, []GPPhysical{dy, dx, xhat, gamma}, func() {
		VMOVUPS(m(dy, 0), v(0))
		VMULPS(m(gamma, 0), v(0), v(0))
		VSUBPS(v(5), v(0), v(0))
		VMULPS(m(xhat, 0), v(6), v(1))
		VSUBPS(v(1), v(0), v(0))
		VMULPS(v(7), v(0), v(0))
		VMOVUPS(v(0), m(dx, 0))
	})
	end()
}

// columns runs LayerNorm's and the bias gradient's column sums: blocks of
// cols registers (wide), then one register at a time (narrow), each block
// summed down the rows in order. load, step and store handle a block of r
// registers at the current columns; row pointers walk down the rows.
type columns struct {
	name        string
	rows, width GPPhysical // rows left; columns left
	stride      GPPhysical // bytes between rows
	wide        int        // registers in a wide block
	// start loads the block's sums and sets the row pointers; add adds
	// one row; store writes the sums back and steps the column pointers.
	start, add, store func(regs int)
}

func (c columns) emit(w asm.Width) {
	block := func(label string, regs int, next string) {
		CMPQ(c.width, U32(regs*w.Lanes))
		JLT(LabelRef(next))
		c.start(regs)
		MOVQ(c.rows, RDX)
		TESTQ(RDX, RDX)
		JZ(LabelRef(label + "store"))
		Label(label + "loop")
		c.add(regs)
		DECQ(RDX)
		JNZ(LabelRef(label + "loop"))
		Label(label + "store")
		c.store(regs)
		SUBQ(U32(regs*w.Lanes), c.width)
	}
	Label(c.name + "wide")
	block(c.name+"wide", c.wide, c.name+"narrow")
	JMP(LabelRef(c.name + "wide"))
	Label(c.name + "narrow")
	block(c.name+"narrow", 1, c.name+"done")
	JMP(LabelRef(c.name + "narrow"))
	Label(c.name + "done")
}

// addRows: d[j] += src[r·stride + j] for r < rows in order, j < w (a
// multiple of the lanes): four registers side by side, so that four
// chains of additions overlap.
func addRows(w asm.Width) {
	TEXT("addRows"+w.Suffix, NOSPLIT, "func(d, src *float32, rows, stride, w int)")
	d, src, rows, stride, width, v := RDI, RSI, RBX, R8, RCX, w.V
	Load(Param("d"), d)
	Load(Param("src"), src)
	Load(Param("rows"), rows)
	Load(Param("stride"), stride)
	SHLQ(U8(2), stride)
	Load(Param("w"), width)
	columns{name: "", rows: rows, width: width, stride: stride, wide: 4,
		start: func(regs int) {
			for i := 0; i < regs; i++ {
				VMOVUPS(m(d, i*w.Bytes()), v(i))
			}
			MOVQ(src, RAX)
		},
		add: func(regs int) {
			for i := 0; i < regs; i++ {
				VADDPS(m(RAX, i*w.Bytes()), v(i), v(i))
			}
			ADDQ(stride, RAX)
		},
		store: func(regs int) {
			for i := 0; i < regs; i++ {
				VMOVUPS(v(i), m(d, i*w.Bytes()))
			}
			ADDQ(U32(regs*w.Bytes()), d)
			ADDQ(U32(regs*w.Bytes()), src)
		},
	}.emit(w)
	end()
}

// addRowProducts: dg[j] += dy[r·stride+j]·x[r·stride+j] (the product
// rounded, then the sum) and db[j] += dy[r·stride+j] for r < rows in
// order, j < w (a multiple of the lanes): LayerNorm's dγ and dβ, two
// registers of columns a pass.
func addRowProducts(w asm.Width) {
	TEXT("addRowProducts"+w.Suffix, NOSPLIT, "func(dg, db, dy, x *float32, rows, stride, w int)")
	dg, db, dy, x, rows, stride, width, v := RDI, R9, RSI, R10, RBX, R8, RCX, w.V
	Load(Param("dg"), dg)
	Load(Param("db"), db)
	Load(Param("dy"), dy)
	Load(Param("x"), x)
	Load(Param("rows"), rows)
	Load(Param("stride"), stride)
	SHLQ(U8(2), stride)
	Load(Param("w"), width)
	columns{name: "p", rows: rows, width: width, stride: stride, wide: 2,
		start: func(regs int) {
			for i := 0; i < regs; i++ {
				VMOVUPS(m(dg, i*w.Bytes()), v(i))
			}
			for i := 0; i < regs; i++ {
				VMOVUPS(m(db, i*w.Bytes()), v(2+i))
			}
			MOVQ(dy, RAX)
			MOVQ(x, R11)
		},
		add: func(regs int) {
			for i := 0; i < regs; i++ {
				VMOVUPS(m(RAX, i*w.Bytes()), v(4+i))
			}
			for i := 0; i < regs; i++ {
				VMULPS(m(R11, i*w.Bytes()), v(4+i), v(6+i))
			}
			for i := 0; i < regs; i++ {
				VADDPS(v(6+i), v(i), v(i))
			}
			for i := 0; i < regs; i++ {
				VADDPS(v(4+i), v(2+i), v(2+i))
			}
			ADDQ(stride, RAX)
			ADDQ(stride, R11)
		},
		store: func(regs int) {
			for i := 0; i < regs; i++ {
				VMOVUPS(v(i), m(dg, i*w.Bytes()))
			}
			for i := 0; i < regs; i++ {
				VMOVUPS(v(2+i), m(db, i*w.Bytes()))
			}
			for _, p := range []GPPhysical{dg, db, dy, x} {
				ADDQ(U32(regs*w.Bytes()), p)
			}
		},
	}.emit(w)
	end()
}

// adamW is one AdamW update (AdamW in adamw.go), each operation rounded as
// Go rounds the scalar loop: products and sums apart, no FMA; VSQRTPS is
// the float32 rounding of the float64 square root. The coefficients are
// AdamWCoef's eight float32 fields, in order.
func adamW(w asm.Width) {
	TEXT("adamW"+w.Suffix, NOSPLIT, "func(value, grad, m, v *float32, n int, c *[8]float32)")
	value, grad, mom, vel, n, c, v := RDI, RSI, RDX, RBX, RCX, R8, w.V
	Load(Param("value"), value)
	Load(Param("grad"), grad)
	Load(Param("m"), mom)
	Load(Param("v"), vel)
	Load(Param("n"), n)
	Load(Param("c"), c)
	// B1, 1−B1, B2, 1−B2, InvBC2, Eps, Decay, StepSize in v(8)–v(15).
	for i := 0; i < 8; i++ {
		VBROADCASTSS(m(c, 4*i), v(8+i))
	}
	w.Loop("a", n, []GPPhysical{grad, mom, vel, value}, func() {
		VMOVUPS(m(grad, 0), v(0))
		VMULPS(m(mom, 0), v(8), v(1))
		VMULPS(v(0), v(9), v(2))
		VADDPS(v(2), v(1), v(1))
		VMOVUPS(v(1), m(mom, 0))
		VMULPS(m(vel, 0), v(10), v(3))
		VMULPS(v(0), v(11), v(4))
		VMULPS(v(0), v(4), v(4))
		VADDPS(v(4), v(3), v(3))
		VMOVUPS(v(3), m(vel, 0))
		VSQRTPS(v(3), v(5))
		VMULPS(v(12), v(5), v(5))
		VADDPS(v(13), v(5), v(5))
		VMULPS(v(15), v(1), v(6))
		VDIVPS(v(5), v(6), v(6))
		VMULPS(m(value, 0), v(14), v(7))
		VSUBPS(v(6), v(7), v(7))
		VMOVUPS(v(7), m(value, 0))
	})
	end()
}
