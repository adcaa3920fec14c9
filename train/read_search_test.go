package train

import (
	"context"
	"math"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/suites"
)

// spanObjective against what it must give by construction: MFT rows whose
// targets are the model's own argmax (found one row at a time) score 1,
// and 0.5 with every start shifted; an INV case whose perturbation is its
// original under the identity alignment passes.
func TestSpanObjective(t *testing.T) {
	spec := tinyReadSpec(ConfigIIDPlusT)
	p, err := prepareRead(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	val, err := BuildSpanSuiteData(context.Background(), p.suite, suites.SplitValidation, nil, p.tk, p.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(val.MFT) < 2 || len(val.INV) == 0 {
		t.Fatalf("validation data: %d MFT rows, %d INV cases", len(val.MFT), len(val.INV))
	}
	L := p.cfg.MaxLength
	// The model's own argmax per MFT row, one row at a time.
	for i := range val.MFT {
		l, err := p.model.InferSpans(padBatch([]models.Encoding{val.MFT[i].Enc}, L))
		if err != nil {
			t.Fatal(err)
		}
		s, e := l.Row(0)
		val.MFT[i].Span = [2]int{metrics.Argmax(s), metrics.Argmax(e)}
	}
	same := *val
	same.INV = nil
	for _, c := range val.INV {
		id := losses.SpanAlignment{}
		for k := 0; k < L; k++ {
			id.Orig, id.Pert = append(id.Orig, k), append(id.Pert, k)
		}
		same.INV = append(same.INV, Perturbed{Orig: c.Orig, Perts: []models.Encoding{c.Orig}, Aligns: []losses.SpanAlignment{id}})
	}
	tr, err := spanObjective(p.model, &same, L, 1)
	if err != nil {
		t.Fatal(err)
	}
	if tr.MFTAcc != 1 || tr.INVPass != 1 || tr.Objective != 2 {
		t.Errorf("own argmax and identical perturbations: %+v, want MFT 1, INV 1, objective 2", tr)
	}
	for i := range same.MFT {
		same.MFT[i].Span[0] = (same.MFT[i].Span[0] + 1) % L
	}
	if tr, err = spanObjective(p.model, &same, L, 1); err != nil || math.Abs(tr.MFTAcc-0.5) > 1e-12 {
		t.Errorf("start positions shifted: MFT accuracy %v (%v), want 0.5 (ends still right)", tr.MFTAcc, err)
	}
}
