package asm

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Go's assembler (1.26) knows no AVX512_BF16 instruction, nor does avo: the
// two beluga uses are written as bytes, register forms only. Their bytes
// were checked against GNU as 2.40's (as --64, objdump -d) for the
// hand-written kernels these replace, and the tests check the kernels bit
// for bit against the Go reference.

// VDPBF16PS is VDPBF16PS dst, src1, src2 (Intel order: dst += the bf16
// pairs' products of src1 and src2, per float32 lane), ZMM registers.
func VDPBF16PS(dst, src1, src2 reg.VecPhysical) {
	Comment(fmt.Sprintf("vdpbf16ps %%zmm%d,%%zmm%d,%%zmm%d", src2.PhysicalIndex(), src1.PhysicalIndex(), dst.PhysicalIndex()))
	evex(0x52, int(dst.PhysicalIndex()), int(src1.PhysicalIndex()), int(src2.PhysicalIndex()))
}

// VCVTNEPS2BF16 is VCVTNEPS2BF16 dst, src: src's 16 floats rounded to bf16
// (to nearest, ties to even) into the YMM dst.
func VCVTNEPS2BF16(dst, src reg.VecPhysical) {
	Comment(fmt.Sprintf("vcvtneps2bf16 %%zmm%d,%%ymm%d", src.PhysicalIndex(), dst.PhysicalIndex()))
	evex(0x72, int(dst.PhysicalIndex()), 0, int(src.PhysicalIndex()))
}

// evex emits a 512-bit EVEX instruction of map 0F38, prefix F3, W0, opcode
// op, with register operands reg (ModRM.reg), vvvv (0 when unused: the
// field is then 1111) and rm (ModRM.rm), no mask.
func evex(op byte, reg, vvvv, rm int) {
	inv := func(v, bit int) byte { return byte(^(v >> bit) & 1) }
	p0 := inv(reg, 3)<<7 | inv(rm, 4)<<6 | inv(rm, 3)<<5 | inv(reg, 4)<<4 | 0b10 // map 0F38
	p1 := byte(^vvvv&15)<<3 | 1<<2 | 0b10                                        // W0, prefix F3
	p2 := byte(0b10)<<5 | inv(vvvv, 4)<<3                                        // 512 bits, no mask
	modrm := byte(0b11)<<6 | byte(reg&7)<<3 | byte(rm&7)
	for _, b := range []byte{0x62, p0, p1, p2, op, modrm} {
		Instruction(&ir.Instruction{Opcode: "BYTE", Operands: []Op{U8(b)}})
	}
}
