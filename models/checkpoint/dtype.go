package checkpoint

import (
	"encoding/binary"
	"fmt"
	"math"
)

// dtype is an element type of a stored tensor, named as safetensors names
// it; torch's storage classes map onto the same names (torchStorages).
type dtype struct {
	name  string
	size  int  // bytes per element
	float bool // read into a Tensor; otherwise into a Buffer
}

var dtypes = map[string]dtype{
	"F64": {"F64", 8, true}, "F32": {"F32", 4, true}, "F16": {"F16", 2, true}, "BF16": {"BF16", 2, true},
	"I64": {"I64", 8, false}, "I32": {"I32", 4, false}, "I16": {"I16", 2, false}, "I8": {"I8", 1, false},
	"U8": {"U8", 1, false}, "BOOL": {"BOOL", 1, false},
}

// torchStorages are torch's typed storage classes by name (torch.save
// names one in every storage's persistent id).
var torchStorages = map[string]string{
	"DoubleStorage": "F64", "FloatStorage": "F32", "HalfStorage": "F16", "BFloat16Storage": "BF16",
	"LongStorage": "I64", "IntStorage": "I32", "ShortStorage": "I16", "CharStorage": "I8",
	"ByteStorage": "U8", "BoolStorage": "BOOL",
}

// float reads element i of b as a float32 (float64 rounded to nearest).
func (d dtype) floatAt(b []byte, i int, order binary.ByteOrder) float32 {
	switch d.name {
	case "F64":
		return float32(math.Float64frombits(order.Uint64(b[8*i:])))
	case "F32":
		return math.Float32frombits(order.Uint32(b[4*i:]))
	case "F16":
		return float16(order.Uint16(b[2*i:]))
	default: // BF16
		return math.Float32frombits(uint32(order.Uint16(b[2*i:])) << 16)
	}
}

// intAt reads element i of b as an int64 (a boolean as 0 or 1).
func (d dtype) intAt(b []byte, i int, order binary.ByteOrder) int64 {
	switch d.name {
	case "I64":
		return int64(order.Uint64(b[8*i:]))
	case "I32":
		return int64(int32(order.Uint32(b[4*i:])))
	case "I16":
		return int64(int16(order.Uint16(b[2*i:])))
	case "I8":
		return int64(int8(b[i]))
	case "BOOL":
		if b[i] != 0 {
			return 1
		}
		return 0
	default: // U8
		return int64(b[i])
	}
}

// numElements is the product of shape, or an error when a dimension is
// negative or the product passes limit.
func numElements(shape []int, limit int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension in shape %v", shape)
		}
		if d > 0 && n > limit/d {
			return 0, fmt.Errorf("shape %v has more than %d elements", shape, limit)
		}
		n *= d
	}
	return n, nil
}

// heldBytes is what gather allocates for n elements of d: float32 for a
// floating-point tensor, int64 for a buffer. The readers add it up to
// check against their limits before gathering anything.
func (d dtype) heldBytes(n int) float64 {
	if d.float {
		return 4 * float64(n)
	}
	return 8 * float64(n)
}

// gather reads the elements of a strided view of b (dtype d, elements from
// offset with the given strides, in row-major order of shape) into a
// Tensor or a Buffer; a nil stride is the contiguous layout. The caller has checked that every index falls
// inside b.
func gather(d dtype, b []byte, order binary.ByteOrder, shape, stride []int, offset, n int) (*Tensor, *Buffer) {
	shape = append([]int{}, shape...)
	var t *Tensor
	var buf *Buffer
	if d.float {
		t = &Tensor{Shape: shape, Data: make([]float32, n)}
	} else {
		buf = &Buffer{Shape: shape, DType: d.name, Data: make([]int64, n)}
	}
	set := func(i, at int) {
		if t != nil {
			t.Data[i] = d.floatAt(b, at, order)
		} else {
			buf.Data[i] = d.intAt(b, at, order)
		}
	}
	if n == 0 {
		return t, buf
	}
	if stride == nil || contiguous(shape, stride) {
		for i := 0; i < n; i++ {
			set(i, offset+i)
		}
		return t, buf
	}
	idx := make([]int, len(shape))
	for i := 0; i < n; i++ {
		at := offset
		for k, v := range idx {
			at += v * stride[k]
		}
		set(i, at)
		for k := len(idx) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return t, buf
}

// contiguous says whether stride is shape's row-major layout (dimensions
// of size 1 may have any stride).
func contiguous(shape, stride []int) bool {
	want := 1
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] != 1 && stride[k] != want {
			return false
		}
		want *= shape[k]
	}
	return true
}

// float16 converts an IEEE half-precision number.
func float16(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		f := float32(mant) / 1024 * float32(math.Pow(2, -14))
		if sign != 0 {
			return -f
		}
		return f
	case exp == 31:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | mant<<13)
}
