// Package gguf writes GGUF files (version 3), the format llama.cpp loads
// models from: a header, typed key/value metadata and F32 tensors, each
// tensor's data aligned to 32 bytes. It writes what a test needs to hand
// a tiny checkpoint to llama.cpp's llama-server — no quantisation, no
// reading.
//
// Layout (little-endian): "GGUF", version u32, tensor count u64, metadata
// count u64; each key as a string (u64 length, bytes), its type u32 and
// value; each tensor's name, dimension count u32, dimensions u64
// (innermost first: a row-major [rows, cols] matrix is {cols, rows}),
// type u32 (0: F32) and data offset u64; padding to the alignment; the
// tensors' data.
package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
)

// Metadata value types.
const (
	typeUint32  = 4
	typeInt32   = 5
	typeFloat32 = 6
	typeBool    = 7
	typeString  = 8
	typeArray   = 9
)

const alignment = 32

// KV is one metadata entry. Value is uint32, int32, float32, bool, string,
// []string or []int32.
type KV struct {
	Key   string
	Value any
}

// Tensor is an F32 tensor: Shape as the checkpoint has it (row-major,
// outermost first), Data its elements.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// WriteFile writes a GGUF file of kvs and tensors to path.
func WriteFile(path string, kvs []KV, tensors []Tensor) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriter(f)
	if err := Write(w, kvs, tensors); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return w.Flush()
}

// Write writes a GGUF file of kvs and tensors to w.
func Write(w io.Writer, kvs []KV, tensors []Tensor) error {
	e := &enc{w: w}
	e.raw([]byte("GGUF"))
	e.u32(3)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		if err := e.value(kv.Value); err != nil {
			return fmt.Errorf("metadata %s: %w", kv.Key, err)
		}
	}
	var off uint64
	for _, t := range tensors {
		n := 1
		for _, d := range t.Shape {
			n *= d
		}
		if n != len(t.Data) {
			return fmt.Errorf("tensor %s: shape %v holds %d elements, data %d", t.Name, t.Shape, n, len(t.Data))
		}
		e.str(t.Name)
		e.u32(uint32(len(t.Shape)))
		for i := len(t.Shape) - 1; i >= 0; i-- {
			e.u64(uint64(t.Shape[i]))
		}
		e.u32(0) // F32
		e.u64(off)
		off += pad(uint64(4 * n))
	}
	e.raw(make([]byte, pad(e.n)-e.n))
	for _, t := range tensors {
		b := make([]byte, pad(uint64(4*len(t.Data))))
		for i, v := range t.Data {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		e.raw(b)
	}
	return e.err
}

func pad(n uint64) uint64 { return (n + alignment - 1) / alignment * alignment }

type enc struct {
	w   io.Writer
	n   uint64
	err error
}

func (e *enc) raw(b []byte) {
	if e.err != nil {
		return
	}
	k, err := e.w.Write(b)
	e.n += uint64(k)
	e.err = err
}

func (e *enc) u32(v uint32) { e.raw(binary.LittleEndian.AppendUint32(nil, v)) }
func (e *enc) u64(v uint64) { e.raw(binary.LittleEndian.AppendUint64(nil, v)) }
func (e *enc) str(s string) { e.u64(uint64(len(s))); e.raw([]byte(s)) }

func (e *enc) value(v any) error {
	switch x := v.(type) {
	case uint32:
		e.u32(typeUint32)
		e.u32(x)
	case int32:
		e.u32(typeInt32)
		e.u32(uint32(x))
	case float32:
		e.u32(typeFloat32)
		e.u32(math.Float32bits(x))
	case bool:
		e.u32(typeBool)
		b := byte(0)
		if x {
			b = 1
		}
		e.raw([]byte{b})
	case string:
		e.u32(typeString)
		e.str(x)
	case []string:
		e.u32(typeArray)
		e.u32(typeString)
		e.u64(uint64(len(x)))
		for _, s := range x {
			e.str(s)
		}
	case []int32:
		e.u32(typeArray)
		e.u32(typeInt32)
		e.u64(uint64(len(x)))
		for _, i := range x {
			e.u32(uint32(i))
		}
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return nil
}
