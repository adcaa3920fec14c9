package models

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/internal/memlimit"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// FuzzConfig feeds config.json's reader (checkpoint.ParseConfig with every
// family's keys and defaults registered) arbitrary bytes; a config it
// accepts goes on through what a loader does before allocating: the
// family's lookup, its own fields (DeBERTa-v2's, ModernBERT's), the size
// check, the encoder's and head's parameter lists and its buffers. None
// may panic, whatever the sizes; none allocates a parameter.
func FuzzConfig(f *testing.F) {
	for _, dir := range []string{"families/bert", "families/distilbert", "families/electra", "families/roberta",
		"families/xlm-roberta", "deberta-v2", "modernbert/tiny", "hfsaved/deberta-v2"} {
		b, err := os.ReadFile(filepath.Join("testdata", dir, "config.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"model_type": "wordvec", "vocab_size": 10, "hidden_size": 4, "embedding_size": 3}`))
	f.Add([]byte(`{"model_type": "bert", "hidden_size": 1000000000, "num_hidden_layers": 1000000, "vocab_size": 30522, "num_attention_heads": 2, "intermediate_size": 8, "max_position_embeddings": 8}`))
	// A fuzzer's worker shares the machine: configs are refused beyond
	// 256 MiB, which exercises the refusal as much as the machine's limit.
	old := memlimit.Limit
	memlimit.Limit = func() (uint64, string) { return 256 << 20, "the fuzzer's limit" }
	f.Cleanup(func() { memlimit.Limit = old })
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := checkpoint.ParseConfig(data)
		if err != nil {
			return
		}
		fam, err := LookupFamily(cfg.ModelType)
		if err != nil {
			return
		}
		if _, err := fam.HeadSpecs(cfg, cfg.Labels()); err != nil {
			return
		}
		if _, err := fam.EncoderNames(cfg); err != nil {
			t.Fatalf("HeadSpecs accepted the config but EncoderNames refused it: %v", err)
		}
	})
}
