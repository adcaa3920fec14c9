package prompt

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

var update = flag.Bool("update", false, "write testdata/gpt2-512 again from the decoders' tiny GPT-2")

// gpt2Long is the worked example's decoder (docs/prompting.md,
// specs/hatecheck-prompted.yaml): models/testdata/decoders/gpt2, the tiny
// random GPT2LMHeadModel transformers wrote, with 512 positions instead of
// 64 so that a HateCheck case and its demonstrations fit — its first 64
// position embeddings, the others drawn N(0, 0.02) (GPT-2's initialiser)
// with seed 512.
const (
	gpt2Source = "../models/testdata/decoders/gpt2"
	gpt2Long   = "testdata/gpt2-512"
	longN      = 512
)

func longFixture(t *testing.T) (map[string]any, checkpoint.Tensors) {
	t.Helper()
	ck, err := checkpoint.LoadDir(gpt2Source)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(gpt2Source, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["n_positions"] = longN
	wpe := ck.Weights["transformer.wpe.weight"]
	if wpe == nil {
		t.Fatal("the GPT-2 fixture has no transformer.wpe.weight")
	}
	d := wpe.Shape[1]
	long := &checkpoint.Tensor{Shape: []int{longN, d}, Data: slices.Clone(wpe.Data)}
	rng := rand.New(rand.NewPCG(longN, 0))
	for len(long.Data) < longN*d {
		long.Data = append(long.Data, float32(rng.NormFloat64()*0.02))
	}
	ck.Weights["transformer.wpe.weight"] = long
	return cfg, ck.Weights
}

// The committed long-context fixture is what longFixture derives: go test
// ./prompt -run TestLongContextFixture -update writes it again.
func TestLongContextFixture(t *testing.T) {
	cfg, weights := longFixture(t)
	if *update {
		if err := os.MkdirAll(gpt2Long, 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(cfg, "", "  ")
		if err := os.WriteFile(filepath.Join(gpt2Long, "config.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"tokenizer.json", "vocab.json", "merges.txt", "special_tokens_map.json", "tokenizer_config.json"} {
			b, err := os.ReadFile(filepath.Join(gpt2Source, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(gpt2Long, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := checkpoint.WriteSafetensors(filepath.Join(gpt2Long, "model.safetensors"), weights); err != nil {
			t.Fatal(err)
		}
	}
	ck, err := checkpoint.LoadDir(gpt2Long)
	if err != nil {
		t.Fatal(err)
	}
	if got := ck.Config.MaxPositionEmbeddings; got != longN {
		t.Errorf("%d positions, want %d", got, longN)
	}
	for name, w := range weights {
		g := ck.Weights[name]
		if g == nil || !slices.Equal(g.Shape, w.Shape) || !slices.Equal(g.Data, w.Data) {
			t.Errorf("tensor %s differs from the one derived from %s", name, gpt2Source)
		}
	}
	if len(ck.Weights) != len(weights) {
		t.Errorf("%d tensors, want %d", len(ck.Weights), len(weights))
	}
}
