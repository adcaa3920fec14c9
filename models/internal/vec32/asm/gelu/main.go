// Command gelu writes gelu_amd64.s: GELU, its gradient and softmax's
// exponentials, for AVX2 and AVX-512 from one source (package asm). The
// erf and exp are erf.go's (Erf, Exp), coefficient for coefficient.
package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/beluga-nlp/beluga/models/internal/vec32/asm"
)

// c is a named constant, rounded to float32.
func c(name string, v float64) asm.Const {
	return asm.Const{Name: name, Bits: math.Float32bits(float32(v))}
}

// The constants, in erf.go's order: Erf's clamp and its rational
// approximation p(x²)·x / q(x²), then Exp's range reduction and
// polynomial.
var consts = []asm.Const{
	c("invsqrt2", 0.7071067811865476),
	c("m4", -4), c("p4", 4),
	c("a13", -2.72614225801306e-10), c("a11", 2.77068142495902e-08),
	c("a9", -2.10102402082508e-06), c("a7", -5.69250639462346e-05),
	c("a5", -7.34990630326855e-04), c("a3", -2.95459980854025e-03),
	c("a1", -1.60960333262415e-02),
	c("b8", -1.45660718464996e-05), c("b6", -2.13374055278905e-04),
	c("b4", -1.68282697438203e-03), c("b2", -7.37332916720468e-03),
	c("b0", -1.42647390514189e-02),
	c("half", 0.5),
	c("log2e", 1.44269504088896341), c("c1", 0.693359375), c("c2", -2.12194440e-4),
	c("e5", 1.9875691500e-4), c("e4", 1.3981999507e-3), c("e3", 8.3334519073e-3),
	c("e2", 4.1665795894e-2), c("e1", 1.6666665459e-1), c("e0", 5.0000001201e-1),
	c("one", 1), c("expmin", -87.33654),
	c("invsqrt2pi", 0.3989422804014327), c("mhalf", -0.5),
}

var t *asm.Table

func main() {
	t = asm.NewTable("gelu", consts)
	for _, w := range asm.Widths {
		geluForward(w)
	}
	for _, w := range asm.Widths {
		geluBackward(w)
	}
	for _, w := range asm.Widths {
		expShift(w)
	}
	Generate()
}

// erf sets v(out) = erf(x/√2) from x in v(0), using v(1)–v(4).
func erf(w asm.Width, out int) {
	v := w.V
	w.MulC(t.C("invsqrt2"), v(0), v(1))
	w.MaxC(t.C("m4"), v(1), v(1))
	w.MinC(t.C("p4"), v(1), v(1))
	VMULPS(v(1), v(1), v(2))
	w.LoadC(t.C("a13"), v(3))
	for _, c := range []string{"a11", "a9", "a7", "a5", "a3", "a1"} {
		w.FMAddC(t.C(c), v(2), v(3))
	}
	VMULPS(v(1), v(3), v(3))
	w.LoadC(t.C("b8"), v(4))
	for _, c := range []string{"b6", "b4", "b2", "b0"} {
		w.FMAddC(t.C(c), v(2), v(4))
	}
	VDIVPS(v(4), v(3), v(out))
}

// exp sets v(9) = e^t for t in v(6) (at least expmin), as Exp: n =
// round(t·log2e) in v(7), r = t − n·c1 − n·c2 in v(8), the polynomial in
// v(9), v(10) and v(11), and n added to the result's exponent.
func exp(w asm.Width) {
	v := w.V
	w.MulC(t.C("log2e"), v(6), v(7))
	w.Round(v(7), v(7))
	VMOVAPS(v(6), v(8))
	w.FNMAddC(t.C("c1"), v(7), v(8))
	w.FNMAddC(t.C("c2"), v(7), v(8))
	w.LoadC(t.C("e5"), v(9))
	for _, c := range []string{"e4", "e3", "e2", "e1", "e0"} {
		w.FMAddC(t.C(c), v(8), v(9))
	}
	VMULPS(v(8), v(8), v(10))
	w.AddC(t.C("one"), v(8), v(11))
	VFMADD213PS(v(11), v(10), v(9))
	VCVTPS2DQ(v(7), v(7))
	VPSLLD(U8(23), v(7), v(7))
	VPADDD(v(7), v(9), v(9))
}

func geluForward(w asm.Width) {
	TEXT("geluForward"+w.Suffix, NOSPLIT, "func(y, x *float32, n int)")
	Doc("y = ½x(1 + erf(x/√2)) for n (a multiple of the lanes) floats.")
	y, x, n := RDI, RSI, RCX
	Load(Param("y"), y)
	Load(Param("x"), x)
	Load(Param("n"), n)
	v := w.V
	w.Loop("f", n, []GPPhysical{x, y}, func() {
		VMOVUPS(Mem{Base: x}, v(0))
		erf(w, 3)
		w.MulC(t.C("half"), v(0), v(5))
		VFMADD213PS(v(5), v(5), v(3))
		VMOVUPS(v(3), Mem{Base: y})
	})
	VZEROUPPER()
	RET()
}

func geluBackward(w asm.Width) {
	TEXT("geluBackward"+w.Suffix, NOSPLIT, "func(dx, dy, x *float32, n int)")
	Doc("dx = dy·(Φ(x) + x·φ(x)) for n (a multiple of the lanes) floats, with",
		"Φ(x) = ½(1 + erf(x/√2)) and φ(x) = e^(−x²/2)/√(2π), e^t as Cephes' expf.")
	dx, dy, x, n := RDI, RDX, RSI, RCX
	Load(Param("dx"), dx)
	Load(Param("dy"), dy)
	Load(Param("x"), x)
	Load(Param("n"), n)
	v := w.V
	w.Loop("b", n, []GPPhysical{x, dy, dx}, func() {
		VMOVUPS(Mem{Base: x}, v(0))
		erf(w, 3)
		Comment("Φ(x) = ½ + ½·erf")
		w.LoadC(t.C("half"), v(5))
		VFMADD213PS(v(5), v(5), v(3))
		Comment("t = max(−x²/2, expmin)")
		VMULPS(v(0), v(0), v(6))
		w.MulC(t.C("mhalf"), v(6), v(6))
		w.MaxC(t.C("expmin"), v(6), v(6))
		exp(w)
		Comment("x·φ(x); dx = dy·(Φ + x·φ)")
		w.MulC(t.C("invsqrt2pi"), v(9), v(9))
		VMULPS(v(0), v(9), v(9))
		VADDPS(v(9), v(3), v(3))
		VMULPS(Mem{Base: dy}, v(3), v(3))
		VMOVUPS(v(3), Mem{Base: dx})
	})
	VZEROUPPER()
	RET()
}

func expShift(w asm.Width) {
	TEXT("expShift"+w.Suffix, NOSPLIT, "func(x *float32, n int, shift float32, sums *[8]float32)")
	Doc("x[i] = e^(x[i]−shift) for n (a multiple of the lanes) floats with x[i] ≤ shift",
		"(exactly 0 below e^−87.34, as Exp), and sums[j] += Σ of lane j of each 8",
		"in turn (at AVX-512 the low half of a register, then the high half).")
	x, n, sums := RSI, RCX, RDI
	v := w.V
	Load(Param("x"), x)
	Load(Param("n"), n)
	VBROADCASTSS(NewParamAddr("shift", 16), v(12))
	Load(Param("sums"), sums)
	VMOVUPS(Mem{Base: sums}, Y13)
	w.Loop("e", n, []GPPhysical{x}, func() {
		VMOVUPS(Mem{Base: x}, v(6))
		VSUBPS(v(12), v(6), v(6))
		if w.Wide() {
			VCMPPS_BCST(U8(0x1d), t.C("expmin"), v(6), K1)
		} else {
			VCMPPS(U8(0x1d), t.C("expmin"), v(6), v(14))
		}
		w.MaxC(t.C("expmin"), v(6), v(6))
		exp(w)
		if w.Wide() {
			VMOVAPS_Z(v(9), K1, v(9))
		} else {
			VANDPS(v(14), v(9), v(9))
		}
		VMOVUPS(v(9), Mem{Base: x})
		VADDPS(Y9, Y13, Y13)
		if w.Wide() {
			VEXTRACTF64X4(U8(1), v(9), Y15)
			VADDPS(Y15, Y13, Y13)
		}
	})
	VMOVUPS(Y13, Mem{Base: sums})
	VZEROUPPER()
	RET()
}
