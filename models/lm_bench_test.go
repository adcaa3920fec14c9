package models_test

import (
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// The prompted-scoring workload of BenchmarkScore and
// benchmarks/torch_score.py (the same shapes): a prompt prefix of 200
// tokens (instructions and demonstrations), 64 inputs of 10 to 30 tokens,
// two one-token verbalizers each, on a GPT-2 (TinyGPT2Config) and a Llama
// (TinyLlamaConfig: 4 query heads sharing 2 key/value heads) of
// BERT-tiny's scale with GPT-2's vocabulary of 50257.
const (
	benchPrefix  = 200
	benchItems   = 64
	benchOptions = 2
	benchVocab   = 50257
)

func benchContextLen(i int) int { return 10 + (i*7)%21 }

// benchPrompt builds the workload's token ids (deterministic; what they
// are does not change the work).
func benchPrompt() ([]int, []models.ScoreItem, int) {
	id := func(k int) int { return (k*7919 + 13) % benchVocab }
	prefix := make([]int, benchPrefix)
	for k := range prefix {
		prefix[k] = id(k)
	}
	items := make([]models.ScoreItem, benchItems)
	scored := 0 // tokens of every prefix + context + option sequence
	for i := range items {
		ctx := make([]int, benchContextLen(i))
		for k := range ctx {
			ctx[k] = id(1000 + i*31 + k)
		}
		items[i] = models.ScoreItem{Context: ctx, Options: [][]int{{id(7)}, {id(8)}}}
		scored += benchOptions * (benchPrefix + len(ctx) + 1)
	}
	return prefix, items, scored
}

// BenchmarkScore measures Score on the workload with the prefix's keys and
// values cached and without (every sequence run from its first token), in
// scored tokens per second: the tokens of all prefix + context + option
// sequences, the same count for both, so the figures compare directly with
// each other and with torch_score.py's.
func BenchmarkScore(b *testing.B) {
	prefix, items, scored := benchPrompt()
	for _, fam := range []struct {
		name string
		cfg  *checkpoint.Config
	}{{"gpt2", models.TinyGPT2Config(benchVocab)}, {"llama", models.TinyLlamaConfig("llama", benchVocab)}} {
		lm, _, err := models.NewCausalLM(fam.cfg, nil, 1)
		if err != nil {
			b.Fatal(err)
		}
		for _, bc := range []struct {
			name string
			opt  models.ScoreOptions
		}{
			{"prefix-cached", models.ScoreOptions{BatchTokens: 2048}},
			{"no-cache", models.ScoreOptions{BatchTokens: 2048, NoPrefixCache: true}},
		} {
			b.Run(fam.name+"/"+bc.name, func(b *testing.B) {
				var st models.ScoreStats
				for i := 0; i < b.N; i++ {
					if _, st, err = lm.Score(prefix, items, bc.opt); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(scored)*float64(b.N)/b.Elapsed().Seconds(), "scored-tokens/s")
				b.ReportMetric(float64(st.Tokens), "tokens-run/op")
			})
		}
	}
}
