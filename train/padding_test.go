package train

import (
	"math"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
)

// padTo widens a batch to seq positions, as padding to max_length does (the
// new positions are [PAD], id 0, and masked out).
func padTo(b models.Batch, seq int) models.Batch {
	out := models.Batch{Size: b.Size, SeqLen: seq, IDs: make([]int, b.Size*seq), Types: make([]int, b.Size*seq), Mask: make([]float32, b.Size*seq)}
	for i := 0; i < b.Size; i++ {
		copy(out.IDs[i*seq:], b.IDs[i*b.SeqLen:(i+1)*b.SeqLen])
		copy(out.Types[i*seq:], b.Types[i*b.SeqLen:(i+1)*b.SeqLen])
		copy(out.Mask[i*seq:], b.Mask[i*b.SeqLen:(i+1)*b.SeqLen])
	}
	return out
}

// TestPaddingChangesNoLoss: a training batch is padded only to its own
// longest input (models.NewBatch), where BeLUGA pads every input to
// max_length. The loss of a batch and its gradient for every parameter must
// not depend on that padding, for every kind of batch (dropout off, so
// that both passes compute the same function).
func TestPaddingChangesNoLoss(t *testing.T) {
	const maxLength = 24
	cfg := models.TinyConfig(300)
	cfg.HiddenSize, cfg.NumAttentionHeads, cfg.IntermediateSize = 32, 2, 64
	enc := func(ids ...int) models.Encoding {
		return models.Encoding{IDs: append(append([]int{101 % 300}, ids...), 102%300), TypeIDs: make([]int, len(ids)+2)}
	}
	orig := []models.Encoding{enc(5, 9, 13), enc(7), enc(11, 12, 13, 14, 15, 16, 17), enc(20, 21)}
	pert := []models.Encoding{enc(5, 9, 14, 30), enc(8), enc(11, 12, 13, 14, 15), enc(20, 22, 23, 24, 25, 26, 27, 28, 29)}
	cases := []struct {
		name string
		b    Batch
	}{
		{"MFT", Batch{Kind: KindMFT, Input: models.NewBatch(orig), Targets: []float64{1, 0, 1.0 / 3, 2.0 / 3, 0, 1, 0.5, 0.5}}},
		{"iid", Batch{Kind: KindIID, Input: models.NewBatch(pert), Targets: []float64{1, 0, 0, 1, 0, 1, 1, 0}}},
		{"INV", Batch{Kind: KindINV, Input: models.NewBatch(append(append([]models.Encoding{}, orig...), pert...))}},
		{"DIR", Batch{Kind: KindDIR, Input: models.NewBatch(append(append([]models.Encoding{}, orig...), pert...)),
			Dirs: []losses.Direction{losses.NotLess0, losses.NotLess2, losses.NotLessConf, losses.NotMoreConf}}},
	}
	ev := losses.NewEvaluator()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.b.Input.SeqLen >= maxLength {
				t.Fatalf("batch already %d long", tc.b.Input.SeqLen)
			}
			lossAndGrads := func(in models.Batch) (float64, [][]float32) {
				m, _, err := models.NewBERT(cfg, 2, nil, 5)
				if err != nil {
					t.Fatal(err)
				}
				m.SetDropout(0, 0)
				b := tc.b
				b.Input = in
				l, err := Accumulate(m, in, batchLoss(ev, b, LossOptions{}), 1)
				if err != nil {
					t.Fatal(err)
				}
				var g [][]float32
				for _, p := range m.Params() {
					g = append(g, append([]float32(nil), p.Grad...))
				}
				return l, g
			}
			l1, g1 := lossAndGrads(tc.b.Input)
			l2, g2 := lossAndGrads(padTo(tc.b.Input, maxLength))
			if math.Abs(l1-l2) > 1e-6*math.Max(1, math.Abs(l1)) {
				t.Errorf("loss %v padded to the longest input, %v padded to %d", l1, l2, maxLength)
			}
			var norm, diff float64
			for i := range g1 {
				for j := range g1[i] {
					norm += float64(g1[i][j]) * float64(g1[i][j])
					d := float64(g1[i][j] - g2[i][j])
					diff += d * d
				}
			}
			// Float32 products blocked differently for different lengths
			// (OpenBLAS) differ in their last bits; a padding that leaked
			// into the loss would differ in the leading ones.
			if norm == 0 || math.Sqrt(diff) > 1e-4*math.Sqrt(norm) {
				t.Errorf("gradients differ with the padding: |Δg| %g, |g| %g", math.Sqrt(diff), math.Sqrt(norm))
			}
		})
	}
}
