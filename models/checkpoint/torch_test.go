package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/memlimit"
	"github.com/beluga-nlp/beluga/internal/pickle"
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
	st, err := ReadPyTorch(good)
	if err != nil {
		t.Fatalf("the hand-written state dict does not load: %v", err)
	}
	if w := st.Weights["w"]; w == nil || !reflect.DeepEqual(w.Data, []float32{1, 2}) {
		t.Fatalf("w = %+v", w)
	}
	pkl := stateDictPickle(2)
	evil := bytes.Replace(pkl, []byte("ctorch._utils\n_rebuild_tensor_v2\n"), []byte("cos\nsystem\n"), 1)
	evilStack := bytes.Replace(pkl, []byte("ctorch._utils\n_rebuild_tensor_v2\n"), []byte("\x8c\x02os\x8c\x06system\x93"), 1)
	// size (2^30,) with stride (0,): 4 GiB copied out of one float.
	bomb := bytes.Replace(pkl, []byte("K\x00K\x02\x85K\x01\x85"), []byte("K\x00J\x00\x00\x00\x40\x85K\x00\x85"), 1)
	nested := append(append([]byte("\x80\x02}X\x01\x00\x00\x00m"), pkl[2:len(pkl)-1]...), 's', '.')
	tests := []struct {
		name string
		path string
		want string
	}{
		// 2^28 floats: a reader that allocates what the pickle declares
		// would ask for 1 GiB before noticing.
		{"storage larger than its member", writeTorchZip(t, stateDictPickle(1<<28), floats), "declares 268435456 values"},
		{"truncated pickle", writeTorchZip(t, pkl[:len(pkl)-20], floats), "truncated pickle"},
		{"huge string length", writeTorchZip(t, append([]byte("\x80\x02X\xff\xff\xff\x7f"), pkl[2:]...), floats), "truncated pickle"},
		{"a global that is not torch's", writeTorchZip(t, evil, floats), "global os.system is not allowed in a torch state dict"},
		{"STACK_GLOBAL of a global that is not torch's", writeTorchZip(t, evilStack, floats), "global os.system is not allowed in a torch state dict"},
		{"a zero-stride view of 2^30 elements", writeTorchZip(t, bomb, floats), "1073741824 elements, more than an expanded buffer has"},
		{"a training checkpoint", writeTorchZip(t, nested, floats), `"m" is a dict, not a tensor (a training checkpoint?`},
		{"not torch's", writeTorchZip(t, []byte("\x80\x02K\x01."), floats), "not a state dict: a int"},
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

// torchExpected is testdata/torch/expected.json: what torch.load reads
// from each file gen.py wrote.
type torchExpected struct {
	Files   map[string][]string `json:"files"`
	Tensors map[string]struct {
		DType  string    `json:"dtype"`
		Shape  []int     `json:"shape"`
		Kind   string    `json:"kind"`
		Values []float64 `json:"values"`
	} `json:"tensors"`
}

// TestPyTorchFormats: every format torch.save has written (zip with a
// plain dict, an OrderedDict with _metadata or Parameters; the pre-1.6
// stream; the tar archive of torch ≤ 0.3) reads to exactly the tensors
// torch.load reads — every element type, strided views, shared storages
// at offsets, scalars and empty tensors — and so do the same tensors in
// safetensors (every dtype it names: F64 … BOOL).
func TestPyTorchFormats(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "torch", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp torchExpected
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	for file, names := range exp.Files {
		t.Run(file, func(t *testing.T) {
			read := ReadPyTorch
			if strings.HasSuffix(file, ".safetensors") {
				read = ReadSafetensors
			}
			st, err := read(filepath.Join("testdata", "torch", file))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(st.Weights) + len(st.Buffers); got != len(names) {
				t.Errorf("%d tensors, want %d", got, len(names))
			}
			for _, name := range names {
				want := exp.Tensors[name]
				var shape []int
				var values []float64
				if want.Kind == "float" {
					w := st.Weights[name]
					if w == nil {
						t.Errorf("%s: not read as a float tensor", name)
						continue
					}
					shape = w.Shape
					for _, v := range w.Data {
						values = append(values, float64(v))
					}
				} else {
					w := st.Buffers[name]
					if w == nil {
						t.Errorf("%s: not read as a buffer", name)
						continue
					}
					shape = w.Shape
					for _, v := range w.Data {
						values = append(values, float64(v))
					}
				}
				if len(shape) != len(want.Shape) || (len(shape) > 0 && !reflect.DeepEqual(shape, want.Shape)) {
					t.Errorf("%s: shape %v, want %v", name, shape, want.Shape)
				}
				if len(values) != len(want.Values) {
					t.Errorf("%s: %d values, want %d", name, len(values), len(want.Values))
					continue
				}
				for i := range values {
					// float64 rounds to float32; the others are exact.
					if math.Abs(values[i]-want.Values[i]) > 1e-7*math.Abs(want.Values[i]) {
						t.Errorf("%s[%d] = %v, want %v", name, i, values[i], want.Values[i])
						break
					}
				}
			}
		})
	}
}

// FuzzPyTorch feeds the reader of pytorch_model.bin (zip, legacy stream,
// tar; the restricted unpickler under all three) arbitrary bytes: it must
// return an error or tensors whose data match their shapes, never panic,
// hang or allocate more than the input can describe.
func FuzzPyTorch(f *testing.F) {
	for _, name := range []string{"zip-dict.bin", "zip-ordered.bin", "legacy.bin", "tar.bin"} {
		b, err := os.ReadFile(filepath.Join("testdata", "torch", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(stateDictPickle(2))
	// A fuzzer's worker shares the machine: what a state dict materialises
	// is refused beyond 256 MiB, which exercises the refusal too.
	old := memlimit.Limit
	memlimit.Limit = func() (uint64, string) { return 256 << 20, "the fuzzer's limit" }
	f.Cleanup(func() { memlimit.Limit = old })
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodePyTorch(bytes.NewReader(data), int64(len(data)), limits{})
		if err != nil {
			return
		}
		for n, x := range st.Weights {
			if NumElements(x.Shape) != len(x.Data) {
				t.Fatalf("%s: %d values for shape %v", n, len(x.Data), x.Shape)
			}
		}
		for n, x := range st.Buffers {
			if NumElements(x.Shape) != len(x.Data) {
				t.Fatalf("%s: %d values for shape %v", n, len(x.Data), x.Shape)
			}
		}
	})
}

// FuzzUnpickle runs the shared restricted unpickler alone on arbitrary
// bytes with the state dict's allow-list and a persistent id that accepts
// any storage, seeded with the data.pkl of every zip fixture.
func FuzzUnpickle(f *testing.F) {
	f.Add(stateDictPickle(2))
	f.Add([]byte("\x80\x02}q\x00(X\x01\x00\x00\x00aq\x01K\x01u."))
	for _, name := range []string{"zip-dict.bin", "zip-ordered.bin"} {
		zr, err := zip.OpenReader(filepath.Join("testdata", "torch", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, m := range zr.File {
			if path.Base(m.Name) == "data.pkl" {
				b, err := readMember(m, int(m.UncompressedSize64))
				if err != nil {
					f.Fatal(err)
				}
				f.Add(b)
			}
		}
		zr.Close()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		u := pickle.New(data, stateDictAllow)
		u.Persistent = func(pid any) (any, error) {
			return &storageRef{dtype: dtypes["F32"], root: "0", numel: 4}, nil
		}
		u.Load()
	})
}
