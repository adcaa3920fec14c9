package checkpoint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// shardIndex is a sharded checkpoint's index file
// (model.safetensors.index.json, pytorch_model.bin.index.json), as
// transformers' save_pretrained writes it when a state dict passes
// max_shard_size: the shard file of every tensor.
type shardIndex struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// ReadSharded reads a sharded checkpoint from its index file: every shard
// the index names (files beside it), each read as ReadWeights reads a
// whole checkpoint. Every tensor the index names must be in its shard, and
// no tensor in two shards; like transformers, tensors a shard holds beyond
// the index are kept.
func ReadSharded(index string) (*State, error) { return readSharded(index, limits{}) }

func readSharded(index string, lim limits) (*State, error) {
	b, err := os.ReadFile(index)
	if err != nil {
		return nil, fmt.Errorf("sharded checkpoint %s: %w", index, err)
	}
	var idx shardIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("sharded checkpoint %s: %w", index, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("sharded checkpoint %s: no weight_map", index)
	}
	byShard := map[string][]string{}
	for name, shard := range idx.WeightMap {
		if shard == "" || shard != filepath.Base(shard) || strings.HasSuffix(shard, ".index.json") {
			return nil, fmt.Errorf("sharded checkpoint %s: tensor %q: shard %q is not a file name beside the index", index, name, shard)
		}
		byShard[shard] = append(byShard[shard], name)
	}
	shards := make([]string, 0, len(byShard))
	for s := range byShard {
		shards = append(shards, s)
	}
	sort.Strings(shards)
	out := &State{Weights: Tensors{}, Buffers: Buffers{}}
	from := map[string]string{}
	dir := filepath.Dir(index)
	for _, shard := range shards {
		st, err := readWeights(filepath.Join(dir, shard), lim)
		if err != nil {
			return nil, fmt.Errorf("sharded checkpoint %s: %w", index, err)
		}
		for _, name := range byShard[shard] {
			if st.Weights[name] == nil && st.Buffers[name] == nil {
				return nil, fmt.Errorf("sharded checkpoint %s: tensor %q is not in its shard %s", index, name, shard)
			}
		}
		add := func(name string) error {
			if prev, dup := from[name]; dup {
				return fmt.Errorf("sharded checkpoint %s: tensor %q is in two shards, %s and %s", index, name, prev, shard)
			}
			from[name] = shard
			return nil
		}
		for name, t := range st.Weights {
			if err := add(name); err != nil {
				return nil, err
			}
			out.Weights[name] = t
		}
		for name, t := range st.Buffers {
			if err := add(name); err != nil {
				return nil, err
			}
			out.Buffers[name] = t
		}
	}
	return out, nil
}
