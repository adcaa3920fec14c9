// Package asm holds the avo programs that write vec32's assembly (go
// generate in models/internal/vec32), and what they share: the vector
// width a kernel is generated for. Each kernel is written once, as a Go
// function of its width, and generated for AVX2 (8 floats in a YMM
// register, constants read from 32-byte rows) and AVX-512 (16 floats in a
// ZMM register, constants broadcast from the same rows' first element):
// the two paths run the same instructions, in the same order, on wider
// registers, so they give the same bits.
//
// It is a module of its own, so that avo is a dependency of the
// generators only, never of beluga's build.
package asm

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Width is the vector width a kernel is generated for.
type Width struct {
	// Suffix ends the kernel's name: "AVX2" (AVX2 and FMA), "AVX512".
	Suffix string
	// Lanes is the float32 lanes of a register: 8 or 16.
	Lanes int
}

// The widths of the vector paths.
var (
	AVX2   = Width{"AVX2", 8}
	AVX512 = Width{"AVX512", 16}
)

// Widths are both, in the order the kernels are written out.
var Widths = []Width{AVX2, AVX512}

// Wide says whether the width is AVX-512's.
func (w Width) Wide() bool { return w.Lanes == 16 }

// Bytes is a register's size in bytes: a pointer's step.
func (w Width) Bytes() int { return 4 * w.Lanes }

// Shift is log2(Lanes): n >> Shift is the number of whole registers.
func (w Width) Shift() int {
	if w.Wide() {
		return 4
	}
	return 3
}

// V is vector register i at the width: Yi or Zi.
func (w Width) V(i int) reg.VecPhysical {
	if w.Wide() {
		return zmm[i]
	}
	return ymm[i]
}

var (
	ymm = []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7, reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}
	zmm = []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23, reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}
)

// Table is a constant table: each constant a 32-byte row of eight copies,
// which an AVX2 instruction reads whole and an AVX-512 one broadcasts.
type Table struct {
	mem  Mem
	rows map[string]int
	n    int
}

// NewTable declares the read-only table name with the named constants, in
// order, as float32 bit patterns.
func NewTable(name string, consts []Const) *Table {
	t := &Table{mem: GLOBL(name, RODATA|NOPTR), rows: map[string]int{}}
	for _, c := range consts {
		t.rows[c.Name] = t.n
		for i := 0; i < 8; i++ {
			DATA(32*t.n+4*i, U32(c.Bits))
		}
		t.n++
	}
	return t
}

// Const is one named constant of a table.
type Const struct {
	Name string
	Bits uint32
}

// C is constant name's row.
func (t *Table) C(name string) Mem {
	r, ok := t.rows[name]
	if !ok {
		panic("no constant " + name)
	}
	return t.mem.Offset(32 * r)
}

// The instructions whose one memory operand is a constant: plain at AVX2,
// broadcast (.BCST) at AVX-512.

// MulC is dst = src · c.
func (w Width) MulC(c Mem, src, dst Op) { w.pick(VMULPS, VMULPS_BCST)(c, src, dst) }

// MaxC is dst = max(src, c).
func (w Width) MaxC(c Mem, src, dst Op) { w.pick(VMAXPS, VMAXPS_BCST)(c, src, dst) }

// MinC is dst = min(src, c).
func (w Width) MinC(c Mem, src, dst Op) { w.pick(VMINPS, VMINPS_BCST)(c, src, dst) }

// AddC is dst = src + c.
func (w Width) AddC(c Mem, src, dst Op) { w.pick(VADDPS, VADDPS_BCST)(c, src, dst) }

// FMAddC is x = x·m + c (VFMADD213PS).
func (w Width) FMAddC(c Mem, m, x Op) { w.pick(VFMADD213PS, VFMADD213PS_BCST)(c, m, x) }

// FNMAddC is acc = acc − m·c (VFNMADD231PS).
func (w Width) FNMAddC(c Mem, m, acc Op) { w.pick(VFNMADD231PS, VFNMADD231PS_BCST)(c, m, acc) }

// LoadC sets dst to c in every lane.
func (w Width) LoadC(c Mem, dst Op) {
	if w.Wide() {
		VBROADCASTSS(c, dst)
		return
	}
	VMOVUPS(c, dst)
}

// Registers is how many vector registers the width has: 16 YMM, 32 ZMM.
func (w Width) Registers() int {
	if w.Wide() {
		return 32
	}
	return 16
}

// Zero sets register r to +0 in every lane.
func (w Width) Zero(r Op) {
	if w.Wide() {
		VPXORD(r, r, r) // AVX512F has no VXORPS on ZMM
		return
	}
	VXORPS(r, r, r)
}

// Round rounds src to the nearest integer, ties to even, into dst.
func (w Width) Round(src, dst Op) {
	if w.Wide() {
		VRNDSCALEPS(U8(0), src, dst)
		return
	}
	VROUNDPS(U8(0), src, dst)
}

func (w Width) pick(plain, bcst func(...Op)) func(...Op) {
	if w.Wide() {
		return bcst
	}
	return plain
}

// Loop runs body over n >> Shift registers' worth of elements, the
// pointers each stepping a register; name prefixes its labels.
func (w Width) Loop(name string, n reg.GPPhysical, ptrs []reg.GPPhysical, body func()) {
	SHRQ(U8(w.Shift()), n)
	JZ(LabelRef(name + "done"))
	Label(name + "loop")
	body()
	for _, p := range ptrs {
		ADDQ(U32(w.Bytes()), p)
	}
	DECQ(n)
	JNZ(LabelRef(name + "loop"))
	Label(name + "done")
}
