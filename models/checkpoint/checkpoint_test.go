package checkpoint

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/internal/memlimit"
	"github.com/beluga-nlp/beluga/internal/shareddata"
)

func TestFixtureFormatsAgree(t *testing.T) {
	dir := fixture.Dir(t)
	sst, err := ReadSafetensors(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	pst, err := ReadPyTorch(filepath.Join(dir, "pytorch_model.bin"))
	if err != nil {
		t.Fatal(err)
	}
	st, pt := sst.Weights, pst.Weights
	if len(st) == 0 {
		t.Fatal("no tensors")
	}
	for name, a := range st {
		b, ok := pt[name]
		if !ok {
			// tied or non-persistent buffers may be saved in one format only
			t.Logf("%s only in model.safetensors", name)
			continue
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs between the formats", name)
		}
	}
	// Sizes come from the fixture's config, so that any checkpoint given as
	// BELUGA_BERT_FIXTURE passes.
	cfg, err := ReadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.HiddenSize
	if w := st["bert.encoder.layer.0.attention.self.query.weight"]; w == nil || !reflect.DeepEqual(w.Shape, []int{h, h}) {
		t.Errorf("query weight: %+v, want [%d %d]", w, h, h)
	}
	if w := st["classifier.weight"]; w == nil || !reflect.DeepEqual(w.Shape, []int{cfg.Labels(), h}) {
		t.Errorf("classifier weight: %+v, want [%d %d]", w, cfg.Labels(), h)
	}
	ck, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ck.Config, cfg) || !strings.HasSuffix(ck.Source, "model.safetensors") {
		t.Errorf("config %+v from %s, want %+v", ck.Config, ck.Source, cfg)
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	ts := Tensors{
		"a":   {Shape: []int{2, 3}, Data: []float32{1, -2, 3.5, 0, 1e-30, -7}},
		"b.c": {Shape: []int{1}, Data: []float32{42}},
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := WriteSafetensors(path, ts); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ts, back.Weights) || len(back.Buffers) != 0 {
		t.Errorf("round trip: %+v, want %+v", back, ts)
	}
	first, _ := os.ReadFile(path)
	WriteSafetensors(path, ts)
	second, _ := os.ReadFile(path)
	if string(first) != string(second) {
		t.Error("two writes of the same tensors differ")
	}
}

func TestSafetensorsErrors(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good.safetensors")
	WriteSafetensors(good, Tensors{"w": {Shape: []int{4}, Data: []float32{1, 2, 3, 4}}})
	b, _ := os.ReadFile(good)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"huge header", append([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, b[8:]...), "does not fit"},
		{"truncated data", b[:len(b)-3], `tensor "w"`},
		{"bad json", append(append([]byte{}, b[:8]...), []byte("{not json   ")...), "header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.safetensors")
			os.WriteFile(path, tc.data, 0o644)
			_, err := ReadSafetensors(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want it to name the file and contain %q", err, tc.want)
			}
		})
	}
}

func FuzzDecodeSafetensors(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.safetensors")
	WriteSafetensors(path, Tensors{"w": {Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}}})
	b, _ := os.ReadFile(path)
	f.Add(b)
	// torch's safetensors writer's file of every dtype, and the refused
	// shapes: a name twice, trailing bytes, overlapping offsets.
	if b, err := os.ReadFile(filepath.Join("testdata", "torch", "all-dtypes.safetensors")); err == nil {
		f.Add(b)
	}
	f.Add(safetensorsFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, make([]byte, 16)))
	f.Add(safetensorsFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 16)))
	f.Add(safetensorsFile(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, make([]byte, 2)))
	old := memlimit.Limit
	memlimit.Limit = func() (uint64, string) { return 256 << 20, "the fuzzer's limit" }
	f.Cleanup(func() { memlimit.Limit = old })
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeSafetensors(data, limits{})
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

func TestMLMCheckpointReads(t *testing.T) {
	path := shareddata.Path(t, "fixtures/bert-tiny-mlm.tar.gz")
	ck, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	hasMLM, hasPooler := false, false
	for n := range ck.Weights {
		hasMLM = hasMLM || strings.HasPrefix(n, "cls.predictions.")
		hasPooler = hasPooler || strings.HasPrefix(n, "bert.pooler.")
	}
	if !hasMLM || hasPooler || ck.Config.HiddenSize != 128 {
		t.Errorf("MLM checkpoint: mlm head %v, pooler %v, hidden %d", hasMLM, hasPooler, ck.Config.HiddenSize)
	}
}

func TestPyTorchTruncated(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fixture.Dir(t), "pytorch_model.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 7, 100, len(b) / 2, len(b) - 1} {
		path := filepath.Join(t.TempDir(), "pytorch_model.bin")
		os.WriteFile(path, b[:n], 0o644)
		if _, err := ReadPyTorch(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("truncated to %d bytes: error %v, want one naming the file", n, err)
		}
	}
}

func TestArchiveLeavesNoTemporaryDirectory(t *testing.T) {
	path := shareddata.Path(t, "fixtures/bert-fixture-a.tar.gz")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ck, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Dir != "" || len(ck.Weights) == 0 {
		t.Errorf("Dir %q, %d tensors; want no directory and the weights", ck.Dir, len(ck.Weights))
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("Load left %s in the temporary directory", left[0].Name())
	}
}
