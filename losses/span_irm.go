package losses

import "fmt"

// IRM's penalty on span batches, as BeLUGA computes it for SQuAD: its dummy
// scale w has one entry per token position (num_labels = max_length) and
// multiplies the start and the end logits alike, so
//
//	MFT: D = (CE(start⊙w, s) + CE(end⊙w, e))/2
//	INV: D = (CE(pert_start_aligned⊙w, softmax(orig_start_aligned)) + the same for end)/2
//
// Each is the plain dummy loss on a stacked matrix — MFT: softmax CE over the
// 2·rows rows [starts; ends] with one-hot targets; INV: the INV loss over
// the rows [orig starts; orig ends; pert starts; pert ends] of aligned
// logits — so the penalty is IRMPenalty's on that matrix, its gradient
// mapped back to the span layout.

// errSpanSplit refuses DomainBed's split penalty, which halves a batch by
// example: a span example is two rows of the stacked matrix.
var errSpanSplit = fmt.Errorf("DomainBed's split IRM penalty is not defined for span batches (use BeLUGA's irm)")

// SpanIRMPenaltyMFT is IRM's penalty of a span MFT or i.i.d. batch and its
// gradient with respect to the logits (models.SpanBERT's layout).
func (e *Evaluator) SpanIRMPenaltyMFT(z []float32, rows, seqLen int, starts, ends []int, split bool) (float64, []float32, error) {
	if split {
		return 0, nil, errSpanSplit
	}
	if err := checkSpan(z, rows, seqLen); err != nil {
		return 0, nil, err
	}
	if len(starts) != rows || len(ends) != rows {
		return 0, nil, fmt.Errorf("%d start and %d end positions for %d rows", len(starts), len(ends), rows)
	}
	zs, ze := splitSpan(z, rows, seqLen)
	stacked := append(zs, ze...)
	y := make([]float64, len(stacked))
	for i, p := range append(append([]int(nil), starts...), ends...) {
		if p < 0 || p >= seqLen {
			return 0, nil, fmt.Errorf("answer position %d outside %d tokens", p, seqLen)
		}
		y[i*seqLen+p] = 1
	}
	pen, d, err := e.IRMPenalty(stacked, 2*rows, seqLen, DummyCE, y, nil, false)
	if err != nil {
		return 0, nil, err
	}
	dz := make([]float32, len(z))
	for i := 0; i < rows; i++ {
		copy(dz[i*2*seqLen:], d[i*seqLen:(i+1)*seqLen])
		copy(dz[i*2*seqLen+seqLen:], d[(rows+i)*seqLen:(rows+i+1)*seqLen])
	}
	return pen, dz, nil
}

// SpanIRMPenaltyINV is IRM's penalty of a span INV batch (originals, then
// their perturbations, one alignment per pair) and its gradient with
// respect to the logits.
func (e *Evaluator) SpanIRMPenaltyINV(z []float32, rows, seqLen int, aligns []SpanAlignment, split bool) (float64, []float32, error) {
	if split {
		return 0, nil, errSpanSplit
	}
	half, K, err := checkSpanINV(z, rows, seqLen, aligns)
	if err != nil {
		return 0, nil, err
	}
	// at(block, i, k) is the logit that row block·half+i, column k of the
	// stacked matrix holds: blocks 0, 1 the originals' start and end logits,
	// 2, 3 the perturbations'.
	at := func(block, i, k int) int {
		part := (block % 2) * seqLen
		if block < 2 {
			return i*2*seqLen + part + aligns[i].Orig[k]
		}
		return (half+i)*2*seqLen + part + aligns[i].Pert[k]
	}
	g := make([]float32, 4*half*K)
	for b := 0; b < 4; b++ {
		for i := 0; i < half; i++ {
			for k := 0; k < K; k++ {
				g[(b*half+i)*K+k] = z[at(b, i, k)]
			}
		}
	}
	pen, dg, err := e.IRMPenalty(g, 4*half, K, DummyINV, nil, nil, false)
	if err != nil {
		return 0, nil, err
	}
	dz := make([]float32, len(z))
	for b := 0; b < 4; b++ {
		for i := 0; i < half; i++ {
			for k := 0; k < K; k++ {
				dz[at(b, i, k)] += dg[(b*half+i)*K+k]
			}
		}
	}
	return pen, dz, nil
}
