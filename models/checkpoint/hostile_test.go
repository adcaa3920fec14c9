package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/hostiletest"
)

// Hostile checkpoints are made by the generators below at test time (a few
// megabytes each, never stored): each describes gigabytes that a reader
// allocating what it is told would try to allocate. TestHostileCheckpoints
// reads them in a child process under ulimit -v (hostiletest): they must
// be refused with a clear error, not crash it.

// pickleWriter writes the opcodes of a state-dict pickle.
type pickleWriter struct{ bytes.Buffer }

func (p *pickleWriter) str(s string) {
	p.WriteByte('X')
	binary.Write(p, binary.LittleEndian, uint32(len(s)))
	p.WriteString(s)
}

func (p *pickleWriter) int32(v uint32) {
	p.WriteByte('J')
	binary.Write(p, binary.LittleEndian, v)
}

func (p *pickleWriter) put(i uint32) { p.WriteByte('r'); binary.Write(p, binary.LittleEndian, i) }
func (p *pickleWriter) get(i uint32) { p.WriteByte('j'); binary.Write(p, binary.LittleEndian, i) }

// storage pushes the persistent id of float storage "0" of numel values,
// memoised at memo key 1.
func (p *pickleWriter) storage(numel uint32) {
	p.WriteString("(")
	p.str("storage")
	p.WriteString("ctorch\nFloatStorage\n")
	p.str("0")
	p.str("cpu")
	p.int32(numel)
	p.WriteString("tQ")
	p.put(1)
}

// tensor pushes _rebuild_tensor_v2(storage, 0, (numel,), (1,), False,
// OrderedDict()), the storage being whatever pushStorage pushes.
func (p *pickleWriter) tensor(numel uint32, pushStorage func()) {
	p.WriteString("ctorch._utils\n_rebuild_tensor_v2\n(")
	pushStorage()
	p.WriteString("K\x00")
	p.int32(numel)
	p.WriteString("\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtR")
}

// manyKeys is a state dict of keys names each naming a tensor of one
// numel-float storage: the same tensor object through the memo (shared)
// or a tensor object of its own viewing the one storage.
func manyKeys(keys int, numel uint32, shared bool) []byte {
	var p pickleWriter
	p.WriteString("\x80\x02}(")
	for i := 0; i < keys; i++ {
		p.str(fmt.Sprintf("layer.%d.weight", i))
		switch {
		case i == 0:
			p.tensor(numel, func() { p.storage(numel) })
			p.put(2)
		case shared:
			p.get(2)
		default:
			p.tensor(numel, func() { p.get(1) })
		}
	}
	p.WriteString("u.")
	return p.Bytes()
}

// zipMember is one member of a torch zip: stored, or raw deflate bytes
// declaring size (and crc) as given.
type zipMember struct {
	name     string
	data     []byte
	deflated bool
	size     uint64
}

func writeZip(t *testing.T, dir string, members ...zipMember) string {
	t.Helper()
	p := filepath.Join(dir, "pytorch_model.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, m := range members {
		var w interface{ Write([]byte) (int, error) }
		if m.deflated {
			w, err = zw.CreateRaw(&zip.FileHeader{Name: m.name, Method: zip.Deflate,
				CompressedSize64: uint64(len(m.data)), UncompressedSize64: m.size})
		} else {
			w, err = zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Store})
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// tinyConfig is a config.json of a model of some 4,000 parameters.
const tinyConfig = `{"model_type": "bert", "vocab_size": 100, "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32, "max_position_embeddings": 16, "type_vocab_size": 2}`

func TestHostileCheckpoints(t *testing.T) {
	hostiletest.Run(t, func(t *testing.T) {
		const numel = 4 << 20 // 16 MiB of float32
		zeros16 := hostiletest.DeflatedZeros(nil, 16)
		storage := zipMember{name: "archive/data/0", data: zeros16, deflated: true, size: 16 << 20}
		// 4 GiB of zeros in 4.1 MB: the member's declared size passes the
		// deflate-ratio check of a 4.2 MB file.
		bomb := zipMember{name: "archive/data/0", data: hostiletest.DeflatedZeros(nil, 4096), deflated: true, size: 4 << 30}
		padding := zipMember{name: "archive/extra/padding", data: make([]byte, 200<<10)}
		var p pickleWriter
		p.WriteString("\x80\x02}(")
		p.str("w")
		p.tensor(1<<30, func() { p.storage(1 << 30) })
		p.WriteString("u.")
		bombPickle := p.Bytes()

		tests := []struct {
			name    string
			members []zipMember
			config  bool
			want    string
		}{
			{"5,000 keys memo-referencing one 16 MB tensor", []zipMember{{name: "archive/data.pkl", data: manyKeys(5000, numel, true)}, storage}, false,
				`"layer.0.weight" and "layer.1.weight" are one tensor object`},
			{"5,000 tensors viewing one 16 MB storage", []zipMember{{name: "archive/data.pkl", data: manyKeys(5000, numel, false)}, storage}, false,
				"reading the state dict's 5000 tensors (2.097e+10 values) would take about 78.1 GiB, more than the"},
			{"a storage member deflating to 4 GiB, no config", []zipMember{{name: "archive/data.pkl", data: bombPickle}, bomb, padding}, false,
				"reading the state dict's 1 tensors (1.074e+09 values) would take about 8.0 GiB, more than the"},
			{"a storage member deflating to 4 GiB, a tiny config", []zipMember{{name: "archive/data.pkl", data: bombPickle}, bomb, padding}, true,
				"would take 8.0 GiB, more than the 256.1 MiB a bert config of about 4.11e+03 parameters can need"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				p := writeZip(t, dir, tc.members...)
				var err error
				if tc.config {
					if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(tinyConfig), 0o644); err != nil {
						t.Fatal(err)
					}
					_, err = LoadDir(dir)
				} else {
					_, err = ReadPyTorch(p)
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
					t.Fatalf("error %v, want it to name the file and say %q", err, tc.want)
				}
				t.Logf("refused: %v", err)
			})
		}
	})
}

// safetensorsFile is a safetensors file of the given header (JSON) and
// data bytes.
func safetensorsFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

// TestHostileSafetensors: overlapping offsets (5,000 names viewing one
// 16 MB region), a name given twice and trailing bytes are refused, as
// the reference implementation refuses them, under ulimit -v.
func TestHostileSafetensors(t *testing.T) {
	hostiletest.Run(t, func(t *testing.T) {
		const region = 16 << 20
		var views strings.Builder
		views.WriteString("{")
		for i := 0; i < 5000; i++ {
			if i > 0 {
				views.WriteString(",")
			}
			fmt.Fprintf(&views, `"layer.%d.weight":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}`, i, region/4, region)
		}
		views.WriteString("}")
		two := make([]byte, 16)
		tests := []struct {
			name string
			file []byte
			want string
		}{
			{"5,000 views of one 16 MB region", safetensorsFile(views.String(), make([]byte, region)),
				"data offsets [0 16777216]: the tensors' offsets must tile the data without gaps or overlaps (the previous tensor ends at 16777216)"},
			{"a name given twice", safetensorsFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, two),
				`header: "w" appears twice`},
			{"trailing bytes", safetensorsFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, two),
				"8 bytes after the last tensor's data (the tensors end at 8 of 16 data bytes)"},
			{"a gap", safetensorsFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, two),
				`tensor "w": data offsets [8 16]: the tensors' offsets must tile the data`},
			{"__metadata__ not strings", safetensorsFile(`{"__metadata__":{"a":1},"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, two),
				"__metadata__ is not a map of strings"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "model.safetensors")
				if err := os.WriteFile(p, tc.file, 0o644); err != nil {
					t.Fatal(err)
				}
				_, err := ReadSafetensors(p)
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
					t.Fatalf("error %v, want it to name the file and say %q", err, tc.want)
				}
				t.Logf("refused: %v", err)
			})
		}
	})
}
