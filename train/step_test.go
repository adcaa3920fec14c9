package train

import (
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/optim"
)

// BenchmarkUpdateBERTTiny measures one training step (forward, backward,
// clipping, AdamW) of the BERT-tiny shape on batch 32 × 64 tokens — the
// figure benchmarks/compare.sh sets beside PyTorch's.
func BenchmarkUpdateBERTTiny(b *testing.B) {
	m, _, err := models.NewBERT(models.TinyConfig(30522), 2, nil, 1)
	if err != nil {
		b.Fatal(err)
	}
	encs := make([]models.Encoding, 32)
	labels := make([]int, 32)
	for i := range encs {
		ids := make([]int, 64)
		for j := range ids {
			ids[j] = 1000 + (i*131+j*17)%29000
		}
		encs[i] = models.Encoding{IDs: ids, TypeIDs: make([]int, 64)}
		labels[i] = i % 2
	}
	batch := models.NewBatch(encs)
	ev := losses.NewEvaluator()
	loss := func(z []float32) (float64, []float32, error) { return ev.CE(z, 32, 2, labels) }
	opt := optim.NewAdamW(m.Backend(), 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Update(m, batch, loss, opt, 1e-4, 1, false); err != nil {
			b.Fatal(err)
		}
	}
}

func TestUpdateLinearProbingKeepsEncoder(t *testing.T) {
	cfg := models.TinyConfig(200)
	cfg.NumHiddenLayers, cfg.HiddenSize, cfg.IntermediateSize = 1, 16, 32
	m, _, err := models.NewBERT(cfg, 2, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	m.SetFrozenEncoder(true)
	before := map[string][]float32{}
	for _, p := range m.Params() {
		before[p.Name] = append([]float32(nil), p.Value...)
	}
	batch := models.NewBatch([]models.Encoding{{IDs: []int{1, 5, 9, 2}, TypeIDs: make([]int, 4)}, {IDs: []int{1, 7, 2}, TypeIDs: make([]int, 3)}})
	ev := losses.NewEvaluator()
	opt := optim.NewAdamW(m.Backend(), 0.1)
	for i := 0; i < 3; i++ {
		if _, err := Update(m, batch, func(z []float32) (float64, []float32, error) { return ev.CE(z, 2, 2, []int{0, 1}) }, opt, 1e-2, 1, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range m.Params() {
		changed := false
		for i, v := range p.Value {
			changed = changed || v != before[p.Name][i]
		}
		if p.Encoder && changed {
			t.Errorf("linear probing changed encoder weight %s", p.Name)
		}
		if !p.Encoder && !changed {
			t.Errorf("linear probing left classifier weight %s unchanged", p.Name)
		}
	}
}
