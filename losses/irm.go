package losses

import (
	"fmt"
	"math"
)

// IRM's penalty (IRMv1, Arjovsky et al.) for one environment's batch is the
// squared gradient of a "dummy" loss D with respect to a scale w = 1 on the
// logits: with G = ∂D/∂z,
//
//	g_c = ∂D(z⊙w)/∂w_c |w=1 = Σ_{i∈S} G_ic z_ic,   P = Σ_c g_c²
//	∂P/∂z_jk = 2 g_k G_jk [j∈S] + 2 (H v)_jk,   v_ic = g_c z_ic [i∈S], H = ∂²D/∂z²
//
// where S is the set of rows the scale multiplies: every row for MFT and
// DIR, only the perturbed half for INV — BeLUGA's INV dummy loss is
// CE(logits[half:]·w, softmax(logits[:half])), its targets unscaled.
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
// dirs the directions (DummyDIR); DummyINV takes neither. With split set it
// is DomainBed's form instead: the batch's examples (pairs, for INV and
// DIR) are split into even and odd ones and the penalty is Σ_c g¹_c g²_c,
// the product of the two halves' scale gradients.
func (e *Evaluator) IRMPenalty(z []float32, rows, cols int, kind DummyKind, targets []float64, dirs []Direction, split bool) (float64, []float32, error) {
	if err := check(rows, cols, len(z)); err != nil {
		return 0, nil, err
	}
	paired := kind == DummyINV || kind == DummyDIR
	switch {
	case paired && rows%2 != 0:
		return 0, nil, fmt.Errorf("%d rows: want originals then as many perturbations", rows)
	case kind == DummyDIR && len(dirs) != rows/2:
		return 0, nil, fmt.Errorf("DIR batch of %d×%d with %d directions", rows, cols, len(dirs))
	case (kind == DummyCE || kind == DummyBCE) && len(targets) != len(z):
		return 0, nil, fmt.Errorf("%d targets for %d logits", len(targets), len(z))
	case kind > DummyDIR || kind < DummyCE:
		return 0, nil, fmt.Errorf("unknown dummy loss %d", kind)
	}
	// Examples are rows, or pairs of rows (original p, perturbation n/2+p).
	examples := rows
	if paired {
		examples = rows / 2
	}
	all := make([]int, examples)
	for i := range all {
		all[i] = i
	}
	parts := [2][]int{all, all}
	if split {
		if examples < 2 {
			// One example cannot be split: no penalty (DomainBed would take
			// the gradient of an empty half).
			return 0, make([]float32, len(z)), nil
		}
		parts = [2][]int{nil, nil}
		for i := 0; i < examples; i++ {
			parts[i%2] = append(parts[i%2], i)
		}
	}
	zv := make([]float64, len(z))
	for i, x := range z {
		zv[i] = float64(x)
	}
	// rowsOf lists the rows of a part's examples in the layout its loss
	// expects (originals, then their perturbations, for pairs).
	rowsOf := func(part []int) []int {
		if !paired {
			return part
		}
		out := make([]int, 0, 2*len(part))
		out = append(out, part...)
		for _, p := range part {
			out = append(out, examples+p)
		}
		return out
	}
	type partGrad struct {
		rows []int
		grad func(sub []float64) ([]float64, error)
		G    []float64 // gradient of the part's dummy loss at z
		g    []float64 // its scale gradient Σ_{i∈S} G_ic z_ic
	}
	// scaled says whether the i-th row of a part's layout is multiplied by
	// the dummy scale: INV scales the perturbations only (the second half).
	scaled := func(i, n int) bool { return kind != DummyINV || i >= n/2 }
	var ps [2]*partGrad
	for k, part := range parts {
		if k == 1 && !split {
			ps[1] = ps[0]
			break
		}
		pr := rowsOf(part)
		var subTargets []float64
		var subDirs []Direction
		switch kind {
		case DummyCE, DummyBCE:
			subTargets = gatherRows(targets, pr, cols)
		case DummyDIR:
			subDirs = pickDirs(dirs, part)
		}
		grad, err := e.dummyGrad(len(pr), cols, kind, subTargets, subDirs)
		if err != nil {
			return 0, nil, err
		}
		sub := gatherRows(zv, pr, cols)
		G, err := grad(sub)
		if err != nil {
			return 0, nil, err
		}
		g := make([]float64, cols)
		for i := range pr {
			if !scaled(i, len(pr)) {
				continue
			}
			for c := 0; c < cols; c++ {
				g[c] += G[i*cols+c] * sub[i*cols+c]
			}
		}
		ps[k] = &partGrad{rows: pr, grad: grad, G: G, g: g}
	}
	pen := 0.0
	for c := 0; c < cols; c++ {
		pen += ps[0].g[c] * ps[1].g[c]
	}
	dz := make([]float64, len(z))
	for k := range ps {
		self, partner := ps[k], ps[1-k]
		sub := gatherRows(zv, self.rows, cols)
		// d/dz of Σ_c g_self,c · g_partner,c through g_self:
		// partner_k·G_self + H_self·v, v_ic = partner_c·z_ic.
		v := make([]float64, len(sub))
		vmax := 0.0
		for i := range sub {
			if !scaled(i/cols, len(self.rows)) {
				continue
			}
			v[i] = partner.g[i%cols] * sub[i]
			vmax = math.Max(vmax, math.Abs(v[i]))
		}
		hv := make([]float64, len(sub))
		if vmax > 0 {
			eps := 1e-4 / vmax
			up, dn := make([]float64, len(sub)), make([]float64, len(sub))
			for i := range sub {
				up[i], dn[i] = sub[i]+eps*v[i], sub[i]-eps*v[i]
			}
			gu, err := self.grad(up)
			if err != nil {
				return 0, nil, err
			}
			gd, err := self.grad(dn)
			if err != nil {
				return 0, nil, err
			}
			for i := range hv {
				hv[i] = (gu[i] - gd[i]) / (2 * eps)
			}
		}
		for i, r := range self.rows {
			direct := 0.0
			if scaled(i, len(self.rows)) {
				direct = 1
			}
			for c := 0; c < cols; c++ {
				dz[r*cols+c] += direct*partner.g[c]*self.G[i*cols+c] + hv[i*cols+c]
			}
		}
	}
	out := make([]float32, len(dz))
	for i, v := range dz {
		out[i] = float32(v)
	}
	return pen, out, nil
}

// dummyGrad returns the gradient function of a dummy loss on rows×cols logits.
func (e *Evaluator) dummyGrad(rows, cols int, kind DummyKind, targets []float64, dirs []Direction) (func([]float64) ([]float64, error), error) {
	switch kind {
	case DummyCE, DummyBCE:
		form := SoftmaxCE
		if kind == DummyBCE {
			form = SigmoidBCE
		}
		gr, err := e.mftGraph(rows, cols, form)
		if err != nil {
			return nil, err
		}
		return func(zv []float64) ([]float64, error) { _, g, err := gr.run64(zv, targets); return g, err }, nil
	case DummyINV:
		gr, err := e.invGraph(rows, cols, false)
		if err != nil {
			return nil, err
		}
		return func(zv []float64) ([]float64, error) { _, g, err := gr.run64(zv); return g, err }, nil
	}
	gr, err := e.dirGraph(rows, cols)
	if err != nil {
		return nil, err
	}
	return func(zv []float64) ([]float64, error) {
		z32 := make([]float32, len(zv))
		for i, x := range zv {
			z32[i] = float32(x)
		}
		sel, keep, _, err := dirSelection(z32, cols, dirs)
		if err != nil {
			return nil, err
		}
		_, g, err := gr.run64(zv, sel, keep)
		return g, err
	}, nil
}

func gatherRows(z []float64, rows []int, cols int) []float64 {
	out := make([]float64, 0, len(rows)*cols)
	for _, r := range rows {
		out = append(out, z[r*cols:(r+1)*cols]...)
	}
	return out
}

func pickDirs(dirs []Direction, pairs []int) []Direction {
	out := make([]Direction, len(pairs))
	for i, p := range pairs {
		out[i] = dirs[p]
	}
	return out
}
