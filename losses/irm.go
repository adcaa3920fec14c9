package losses

import (
	"fmt"
	"math"
)

// IRM's penalty (IRMv1, Arjovsky et al.) for one environment's batch is the
// squared gradient of a "dummy" loss D with respect to a scale w = 1 on the
// logits: with G = ∂D/∂z,
//
//	g_c = ∂D(z⊙w)/∂w_c |w=1 = Σ_i G_ic z_ic,   P = Σ_c g_c²
//	∂P/∂z_jk = 2 g_k G_jk + 2 (H v)_jk,   v_ic = g_c z_ic, H = ∂²D/∂z²
//
// P is exact. The Hessian-vector product H v is the central difference of
// the (symbolic, gorgonia) gradient along v in float64 — gorgonia v0.9.18
// returns wrong second derivatives through its broadcasting and reduction
// ops, so the second-order step is taken numerically (error ~1e-8 relative).

// DummyKind is the loss IRM's penalty differentiates.
type DummyKind int

const (
	// DummyCE is softmax cross-entropy with the batch's soft targets: what
	// BeLUGA's code uses for sentiment MFT batches, although their ERM loss
	// is the sigmoid BCE.
	DummyCE DummyKind = iota
	// DummyBCE is the sigmoid BCE, consistent with the ERM loss.
	DummyBCE
	// DummyINV is the INV loss (originals then perturbations).
	DummyINV
	// DummyDIR is the DIR loss with the batch's directions.
	DummyDIR
)

// IRMPenalty returns the penalty of rows×cols logits z and its gradient
// with respect to z. targets are the soft targets (DummyCE, DummyBCE) and
// dirs the directions (DummyDIR); DummyINV takes neither.
func (e *Evaluator) IRMPenalty(z []float32, rows, cols int, kind DummyKind, targets []float64, dirs []Direction) (float64, []float32, error) {
	if err := check(rows, cols, len(z)); err != nil {
		return 0, nil, err
	}
	var grad func(zv []float64) ([]float64, error)
	switch kind {
	case DummyCE, DummyBCE:
		if len(targets) != len(z) {
			return 0, nil, fmt.Errorf("%d targets for %d logits", len(targets), len(z))
		}
		form := SoftmaxCE
		if kind == DummyBCE {
			form = SigmoidBCE
		}
		gr, err := e.mftGraph(rows, cols, form)
		if err != nil {
			return 0, nil, err
		}
		grad = func(zv []float64) ([]float64, error) { _, g, err := gr.run64(zv, targets); return g, err }
	case DummyINV:
		if rows%2 != 0 {
			return 0, nil, fmt.Errorf("INV batch of %d rows: want originals then as many perturbations", rows)
		}
		gr, err := e.invGraph(rows, cols, false)
		if err != nil {
			return 0, nil, err
		}
		grad = func(zv []float64) ([]float64, error) { _, g, err := gr.run64(zv); return g, err }
	case DummyDIR:
		if cols != 2 || rows%2 != 0 || len(dirs) != rows/2 {
			return 0, nil, fmt.Errorf("DIR batch of %d×%d with %d directions", rows, cols, len(dirs))
		}
		gr, err := e.dirGraph(rows)
		if err != nil {
			return 0, nil, err
		}
		grad = func(zv []float64) ([]float64, error) {
			z32 := make([]float32, len(zv))
			for i, x := range zv {
				z32[i] = float32(x)
			}
			sel, keep, _, err := dirSelection(z32, dirs)
			if err != nil {
				return nil, err
			}
			_, g, err := gr.run64(zv, sel, keep)
			return g, err
		}
	default:
		return 0, nil, fmt.Errorf("unknown dummy loss %d", kind)
	}
	zv := make([]float64, len(z))
	for i, x := range z {
		zv[i] = float64(x)
	}
	G, err := grad(zv)
	if err != nil {
		return 0, nil, err
	}
	g := make([]float64, cols)
	for i := 0; i < rows; i++ {
		for c := 0; c < cols; c++ {
			g[c] += G[i*cols+c] * zv[i*cols+c]
		}
	}
	pen := 0.0
	v := make([]float64, len(zv))
	vmax := 0.0
	for i := range zv {
		v[i] = g[i%cols] * zv[i]
		vmax = math.Max(vmax, math.Abs(v[i]))
	}
	for _, x := range g {
		pen += x * x
	}
	dz := make([]float32, len(z))
	hv := make([]float64, len(z))
	if vmax > 0 {
		eps := 1e-4 / vmax
		up, dn := make([]float64, len(zv)), make([]float64, len(zv))
		for i := range zv {
			up[i], dn[i] = zv[i]+eps*v[i], zv[i]-eps*v[i]
		}
		gu, err := grad(up)
		if err != nil {
			return 0, nil, err
		}
		gd, err := grad(dn)
		if err != nil {
			return 0, nil, err
		}
		for i := range hv {
			hv[i] = (gu[i] - gd[i]) / (2 * eps)
		}
	}
	for i := range dz {
		dz[i] = float32(2*g[i%cols]*G[i] + 2*hv[i])
	}
	return pen, dz, nil
}
