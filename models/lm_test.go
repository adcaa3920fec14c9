package models_test

import (
	"math"
	"testing"

	"github.com/beluga-nlp/beluga/models"
)

// scoreCase is a prompt of the fixture's token ids: a shared prefix, and
// items whose contexts and options vary in length (an empty context, whose
// first option token follows the prefix directly, included).
func scoreCase(exp *decoderExpected) ([]int, []models.ScoreItem) {
	ids := exp.InputIDs
	prefix := append(append([]int{}, ids[3]...), ids[0]...)
	items := []models.ScoreItem{
		{Context: ids[1], Options: [][]int{ids[2], ids[6][:2], ids[7][:3]}},
		{Context: nil, Options: [][]int{ids[2], ids[4][:2]}},
		{Context: ids[5], Options: [][]int{ids[2], ids[6][:2]}},
		{Context: ids[4][:3], Options: [][]int{ids[7][:1], ids[6][:1]}},
	}
	return prefix, items
}

// TestScoreUsesThePrefixCache: Score with the prefix's keys and values
// cached gives the log-likelihoods of scoring every sequence from its first
// token, and both the sum of the next-token log-probabilities of the whole
// sequence (NextLogProbs, checked against transformers) — for GPT-2's
// learned positions and Llama's and Qwen2's rotary ones, in batches of
// several lengths.
func TestScoreUsesThePrefixCache(t *testing.T) {
	for _, fx := range decoderFixtures {
		if fx.dir != fx.family {
			continue
		}
		t.Run(fx.dir, func(t *testing.T) {
			ck, exp := loadDecoder(t, fx.dir, fx.family)
			lm, _, err := models.NewCausalLM(ck.Config, ck.Weights, 1)
			if err != nil {
				t.Fatal(err)
			}
			prefix, items := scoreCase(exp)
			cached, cst, err := lm.Score(prefix, items, models.ScoreOptions{BatchTokens: 40})
			if err != nil {
				t.Fatal(err)
			}
			plain, pst, err := lm.Score(prefix, items, models.ScoreOptions{NoPrefixCache: true})
			if err != nil {
				t.Fatal(err)
			}
			worst, worstRef := 0.0, 0.0
			for i, it := range items {
				for o, op := range it.Options {
					seq := append(append(append([]int{}, prefix...), it.Context...), op...)
					lp, err := lm.NextLogProbs(models.NewBatch([]models.Encoding{{IDs: seq, TypeIDs: make([]int, len(seq))}}))
					if err != nil {
						t.Fatal(err)
					}
					ref := 0.0
					for _, v := range lp[0][len(seq)-1-len(op):] {
						ref += v
					}
					d, dr := math.Abs(cached[i][o]-plain[i][o]), math.Abs(cached[i][o]-ref)
					if d > 1e-4 || dr > 1e-4 {
						t.Errorf("item %d option %d: %.6g with the prefix cached, %.6g without, %.6g from the whole sequence's log-probabilities", i, o, cached[i][o], plain[i][o], ref)
					}
					worst, worstRef = math.Max(worst, d), math.Max(worstRef, dr)
				}
			}
			if cst.Passes < 3 || cst.Tokens >= pst.Tokens {
				t.Errorf("cached scoring ran %+v, uncached %+v: want several batches and fewer tokens", cst, pst)
			}
			t.Logf("max |cached − uncached| %.2g, |cached − whole sequence| %.2g; cached %+v, uncached %+v", worst, worstRef, cst, pst)
		})
	}
}

// TestScoreRefusesBadItems: nothing to condition on, no options, an empty
// option, or a token outside the vocabulary is an error naming the item.
func TestScoreRefusesBadItems(t *testing.T) {
	ck, _ := loadDecoder(t, "gpt2", "gpt2")
	lm, _, err := models.NewCausalLM(ck.Config, ck.Weights, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		prefix []int
		items  []models.ScoreItem
	}{
		{"no prefix, no context", nil, []models.ScoreItem{{Options: [][]int{{5}}}}},
		{"no options", []int{1}, []models.ScoreItem{{Context: []int{2}}}},
		{"empty option", []int{1}, []models.ScoreItem{{Context: []int{2}, Options: [][]int{{3}, {}}}}},
		{"token beyond the vocabulary", []int{1}, []models.ScoreItem{{Context: []int{100000}, Options: [][]int{{3}}}}},
	} {
		if _, _, err := lm.Score(tc.prefix, tc.items, models.ScoreOptions{}); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

// TestCausalLMDrawsDistinctParameters: a language model built afresh
// (benchmarks, tests) draws its untied lm_head from the same stream after
// the embedding, not a copy of it.
func TestCausalLMDrawsDistinctParameters(t *testing.T) {
	lm, rep, err := models.NewCausalLM(models.TinyLlamaConfig("llama", 50), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Initialised) == 0 {
		t.Fatal("nothing initialised")
	}
	emb, head := lm.Param("model.embed_tokens.weight"), lm.Param("lm_head.weight")
	same := 0
	for i := range emb.Value {
		if emb.Value[i] == head.Value[i] {
			same++
		}
	}
	if same > len(emb.Value)/100 {
		t.Errorf("lm_head equals the embedding in %d of %d values", same, len(emb.Value))
	}
}
