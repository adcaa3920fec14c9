package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"unicode/utf8"

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

// decodeSafetensors reads a safetensors file's bytes as the reference
// implementation validates them (safetensors/src/tensor.rs, Metadata::
// validate and read_metadata): the tensors, sorted by their data offsets,
// must tile the data exactly — the first starting at 0, each where the
// previous ends, the last ending at the end of the file — each span holding
// exactly its shape's bytes. So no two tensors overlap (5,000 names over one
// region would materialise it 5,000 times), no bytes trail, and a name
// given twice is refused rather than the last one winning silently. What
// the tensors take once read is checked against lim before any is.
func decodeSafetensors(b []byte, lim limits) (*State, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("truncated: %d bytes", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("header of %d bytes does not fit in the file (%d bytes)", n, len(b))
	}
	entries, err := safetensorsHeader(b[8 : 8+n])
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	data := b[8+n:]
	sort.Slice(entries, func(i, j int) bool {
		a, c := entries[i].DataOffsets, entries[j].DataOffsets
		return a[0] < c[0] || a[0] == c[0] && a[1] < c[1]
	})
	type tensor struct {
		name  string
		e     stEntry
		d     dtype
		count int
	}
	tensors := make([]tensor, 0, len(entries))
	end, need := 0, 0.0
	for _, e := range entries {
		begin, stop := e.DataOffsets[0], e.DataOffsets[1]
		if begin != end || stop < begin {
			return nil, fmt.Errorf("tensor %q: data offsets %v: the tensors' offsets must tile the data without gaps or overlaps (the previous tensor ends at %d)", e.name, e.DataOffsets, end)
		}
		if stop > len(data) {
			return nil, fmt.Errorf("tensor %q: data offsets %v outside the %d data bytes", e.name, e.DataOffsets, len(data))
		}
		end = stop
		count, err := numElements(e.Shape, maxTensorElements)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: bad shape: %w", e.name, err)
		}
		d, ok := dtypes[e.DType]
		if !ok {
			return nil, fmt.Errorf("tensor %q: unsupported dtype %s (beluga reads F64, F32, F16, BF16, I64, I32, I16, I8, U8 and BOOL)", e.name, e.DType)
		}
		if stop-begin != count*d.size {
			return nil, fmt.Errorf("tensor %q: %d bytes for shape %v of %s", e.name, stop-begin, e.Shape, e.DType)
		}
		need += d.heldBytes(count)
		tensors = append(tensors, tensor{e.name, e.stEntry, d, count})
	}
	if end != len(data) {
		return nil, fmt.Errorf("%d bytes after the last tensor's data (the tensors end at %d of %d data bytes): the offsets must cover the data exactly", len(data)-end, end, len(data))
	}
	if err := lim.check(fmt.Sprintf("reading %d tensors", len(tensors)), need); err != nil {
		return nil, err
	}
	st := &State{Weights: Tensors{}, Buffers: Buffers{}}
	for _, t := range tensors {
		w, bt := gather(t.d, data[t.e.DataOffsets[0]:t.e.DataOffsets[1]], binary.LittleEndian, t.e.Shape, nil, 0, t.count)
		if w != nil {
			st.Weights[t.name] = w
		} else {
			st.Buffers[t.name] = bt
		}
	}
	return st, nil
}

// namedEntry is a header entry with its tensor's name.
type namedEntry struct {
	name string
	stEntry
}

// safetensorsHeader reads the header's JSON object in order, refusing a
// key given twice (encoding/json would keep the last silently) and a
// __metadata__ that is not a map of strings, as the reference's types are.
func safetensorsHeader(h []byte) ([]namedEntry, error) {
	if !utf8.Valid(h) {
		return nil, errors.New("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(h))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	seen := map[string]bool{}
	var out []namedEntry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string) // an object's keys are strings
		if seen[name] {
			return nil, fmt.Errorf("%q appears twice", name)
		}
		seen[name] = true
		if name == "__metadata__" {
			var m map[string]string
			if err := dec.Decode(&m); err != nil {
				return nil, fmt.Errorf("__metadata__ is not a map of strings: %w", err)
			}
			continue
		}
		var e stEntry
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		out = append(out, namedEntry{name, e})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	// The reference writer pads the header with spaces to 8 bytes.
	if len(bytes.TrimSpace(h[dec.InputOffset():])) > 0 {
		return nil, errors.New("bytes after the header's JSON object")
	}
	return out, nil
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
