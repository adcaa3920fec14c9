package train

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/beluga-nlp/beluga/models"
)

// CorrectLPFrozenEval runs linear probing (LP, and LP-FT's probing phase)
// with the frozen encoder in evaluation mode. BeLUGA freezes the encoder by
// requires_grad=False only: the Trainer's model.train() leaves its dropout
// on, so every visit of an input sees the encoder through a fresh dropout
// mask, and the faithful LP must run the encoder at every step. With the
// encoder's dropout off its output for an input never changes: it is
// computed once per input and the head (its own dropout, the classifier) is
// trained on it, in the same batches as the faithful run.
const CorrectLPFrozenEval = "lp-frozen-eval"

// headModel is a classifier whose head can be trained alone on features of
// its frozen encoder (models.BERT).
type headModel interface {
	// Infer's Output.Pooled are the features: the encoder's output in
	// evaluation mode, what the head reads.
	Infer(b models.Batch) (models.Output, error)
	// HeadForward runs the head on rows of features.
	HeadForward(features []float32, rows int, train bool) (models.Pass, error)
}

// featureBatch is how many inputs share a batch when features are computed:
// sorted by length, so that little of it is padding.
const featureBatch = 64

// cachedProbe is linear probing on cached features (CorrectLPFrozenEval):
// erm's batches, the same draws from the same mixer, but each batch's
// encoder output looked up — computed, for the inputs of an epoch not seen
// before, when the epoch is drawn — and only the head run and
// back-propagated.
type cachedProbe struct {
	erm
	feats map[string][]float32 // by rowKey
}

func (c *cachedProbe) Update(st *UpdateState) (Step, error) {
	hm, ok := st.Model.(headModel)
	if !ok {
		return Step{}, fmt.Errorf("correction %s: the model (%T) cannot train its head on cached features", CorrectLPFrozenEval, st.Model)
	}
	if len(c.pending) == 0 {
		c.pending = c.mx.Epoch()
		if err := c.featurise(hm, c.pending); err != nil {
			return Step{}, err
		}
	}
	b := c.pending[0]
	c.pending = c.pending[1:]
	rows := b.Input.Size
	var x []float32
	for i := 0; i < rows; i++ {
		x = append(x, c.feats[rowKey(b.Input, i)]...)
	}
	pass, err := hm.HeadForward(x, rows, true)
	if err != nil {
		return Step{}, err
	}
	defer pass.Release()
	kind := b.Kind.String()
	l, dz, err := batchLoss(st.Losses, b, st.Hyper.Loss)(pass.Logits())
	if err != nil {
		return Step{Loss: l, Kind: kind}, fmt.Errorf("loss: %w", err)
	}
	return Step{Loss: l, Kind: kind}, pass.Backward(dz)
}

// featurise computes the features of the inputs of batches that have none
// yet, in evaluation mode, in length-sorted batches.
func (c *cachedProbe) featurise(hm headModel, batches []Batch) error {
	if c.feats == nil {
		c.feats = map[string][]float32{}
	}
	todo := map[string]models.Encoding{}
	for _, b := range batches {
		for i := 0; i < b.Input.Size; i++ {
			k := rowKey(b.Input, i)
			if _, ok := c.feats[k]; !ok {
				todo[k] = rowEncoding(b.Input, i)
			}
		}
	}
	keys := make([]string, 0, len(todo))
	for k := range todo {
		keys = append(keys, k)
	}
	// Sorted by length, then content: the batches, and so the features'
	// last bits, do not depend on map order.
	sort.Slice(keys, func(a, b int) bool {
		if la, lb := len(todo[keys[a]].IDs), len(todo[keys[b]].IDs); la != lb {
			return la < lb
		}
		return keys[a] < keys[b]
	})
	for start := 0; start < len(keys); start += featureBatch {
		chunk := keys[start:min(start+featureBatch, len(keys))]
		encs := make([]models.Encoding, len(chunk))
		for i, k := range chunk {
			encs[i] = todo[k]
		}
		out, err := hm.Infer(models.NewBatch(encs))
		if err != nil {
			return fmt.Errorf("encoder features: %w", err)
		}
		if len(out.Pooled)%len(chunk) != 0 || len(out.Pooled) == 0 {
			return fmt.Errorf("encoder features: %d values for %d inputs", len(out.Pooled), len(chunk))
		}
		w := len(out.Pooled) / len(chunk)
		for i, k := range chunk {
			c.feats[k] = out.Pooled[i*w : (i+1)*w : (i+1)*w]
		}
	}
	return nil
}

// rowKey identifies row i of a batch by its tokens and token types (its
// padding excluded).
func rowKey(b models.Batch, i int) string {
	e := rowEncoding(b, i)
	buf := make([]byte, 0, 5*len(e.IDs))
	for j, id := range e.IDs {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(id))
		buf = append(buf, byte(e.TypeIDs[j]))
	}
	return string(buf)
}

// rowEncoding recovers row i's encoding from a padded batch.
func rowEncoding(b models.Batch, i int) models.Encoding {
	L := b.SeqLen
	n := 0
	for n < L && b.Mask[i*L+n] != 0 {
		n++
	}
	return models.Encoding{IDs: b.IDs[i*L : i*L+n], TypeIDs: b.Types[i*L : i*L+n]}
}
