package losses

import (
	"fmt"

	"github.com/beluga-nlp/beluga/internal/difflib"
)

// Span losses for reading comprehension (SQuAD). Their logits are in
// models.SpanBERT's layout: each row holds seqLen start logits followed by
// seqLen end logits.
//
//	MFT: (CE(start logits, start position) + CE(end logits, end position))/2,
//	    HuggingFace's BertForQuestionAnswering loss, each CE a mean over rows
//	INV: rows are [originals; perturbations]; the start (end) logits of each
//	    pair are gathered at the aligned token positions (SpanAlignment) and
//	    loss = (INV(start) + INV(end))/2 with INV the soft-target loss above,
//	    gradient through both halves unless detached

// SpanAlignment pairs token positions of an original feature and its
// perturbation: position Orig[k] of the original corresponds to Pert[k] of
// the perturbation. Both have the feature's length; BeLUGA pads them with 0,
// the [CLS] position, so the padding compares [CLS] logits, many times over.
type SpanAlignment struct{ Orig, Pert []int }

// AlignSpans is BeLUGA's align_inv: the matching blocks of difflib's
// SequenceMatcher(None, pert, orig) (autojunk on) on the two features' input
// ids, as position lists padded with 0 to length. With padded features of
// 200 tokens or more, autojunk makes any id occurring in more than 1% of
// orig's positions (padding, [SEP], "the") unable to start a match.
func AlignSpans(orig, pert []int, length int) (SpanAlignment, error) {
	var a SpanAlignment
	for _, m := range difflib.MatchingBlocks(pert, orig, true) {
		for k := 0; k < m.N; k++ {
			a.Orig = append(a.Orig, m.B+k)
			a.Pert = append(a.Pert, m.A+k)
		}
	}
	if len(a.Orig) > length {
		return a, fmt.Errorf("alignment of %d positions does not fit length %d", len(a.Orig), length)
	}
	for len(a.Orig) < length {
		a.Orig = append(a.Orig, 0)
		a.Pert = append(a.Pert, 0)
	}
	return a, nil
}

// checkSpanINV checks a span INV batch — originals, then perturbations,
// one alignment per pair, all of one length K within seqLen — and returns
// its number of pairs and K.
func checkSpanINV(z []float32, rows, seqLen int, aligns []SpanAlignment) (half, K int, err error) {
	if err := checkSpan(z, rows, seqLen); err != nil {
		return 0, 0, err
	}
	half = rows / 2
	if rows%2 != 0 || len(aligns) != half {
		return 0, 0, fmt.Errorf("span INV batch of %d rows with %d alignments: want originals, perturbations and one alignment per pair", rows, len(aligns))
	}
	K = len(aligns[0].Orig)
	for i, a := range aligns {
		if len(a.Orig) != K || len(a.Pert) != K {
			return 0, 0, fmt.Errorf("alignment %d has %d and %d positions, alignment 0 has %d", i, len(a.Orig), len(a.Pert), K)
		}
		for k := range a.Orig {
			if a.Orig[k] < 0 || a.Orig[k] >= seqLen || a.Pert[k] < 0 || a.Pert[k] >= seqLen {
				return 0, 0, fmt.Errorf("alignment %d pairs positions %d and %d outside %d tokens", i, a.Orig[k], a.Pert[k], seqLen)
			}
		}
	}
	return half, K, nil
}

func checkSpan(z []float32, rows, seqLen int) error {
	if rows <= 0 || seqLen <= 0 || len(z) != rows*2*seqLen {
		return fmt.Errorf("%d span logits for %d rows of %d tokens (want rows×2×tokens)", len(z), rows, seqLen)
	}
	return nil
}

// splitSpan copies the start and end logits of every row into two
// rows×seqLen matrices.
func splitSpan(z []float32, rows, seqLen int) (start, end []float32) {
	start, end = make([]float32, rows*seqLen), make([]float32, rows*seqLen)
	for i := 0; i < rows; i++ {
		copy(start[i*seqLen:], z[i*2*seqLen:i*2*seqLen+seqLen])
		copy(end[i*seqLen:], z[i*2*seqLen+seqLen:(i+1)*2*seqLen])
	}
	return start, end
}

// SpanMFT is the MFT loss of a span model: the mean of the start and end
// cross-entropies against the expected answer's token positions.
func (e *Evaluator) SpanMFT(z []float32, rows, seqLen int, starts, ends []int) (float64, []float32, error) {
	if err := checkSpan(z, rows, seqLen); err != nil {
		return 0, nil, err
	}
	if len(starts) != rows || len(ends) != rows {
		return 0, nil, fmt.Errorf("%d start and %d end positions for %d rows", len(starts), len(ends), rows)
	}
	zs, ze := splitSpan(z, rows, seqLen)
	ls, ds, err := e.CE(zs, rows, seqLen, starts)
	if err != nil {
		return 0, nil, fmt.Errorf("start positions: %w", err)
	}
	le, de, err := e.CE(ze, rows, seqLen, ends)
	if err != nil {
		return 0, nil, fmt.Errorf("end positions: %w", err)
	}
	dz := make([]float32, len(z))
	for i := 0; i < rows; i++ {
		for j := 0; j < seqLen; j++ {
			dz[i*2*seqLen+j] = ds[i*seqLen+j] / 2
			dz[i*2*seqLen+seqLen+j] = de[i*seqLen+j] / 2
		}
	}
	return (ls + le) / 2, dz, nil
}

// SpanINV is BeLUGA's SQuAD invariance loss on 2B rows (B originals, then
// their B perturbations) with one alignment per pair.
func (e *Evaluator) SpanINV(z []float32, rows, seqLen int, aligns []SpanAlignment, detach bool) (float64, []float32, error) {
	half, K, err := checkSpanINV(z, rows, seqLen, aligns)
	if err != nil {
		return 0, nil, err
	}
	dz := make([]float32, len(z))
	total := 0.0
	for part := 0; part < 2; part++ { // 0: start logits, 1: end logits
		off := part * seqLen
		g := make([]float32, rows*K)
		for i, a := range aligns {
			orow, prow := i*2*seqLen+off, (half+i)*2*seqLen+off
			for k := 0; k < K; k++ {
				g[i*K+k] = z[orow+a.Orig[k]]
				g[(half+i)*K+k] = z[prow+a.Pert[k]]
			}
		}
		l, dg, err := e.INV(g, rows, K, detach)
		if err != nil {
			return l, nil, err
		}
		total += l / 2
		for i, a := range aligns {
			orow, prow := i*2*seqLen+off, (half+i)*2*seqLen+off
			for k := 0; k < K; k++ {
				dz[orow+a.Orig[k]] += dg[i*K+k] / 2
				dz[prow+a.Pert[k]] += dg[(half+i)*K+k] / 2
			}
		}
	}
	return total, dz, nil
}
