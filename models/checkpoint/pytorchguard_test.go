package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// stateDictPickle is torch.save's data.pkl for {"w": tensor} whose one
// float storage "0" declares numel values.
func stateDictPickle(numel uint32) []byte {
	var b bytes.Buffer
	str := func(s string) {
		b.WriteByte('X')
		binary.Write(&b, binary.LittleEndian, uint32(len(s)))
		b.WriteString(s)
	}
	b.WriteString("\x80\x02ccollections\nOrderedDict\n)R")
	str("w")
	b.WriteString("ctorch._utils\n_rebuild_tensor_v2\n(")
	b.WriteString("(")
	str("storage")
	b.WriteString("ctorch\nFloatStorage\n")
	str("0")
	str("cpu")
	b.WriteByte('J')
	binary.Write(&b, binary.LittleEndian, numel)
	b.WriteString("tQ")
	b.WriteString("K\x00K\x02\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtRs.")
	return b.Bytes()
}

func writeTorchZip(t *testing.T, pkl []byte, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pytorch_model.bin")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range []struct {
		name string
		b    []byte
	}{{"archive/data.pkl", pkl}, {"archive/data/0", data}} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(m.b)
	}
	zw.Close()
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPyTorchGuard(t *testing.T) {
	floats := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40} // 1.0, 2.0
	good := writeTorchZip(t, stateDictPickle(2), floats)
	ts, err := ReadPyTorch(good)
	if err != nil {
		t.Fatalf("the hand-written state dict does not load: %v", err)
	}
	if w := ts["w"]; w == nil || !reflect.DeepEqual(w.Data, []float32{1, 2}) {
		t.Fatalf("w = %+v", w)
	}
	pkl := stateDictPickle(2)
	tests := []struct {
		name string
		path string
		want string
	}{
		// 2^28 floats: gopickle would allocate 1 GiB before noticing.
		{"storage larger than its member", writeTorchZip(t, stateDictPickle(1<<28), floats), "declares 268435456 values"},
		{"truncated pickle", writeTorchZip(t, pkl[:len(pkl)-20], floats), "truncated pickle"},
		{"huge string length", writeTorchZip(t, append([]byte("\x80\x02X\xff\xff\xff\x7f"), pkl[2:]...), floats), "truncated pickle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadPyTorch(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %v, want it to name the file and contain %q", err, tc.want)
			}
		})
	}
}
