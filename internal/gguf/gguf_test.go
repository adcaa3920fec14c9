package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// The header, a metadata entry, a tensor's info (dimensions innermost
// first) and its data at an aligned offset, byte for byte.
func TestWriteLayout(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, []KV{{Key: "a", Value: uint32(7)}}, []Tensor{{Name: "w", Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}}})
	if err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	le := binary.LittleEndian
	if string(b[:4]) != "GGUF" || le.Uint32(b[4:]) != 3 || le.Uint64(b[8:]) != 1 || le.Uint64(b[16:]) != 1 {
		t.Fatalf("header % x", b[:24])
	}
	// key "a": length 1, 'a', type 4, value 7
	if le.Uint64(b[24:]) != 1 || b[32] != 'a' || le.Uint32(b[33:]) != typeUint32 || le.Uint32(b[37:]) != 7 {
		t.Fatalf("metadata % x", b[24:41])
	}
	// tensor "w": name, 2 dims {3, 2}, F32, offset 0
	p := 41
	if le.Uint64(b[p:]) != 1 || b[p+8] != 'w' || le.Uint32(b[p+9:]) != 2 || le.Uint64(b[p+13:]) != 3 || le.Uint64(b[p+21:]) != 2 ||
		le.Uint32(b[p+29:]) != 0 || le.Uint64(b[p+33:]) != 0 {
		t.Fatalf("tensor info % x", b[p:p+41])
	}
	data := int(pad(uint64(p + 41)))
	for i := range 6 {
		if got := math.Float32frombits(le.Uint32(b[data+4*i:])); got != float32(i+1) {
			t.Fatalf("element %d at byte %d: %v", i, data+4*i, got)
		}
	}
	if len(b) != data+32 {
		t.Errorf("%d bytes, want the data padded to 32: %d", len(b), data+32)
	}
	err = Write(&buf, nil, []Tensor{{Name: "x", Shape: []int{2}, Data: []float32{1}}})
	if err == nil || !strings.Contains(err.Error(), "shape [2] holds 2 elements, data 1") {
		t.Errorf("a shape its data does not fill: %v", err)
	}
}
