package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

type stEntry struct {
	DType       string `json:"dtype"`
	Shape       []int  `json:"shape"`
	DataOffsets [2]int `json:"data_offsets"`
}

// maxHeader bounds the JSON header, as the reference implementation does.
const maxHeader = 100 << 20

// ReadSafetensors reads every tensor of a safetensors file as float32.
func ReadSafetensors(path string) (Tensors, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	ts, err := decodeSafetensors(b)
	if err != nil {
		return nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	return ts, nil
}

func decodeSafetensors(b []byte) (Tensors, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("truncated: %d bytes", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("header of %d bytes does not fit in the file (%d bytes)", n, len(b))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &raw); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	data := b[8+n:]
	ts := Tensors{}
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var e stEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		count := 1
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && count > math.MaxInt32/d) {
				return nil, fmt.Errorf("tensor %q: bad shape %v", name, e.Shape)
			}
			count *= d
		}
		begin, end := e.DataOffsets[0], e.DataOffsets[1]
		if begin < 0 || end < begin || end > len(data) {
			return nil, fmt.Errorf("tensor %q: data offsets %v outside the %d data bytes", name, e.DataOffsets, len(data))
		}
		buf := data[begin:end]
		var size int
		switch e.DType {
		case "F32":
			size = 4
		case "F16", "BF16":
			size = 2
		default:
			return nil, fmt.Errorf("tensor %q: unsupported dtype %s", name, e.DType)
		}
		if len(buf) != count*size {
			return nil, fmt.Errorf("tensor %q: %d bytes for shape %v of %s", name, len(buf), e.Shape, e.DType)
		}
		t := &Tensor{Shape: append([]int{}, e.Shape...), Data: make([]float32, count)}
		for i := range t.Data {
			switch e.DType {
			case "F32":
				t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			case "F16":
				t.Data[i] = float16(binary.LittleEndian.Uint16(buf[2*i:]))
			case "BF16":
				t.Data[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(buf[2*i:])) << 16)
			}
		}
		ts[name] = t
	}
	return ts, nil
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

// WriteSafetensors writes ts as F32 safetensors, tensors in name order, atomically.
func WriteSafetensors(path string, ts Tensors) error {
	names := ts.Names()
	header := map[string]stEntry{}
	off := 0
	for _, n := range names {
		t := ts[n]
		if NumElements(t.Shape) != len(t.Data) {
			return fmt.Errorf("safetensors %s: tensor %q has %d values for shape %v", path, n, len(t.Data), t.Shape)
		}
		header[n] = stEntry{DType: "F32", Shape: t.Shape, DataOffsets: [2]int{off, off + 4*len(t.Data)}}
		off += 4 * len(t.Data)
	}
	// encoding/json sorts map keys, so the header is deterministic.
	hj, err := json.Marshal(header)
	if err != nil {
		return err
	}
	// Pad the header with spaces to 8 bytes, as the reference writer does.
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		var lenBuf [8]byte
		binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hj)))
		if _, err := w.Write(lenBuf[:]); err != nil {
			return err
		}
		if _, err := w.Write(hj); err != nil {
			return err
		}
		var buf bytes.Buffer
		for _, n := range names {
			buf.Reset()
			for _, v := range ts[n].Data {
				var b [4]byte
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				buf.Write(b[:])
			}
			if _, err := w.Write(buf.Bytes()); err != nil {
				return err
			}
		}
		return nil
	})
}
