package train

import (
	"context"
	"math/rand/v2"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/suites"
)

// readTrial trains one READ search trial and scores it on T_val.
func readTrial(ctx context.Context, s RunSpec) (Trial, error) {
	p, err := prepareRead(ctx, s)
	if err != nil {
		return Trial{}, err
	}
	if _, err := Train(ctx, p.model, p.data, p.phase, TrainOptions{Seed: s.Seed, MaxSteps: s.MaxSteps}); err != nil {
		return Trial{}, err
	}
	val, err := BuildSpanSuiteData(ctx, p.suite, suites.SplitValidation, nil, p.tk, p.cfg)
	if err != nil {
		return Trial{}, err
	}
	return spanObjective(p.model, val, p.cfg.MaxLength, s.Seed)
}

// spanObjective scores a span model on validation data as BeLUGA's
// compute_metrics does for SQuAD (REFERENCE 1.4): the MFT start and end
// token accuracies and their mean, and for INV the share of cases whose
// aligned start (and end) argmax is the original's, one perturbation drawn
// per case; the objective is mft_mean_acc + inv_mean_pass.
func spanObjective(m *models.SpanBERT, val *SuiteData, length int, seed uint64) (Trial, error) {
	var t Trial
	rng := rand.New(rand.NewPCG(seed, 0x0b1))
	infer := func(encs []models.Encoding) ([]models.SpanLogits, error) {
		var out []models.SpanLogits
		for lo := 0; lo < len(encs); lo += 32 {
			l, err := m.InferSpans(padBatch(encs[lo:min(lo+32, len(encs))], length))
			if err != nil {
				return nil, err
			}
			out = append(out, l)
		}
		return out, nil
	}
	// row returns the start and end logits of input i of encs's batches.
	row := func(ls []models.SpanLogits, i int) ([]float32, []float32) { return ls[i/32].Row(i % 32) }
	if len(val.MFT) > 0 {
		encs := make([]models.Encoding, len(val.MFT))
		for i, r := range val.MFT {
			encs[i] = r.Enc
		}
		ls, err := infer(encs)
		if err != nil {
			return t, err
		}
		start, end := 0, 0
		for i, r := range val.MFT {
			s, e := row(ls, i)
			if argmax(s) == r.Span[0] {
				start++
			}
			if argmax(e) == r.Span[1] {
				end++
			}
		}
		n := float64(len(val.MFT))
		t.MFTAcc = (float64(start)/n + float64(end)/n) / 2
	}
	if len(val.INV) > 0 {
		encs := make([]models.Encoding, 0, 2*len(val.INV))
		picked := make([]int, len(val.INV))
		for i, p := range val.INV {
			picked[i] = rng.IntN(len(p.Perts))
			encs = append(encs, p.Orig, p.Perts[picked[i]])
		}
		ls, err := infer(encs)
		if err != nil {
			return t, err
		}
		gather := func(z []float32, at []int) []float32 {
			out := make([]float32, len(at))
			for k, j := range at {
				out[k] = z[j]
			}
			return out
		}
		start, end := 0, 0
		for i, p := range val.INV {
			a := p.Aligns[picked[i]]
			os, oe := row(ls, 2*i)
			ps, pe := row(ls, 2*i+1)
			if argmax(gather(ps, a.Pert)) == argmax(gather(os, a.Orig)) {
				start++
			}
			if argmax(gather(pe, a.Pert)) == argmax(gather(oe, a.Orig)) {
				end++
			}
		}
		n := float64(len(val.INV))
		t.INVPass = (float64(start)/n + float64(end)/n) / 2
	}
	t.Objective = t.MFTAcc + t.INVPass
	return t, nil
}
