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
	// Dir is the directory the files were read from; empty when they came
	// from an archive, whose extraction is gone once Load returns.
	Dir     string
	Config  *Config
	Weights Tensors
	// Source is the weights file that was read.
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
// config.json, and model.safetensors if present, else pytorch_model.bin.
// An archive is extracted into a temporary directory that is removed
// before Load returns.
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

// LoadDir reads the model directory dir (as Open returns it).
func LoadDir(dir string) (*Checkpoint, error) {
	cfg, err := ReadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	ck := &Checkpoint{Dir: dir, Config: cfg}
	for _, name := range []string{"model.safetensors", "pytorch_model.bin"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		ck.Source = p
		if name == "model.safetensors" {
			ck.Weights, err = ReadSafetensors(p)
		} else {
			ck.Weights, err = ReadPyTorch(p)
		}
		if err != nil {
			return nil, err
		}
		return ck, nil
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
