// Package checkpoint reads and writes model weights in HuggingFace's
// formats: model.safetensors (read and written), pytorch_model.bin (read,
// in every format torch.save has written: torch.go), either of them
// sharded (an index file naming each tensor's shard), and config.json.
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of
// JSON mapping each tensor name to {"dtype", "shape", "data_offsets": [begin,
// end]} (plus an optional "__metadata__"), then the raw little-endian data,
// offsets relative to the end of the header.
package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/beluga-nlp/beluga/internal/targz"
)

// Tensor is a dense row-major float32 tensor.
type Tensor struct {
	Shape []int
	Data  []float32
}

// NumElements is the product of the shape.
func NumElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Tensors maps parameter names to tensors.
type Tensors map[string]*Tensor

// Buffer is an integer or boolean tensor of a checkpoint — a buffer such
// as BERT's position_ids or token_type_ids, never a parameter — read as
// int64 (a boolean as 0 or 1). DType is its stored type, in safetensors'
// names (I64, I32, I16, I8, U8, BOOL).
type Buffer struct {
	Shape []int
	DType string
	Data  []int64
}

// Buffers maps buffer names to buffers.
type Buffers map[string]*Buffer

// State is a state dict as a weights file holds it: floating-point tensors
// (float32, float16, bfloat16, float64) as float32 Weights, integer and
// boolean tensors as Buffers.
type State struct {
	Weights Tensors
	Buffers Buffers
}

// Names returns the tensor names in sorted order.
func (ts Tensors) Names() []string {
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Checkpoint is a model directory's configuration and weights.
type Checkpoint struct {
	// Dir is the directory the files were read from; empty when they came
	// from an archive, whose extraction is gone once Load returns.
	Dir     string
	Config  *Config
	Weights Tensors
	// Buffers are the checkpoint's integer and boolean tensors, which a
	// model loader checks or ignores (and says so).
	Buffers Buffers
	// Source is the weights file that was read (a sharded checkpoint's
	// index file).
	Source string
}

// IsArchive reports whether path names a .tar.gz checkpoint.
func IsArchive(path string) bool {
	return strings.HasSuffix(path, ".tar.gz") || strings.HasSuffix(path, ".tgz")
}

// Open makes the model directory at path available for reading: path
// itself (or its only subdirectory holding config.json), or, for a .tar.gz,
// its extraction into a temporary directory. The caller calls cleanup when
// done reading, which removes any extraction.
func Open(path string) (dir string, cleanup func(), err error) {
	cleanup = func() {}
	dir = path
	if IsArchive(path) {
		tmp, err := targz.Extract(path)
		if err != nil {
			return "", nil, err
		}
		cleanup = func() { os.RemoveAll(tmp) }
		dir = tmp
	}
	if dir, err = modelDir(dir); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return dir, cleanup, nil
}

// Load reads a HuggingFace model directory (or a .tar.gz holding one):
// config.json and its weights (LoadDir). An archive is extracted into a
// temporary directory that is removed before Load returns.
func Load(path string) (*Checkpoint, error) {
	dir, cleanup, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	ck, err := LoadDir(dir)
	if err != nil {
		return nil, err
	}
	if IsArchive(path) {
		ck.Dir = ""
	}
	return ck, nil
}

// WeightFiles are the weights files of a model directory in the order
// transformers' from_pretrained looks for them: the first present is read.
// An index file names the shard of every tensor.
var WeightFiles = []string{"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json"}

// LoadDir reads the model directory dir (as Open returns it): config.json
// and the first of WeightFiles present.
func LoadDir(dir string) (*Checkpoint, error) {
	cfg, err := ReadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	ck := &Checkpoint{Dir: dir, Config: cfg}
	for _, name := range WeightFiles {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		ck.Source = p
		st, err := readWeights(p, limitsFor(cfg))
		if err != nil {
			return nil, err
		}
		ck.Weights, ck.Buffers = st.Weights, st.Buffers
		return ck, nil
	}
	return nil, fmt.Errorf("checkpoint %s: no weights (none of %s)", dir, strings.Join(WeightFiles, ", "))
}

// ReadWeights reads a weights file by its name: *.safetensors,
// *.index.json (a sharded checkpoint) or anything else as torch.save's.
func ReadWeights(path string) (*State, error) { return readWeights(path, limits{}) }

// readWeights is ReadWeights within lim (the checkpoint's config's, when
// known).
func readWeights(path string, lim limits) (*State, error) {
	switch {
	case strings.HasSuffix(path, ".index.json"):
		return readSharded(path, lim)
	case strings.HasSuffix(path, ".safetensors"):
		return readSafetensors(path, lim)
	}
	return readPyTorch(path, lim)
}

// modelDir finds the directory holding config.json: dir itself, or its only
// subdirectory (archives usually wrap the model in one folder).
func modelDir(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		return dir, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var subs []string
	for _, e := range entries {
		if e.IsDir() {
			subs = append(subs, e.Name())
		}
	}
	if len(subs) == 1 {
		if _, err := os.Stat(filepath.Join(dir, subs[0], "config.json")); err == nil {
			return filepath.Join(dir, subs[0]), nil
		}
	}
	return "", errors.New("no config.json")
}
