// Package checkpoint reads and writes model weights in HuggingFace's
// formats: model.safetensors (read and written), pytorch_model.bin (read:
// a zip archive holding a pickled state dict and its storages) and
// config.json.
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
	Dir     string // the directory the files were read from
	Config  *Config
	Weights Tensors
	// Source is the weights file that was read.
	Source string
}

// Load reads a HuggingFace model directory (or a .tar.gz holding one):
// config.json, and model.safetensors if present, else pytorch_model.bin.
// A .tar.gz is extracted into a temporary directory (see targz.Extract).
func Load(path string) (*Checkpoint, error) {
	dir := path
	if strings.HasSuffix(path, ".tar.gz") || strings.HasSuffix(path, ".tgz") {
		d, err := targz.Extract(path)
		if err != nil {
			return nil, err
		}
		dir = d
	}
	dir, err := modelDir(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	cfg, err := ReadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	ck := &Checkpoint{Dir: dir, Config: cfg}
	st := filepath.Join(dir, "model.safetensors")
	if _, err := os.Stat(st); err == nil {
		ck.Source = st
		ck.Weights, err = ReadSafetensors(st)
		return ck, err
	}
	pt := filepath.Join(dir, "pytorch_model.bin")
	if _, err := os.Stat(pt); err == nil {
		ck.Source = pt
		ck.Weights, err = ReadPyTorch(pt)
		return ck, err
	}
	return nil, fmt.Errorf("checkpoint %s: neither model.safetensors nor pytorch_model.bin", dir)
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
