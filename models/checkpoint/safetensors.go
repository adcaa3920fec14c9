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

// ReadSafetensors reads every tensor of a safetensors file: floating-point
// ones (F64, F32, F16, BF16) as float32 Weights, integer and boolean ones
// (I64, I32, I16, I8, U8, BOOL) as Buffers.
func ReadSafetensors(path string) (*State, error) { return readSafetensors(path, limits{}) }

func readSafetensors(path string, lim limits) (*State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	st, err := decodeSafetensors(b, lim)
	if err != nil {
		return nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	return st, nil
}

func decodeSafetensors(b []byte, lim limits) (*State, error) {
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
	st := &State{Weights: Tensors{}, Buffers: Buffers{}}
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var e stEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		count, err := numElements(e.Shape, maxTensorElements)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: bad shape: %w", name, err)
		}
		begin, end := e.DataOffsets[0], e.DataOffsets[1]
		if begin < 0 || end < begin || end > len(data) {
			return nil, fmt.Errorf("tensor %q: data offsets %v outside the %d data bytes", name, e.DataOffsets, len(data))
		}
		d, ok := dtypes[e.DType]
		if !ok {
			return nil, fmt.Errorf("tensor %q: unsupported dtype %s (beluga reads F64, F32, F16, BF16, I64, I32, I16, I8, U8 and BOOL)", name, e.DType)
		}
		buf := data[begin:end]
		if len(buf) != count*d.size {
			return nil, fmt.Errorf("tensor %q: %d bytes for shape %v of %s", name, len(buf), e.Shape, e.DType)
		}
		t, bt := gather(d, buf, binary.LittleEndian, e.Shape, nil, 0, count)
		if t != nil {
			st.Weights[name] = t
		} else {
			st.Buffers[name] = bt
		}
	}
	return st, nil
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
