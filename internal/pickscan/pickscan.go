// Package pickscan checks a pickle stream before gopickle reads it. gopickle
// allocates each length a pickle declares before reading that many bytes,
// so a corrupt or hostile length (in a CheckList suite or a
// pytorch_model.bin) would otherwise ask for gigabytes.
package pickscan

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Scan walks a pickle's opcodes and checks that every length it declares
// fits in the data, up to the STOP opcode.
func Scan(data []byte) error {
	pos := 0
	need := func(n uint64, op byte) error {
		if n > uint64(len(data)-pos) {
			return fmt.Errorf("truncated pickle: opcode %q at byte %d needs %d bytes, %d left", op, pos-1, n, len(data)-pos)
		}
		return nil
	}
	for pos < len(data) {
		op := data[pos]
		pos++
		var fixed uint64 // bytes of argument
		var lenBytes int // size of a length prefix followed by that many bytes
		lines := 0       // newline-terminated arguments
		switch op {
		case '.': // STOP
			return nil
		case '(', '0', '1', '2', 'N', 0x88, 0x89, 'R', 'b', 'a', 'e', 'l', ']', 'd', '}', 's', 'u', 't', ')',
			0x85, 0x86, 0x87, 'o', 0x81, 0x92, 0x93, 0x94, 'Q', 0x8f, 0x90, 0x91, 0x97, 0x98:
		case 'K', 'h', 'q', 0x80, 0x82:
			fixed = 1
		case 'M', 0x83:
			fixed = 2
		case 'J', 'j', 'r', 0x84:
			fixed = 4
		case 'G':
			fixed = 8
		case 0x95: // FRAME: its length covers the opcodes that follow
			if err := need(8, op); err != nil {
				return err
			}
			if err := need(8+binary.LittleEndian.Uint64(data[pos:]), op); err != nil {
				return err
			}
			fixed = 8
		case 0x8a, 'U', 'C', 0x8c:
			lenBytes = 1
		case 'T', 'X', 'B', 0x8b:
			lenBytes = 4
		case 0x8d, 0x8e, 0x96:
			lenBytes = 8
		case 'I', 'L', 'F', 'S', 'V', 'P', 'g', 'p':
			lines = 1
		case 'i', 'c':
			lines = 2
		default:
			return fmt.Errorf("malformed pickle: unknown opcode 0x%02x at byte %d", op, pos-1)
		}
		if err := need(fixed, op); err != nil {
			return err
		}
		pos += int(fixed)
		if lenBytes > 0 {
			if err := need(uint64(lenBytes), op); err != nil {
				return err
			}
			var n uint64
			switch lenBytes {
			case 1:
				n = uint64(data[pos])
			case 4:
				n = uint64(binary.LittleEndian.Uint32(data[pos:]))
			case 8:
				n = binary.LittleEndian.Uint64(data[pos:])
			}
			pos += lenBytes
			if err := need(n, op); err != nil {
				return err
			}
			pos += int(n)
		}
		for ; lines > 0; lines-- {
			i := bytes.IndexByte(data[pos:], '\n')
			if i < 0 {
				return fmt.Errorf("truncated pickle: opcode %q at byte %d lacks its newline", op, pos-1)
			}
			pos += i + 1
		}
	}
	return fmt.Errorf("truncated pickle: no STOP opcode in %d bytes", len(data))
}
