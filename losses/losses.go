// Package losses computes BeLUGA's behaviour-specific losses on a batch of
// logits, with their gradient with respect to the logits, as gorgonia
// graphs (compiled once per shape and reused). The model back-propagates
// that gradient itself (models.Pass.Backward).
//
// With z the logits, σ the sigmoid and p = softmax(z):
//
//	MFT, sigmoid BCE (BeLUGA's code; default): mean over rows and classes of
//	    y·softplus(−z) + (1−y)·softplus(z), soft targets y ∈ {[1,0], [½,½], [0,1], [⅓,⅔]}
//	MFT, softmax CE (the paper): mean over rows of −Σc y_c log p_c
//	INV: rows are [originals; perturbations]: mean over pairs of
//	    −Σc p(orig)_c log p(pert)_c, gradient through both unless detached
//	DIR: with d = p(pert) − p(orig) on 2-class probabilities and pred =
//	    argmax p(orig), ε = relu(−d₀) (not_less_0), relu(−d₁) (not_less_2),
//	    relu(−d_pred) (not_less_conf), relu(d_pred) (not_more_conf);
//	    loss = mean −log(1−ε), the log clamped at −100 as torch's BCELoss does
//	CE with class labels (QQP MFT and label-DIR): mean −log p_label
package losses

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Direction is a DIR training rule (BeLUGA's direction column).
type Direction int

// BeLUGA's four DIR directions, in the order of its direction index (the
// sorted direction names).
const (
	NotLess0    Direction = iota // "not_less_0": P(negative) must not fall
	NotLess2                     // "not_less_2": P(positive) must not fall
	NotLessConf                  // "not_less_conf": P(original class) must not fall
	NotMoreConf                  // "not_more_conf": P(original class) must not rise
)

// ParseDirection reads BeLUGA's direction names.
func ParseDirection(s string) (Direction, error) {
	switch s {
	case "not_less_0":
		return NotLess0, nil
	case "not_less_2":
		return NotLess2, nil
	case "not_less_conf":
		return NotLessConf, nil
	case "not_more_conf":
		return NotMoreConf, nil
	}
	return 0, fmt.Errorf("unknown DIR direction %q (want not_less_0, not_less_2, not_less_conf or not_more_conf)", s)
}

// MFTForm selects the MFT loss.
type MFTForm int

const (
	// SigmoidBCE is what BeLUGA's code computes (HF multi_label_classification).
	SigmoidBCE MFTForm = iota
	// SoftmaxCE is what the paper writes.
	SoftmaxCE
)

// SoftLabel returns BeLUGA's 2-class soft target of a sentiment training
// label: "0" → [1,0], "1" (neutral) → [½,½], "2" → [0,1], "not_0" → [⅓,⅔].
func SoftLabel(label string) ([2]float64, error) {
	switch label {
	case "0":
		return [2]float64{1, 0}, nil
	case "1":
		return [2]float64{0.5, 0.5}, nil
	case "2":
		return [2]float64{0, 1}, nil
	case "not_0":
		return [2]float64{1. / 3, 2. / 3}, nil
	}
	return [2]float64{}, fmt.Errorf("unknown sentiment training label %q", label)
}

// ErrNotFinite reports a loss or gradient that is NaN or infinite; the
// trainer stops the run with it.
var ErrNotFinite = fmt.Errorf("loss is not finite")

// graph is one compiled loss: inputs to set, the loss and d(loss)/d(z).
type graph struct {
	g      *G.ExprGraph
	vm     G.VM
	z      *G.Node
	inputs []*G.Node
	loss   *G.Node
	grad   *G.Node
}

type key struct {
	kind       string
	rows, cols int
}

// Evaluator computes losses, caching one compiled graph per loss and shape.
// It is not safe for concurrent use.
type Evaluator struct {
	graphs map[key]*graph
}

// NewEvaluator returns an empty evaluator.
func NewEvaluator() *Evaluator { return &Evaluator{graphs: map[key]*graph{}} }

func (e *Evaluator) compiled(k key, build func(g *G.ExprGraph, z *G.Node) (loss *G.Node, inputs []*G.Node, err error)) (*graph, error) {
	if gr, ok := e.graphs[k]; ok {
		return gr, nil
	}
	g := G.NewGraph()
	z := G.NewMatrix(g, tensor.Float64, G.WithShape(k.rows, k.cols), G.WithName("z"))
	loss, inputs, err := build(g, z)
	if err != nil {
		return nil, fmt.Errorf("build %s loss: %w", k.kind, err)
	}
	grads, err := G.Grad(loss, z)
	if err != nil {
		return nil, fmt.Errorf("differentiate %s loss: %w", k.kind, err)
	}
	gr := &graph{g: g, z: z, inputs: inputs, loss: loss, grad: grads[0]}
	gr.vm = G.NewTapeMachine(g)
	e.graphs[k] = gr
	return gr, nil
}

// run sets z and the inputs, runs the graph and returns the loss and dz.
func (gr *graph) run(z []float32, inputs ...[]float64) (float64, []float32, error) {
	zv := make([]float64, len(z))
	for i, v := range z {
		zv[i] = float64(v)
	}
	loss, gd, err := gr.run64(zv, inputs...)
	dz := make([]float32, len(gd))
	for i, v := range gd {
		dz[i] = float32(v)
	}
	return loss, dz, err
}

// run64 is run in float64 throughout.
func (gr *graph) run64(zv []float64, inputs ...[]float64) (float64, []float64, error) {
	if err := G.Let(gr.z, tensor.New(tensor.WithShape(gr.z.Shape()...), tensor.WithBacking(zv))); err != nil {
		return 0, nil, err
	}
	for i, in := range inputs {
		n := gr.inputs[i]
		if err := G.Let(n, tensor.New(tensor.WithShape(n.Shape()...), tensor.WithBacking(in))); err != nil {
			return 0, nil, err
		}
	}
	defer gr.vm.Reset()
	if err := gr.vm.RunAll(); err != nil {
		return 0, nil, err
	}
	loss := gr.loss.Value().Data().(float64)
	gd := append([]float64(nil), gr.grad.Value().Data().([]float64)...)
	finite := !math.IsNaN(loss) && !math.IsInf(loss, 0)
	for _, v := range gd {
		finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	if !finite {
		return loss, gd, ErrNotFinite
	}
	return loss, gd, nil
}

func check(rows, cols, nz int) error {
	if rows <= 0 || cols <= 0 || rows*cols != nz {
		return fmt.Errorf("%d logits for %d rows of %d classes", nz, rows, cols)
	}
	return nil
}

// MFT is the MFT loss of rows×cols logits against soft targets (rows×cols).
func (e *Evaluator) MFT(z []float32, rows, cols int, targets []float64, form MFTForm) (float64, []float32, error) {
	if err := check(rows, cols, len(z)); err != nil {
		return 0, nil, err
	}
	if len(targets) != len(z) {
		return 0, nil, fmt.Errorf("%d targets for %d logits", len(targets), len(z))
	}
	gr, err := e.mftGraph(rows, cols, form)
	if err != nil {
		return 0, nil, err
	}
	return gr.run(z, targets)
}

func (e *Evaluator) mftGraph(rows, cols int, form MFTForm) (*graph, error) {
	kind := "mft-bce"
	if form == SoftmaxCE {
		kind = "mft-ce"
	}
	return e.compiled(key{kind, rows, cols}, func(g *G.ExprGraph, z *G.Node) (*G.Node, []*G.Node, error) {
		y := G.NewMatrix(g, tensor.Float64, G.WithShape(rows, cols), G.WithName("y"))
		if form == SoftmaxCE {
			l, err := softCE(z, y)
			return l, []*G.Node{y}, err
		}
		// y·softplus(−z) + (1−y)·softplus(z) = softplus(z) − y·z
		sp, err := G.Softplus(z)
		if err != nil {
			return nil, nil, err
		}
		yz, err := G.HadamardProd(y, z)
		if err != nil {
			return nil, nil, err
		}
		d, err := G.Sub(sp, yz)
		if err != nil {
			return nil, nil, err
		}
		l, err := G.Mean(d)
		return l, []*G.Node{y}, err
	})
}

// softCE is mean over rows of −Σc y_c log softmax(z)_c.
func softCE(z, y *G.Node) (*G.Node, error) {
	lsm, err := G.LogSoftMax(z)
	if err != nil {
		return nil, err
	}
	prod, err := G.HadamardProd(y, lsm)
	if err != nil {
		return nil, err
	}
	rowSum, err := G.Sum(prod, 1)
	if err != nil {
		return nil, err
	}
	m, err := G.Mean(rowSum)
	if err != nil {
		return nil, err
	}
	return G.Neg(m)
}

// CE is the cross-entropy of rows×cols logits against class labels.
func (e *Evaluator) CE(z []float32, rows, cols int, labels []int) (float64, []float32, error) {
	if err := check(rows, cols, len(z)); err != nil {
		return 0, nil, err
	}
	if len(labels) != rows {
		return 0, nil, fmt.Errorf("%d labels for %d rows", len(labels), rows)
	}
	y := make([]float64, rows*cols)
	for i, l := range labels {
		if l < 0 || l >= cols {
			return 0, nil, fmt.Errorf("label %d of row %d outside %d classes", l, i, cols)
		}
		y[i*cols+l] = 1
	}
	return e.MFT(z, rows, cols, y, SoftmaxCE)
}

// splitHalves returns the original and perturbed halves of z as graph
// nodes of shape half × cols (gorgonia drops a sliced dimension of size 1,
// so the halves are reshaped back).
func splitHalves(z *G.Node, half int) (*G.Node, *G.Node, error) {
	cols := z.Shape()[1]
	var out [2]*G.Node
	for i := range out {
		s, err := G.Slice(z, G.S(i*half, (i+1)*half))
		if err != nil {
			return nil, nil, err
		}
		if out[i], err = G.Reshape(s, tensor.Shape{half, cols}); err != nil {
			return nil, nil, err
		}
	}
	return out[0], out[1], nil
}

// INV is BeLUGA's invariance loss on 2B×cols logits: the first B rows are
// originals and the last B their perturbations. With detach set the
// original distribution is a constant (no gradient through it).
func (e *Evaluator) INV(z []float32, rows, cols int, detach bool) (float64, []float32, error) {
	if err := check(rows, cols, len(z)); err != nil {
		return 0, nil, err
	}
	if rows%2 != 0 {
		return 0, nil, fmt.Errorf("INV batch of %d rows: want originals then as many perturbations", rows)
	}
	half := rows / 2
	gr, err := e.invGraph(rows, cols, detach)
	if err != nil {
		return 0, nil, err
	}
	if detach {
		po := make([]float64, half*cols)
		for i := 0; i < half; i++ {
			p := softmax64(z[i*cols : (i+1)*cols])
			copy(po[i*cols:], p)
		}
		return gr.run(z, po)
	}
	return gr.run(z)
}

func (e *Evaluator) invGraph(rows, cols int, detach bool) (*graph, error) {
	half := rows / 2
	kind := "inv"
	if detach {
		kind = "inv-detached"
	}
	return e.compiled(key{kind, rows, cols}, func(g *G.ExprGraph, z *G.Node) (*G.Node, []*G.Node, error) {
		zo, zp, err := splitHalves(z, half)
		if err != nil {
			return nil, nil, err
		}
		if detach {
			po := G.NewMatrix(g, tensor.Float64, G.WithShape(half, cols), G.WithName("p_orig"))
			l, err := softCE(zp, po)
			return l, []*G.Node{po}, err
		}
		// Exp(LogSoftMax): gorgonia v0.9.18 merges SoftMax and LogSoftMax
		// of one node, so softmax is taken through the log.
		lo, err := G.LogSoftMax(zo)
		if err != nil {
			return nil, nil, err
		}
		po, err := G.Exp(lo)
		if err != nil {
			return nil, nil, err
		}
		l, err := softCE(zp, po)
		return l, nil, err
	})
}

func softmax64(z []float32) []float64 {
	mx := math.Inf(-1)
	for _, v := range z {
		mx = math.Max(mx, float64(v))
	}
	p := make([]float64, len(z))
	s := 0.0
	for i, v := range z {
		p[i] = math.Exp(float64(v) - mx)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// logClamp is torch BCELoss's lower bound on log(1−ε).
const logClamp = -100

// DIR is BeLUGA's directional loss on 2B×K logits (originals then
// perturbations), one direction per pair. K is len(z)/rows: BeLUGA's tasks
// have two classes; with more, not_less_0 bounds the first class,
// not_less_2 the last, and the confidence directions the predicted one.
func (e *Evaluator) DIR(z []float32, rows int, dirs []Direction) (float64, []float32, error) {
	if rows <= 0 || len(z)%rows != 0 {
		return 0, nil, fmt.Errorf("%d logits for %d rows", len(z), rows)
	}
	cols := len(z) / rows
	if err := check(rows, cols, len(z)); err != nil {
		return 0, nil, err
	}
	half := rows / 2
	if rows%2 != 0 || len(dirs) != half {
		return 0, nil, fmt.Errorf("DIR batch of %d rows with %d directions: want originals, perturbations and one direction per pair", rows, len(dirs))
	}
	sel, keep, clamped, err := dirSelection(z, cols, dirs)
	if err != nil {
		return 0, nil, err
	}
	gr, err := e.dirGraph(rows, cols)
	if err != nil {
		return 0, nil, err
	}
	loss, dz, err := gr.run(z, sel, keep)
	loss += float64(clamped) * -logClamp / float64(half)
	return loss, dz, err
}

// dirSelection picks, per pair, the signed probability difference its
// direction bounds (sel), and marks with keep = 0 the pairs whose
// log(1−ε) torch would clamp (ε = 1): their loss is the constant 100 with
// no gradient.
func dirSelection(z []float32, cols int, dirs []Direction) (sel, keep []float64, clamped int, err error) {
	half := len(dirs)
	sel = make([]float64, half*cols)
	keep = make([]float64, half)
	for i, d := range dirs {
		po, pp := softmax64(z[i*cols:(i+1)*cols]), softmax64(z[(half+i)*cols:(half+i+1)*cols])
		pred := 0
		for c := range po {
			if po[c] > po[pred] {
				pred = c
			}
		}
		col, sign := 0, -1.0
		switch d {
		case NotLess0:
		case NotLess2:
			col = cols - 1
		case NotLessConf:
			col = pred
		case NotMoreConf:
			col, sign = pred, 1
		default:
			return nil, nil, 0, fmt.Errorf("unknown DIR direction %d", d)
		}
		sel[i*cols+col] = sign
		eps := math.Max(0, sign*(pp[col]-po[col]))
		if math.Log(1-eps) < logClamp {
			clamped++
		} else {
			keep[i] = 1
		}
	}
	return sel, keep, clamped, nil
}

func (e *Evaluator) dirGraph(rows, cols int) (*graph, error) {
	half := rows / 2
	return e.compiled(key{"dir", rows, cols}, func(g *G.ExprGraph, z *G.Node) (*G.Node, []*G.Node, error) {
		s := G.NewMatrix(g, tensor.Float64, G.WithShape(half, cols), G.WithName("sel"))
		k := G.NewVector(g, tensor.Float64, G.WithShape(half), G.WithName("keep"))
		zo, zp, err := splitHalves(z, half)
		if err != nil {
			return nil, nil, err
		}
		lo, err := G.LogSoftMax(zo)
		if err != nil {
			return nil, nil, err
		}
		lp, err := G.LogSoftMax(zp)
		if err != nil {
			return nil, nil, err
		}
		po := G.Must(G.Exp(lo))
		pp := G.Must(G.Exp(lp))
		d := G.Must(G.Sub(pp, po))
		eps := G.Must(G.Rectify(G.Must(G.Sum(G.Must(G.HadamardProd(s, d)), 1))))
		// Clamped pairs get ε = 0 here (1−k adds nothing) and the constant
		// 100 outside the graph.
		one := G.NewConstant(1.0)
		oneMinus := G.Must(G.Sub(one, G.Must(G.HadamardProd(k, eps))))
		nll := G.Must(G.Neg(G.Must(G.Log(oneMinus))))
		return G.Must(G.Mean(nll)), []*G.Node{s, k}, nil
	})
}

// DIREps is ε of one DIR pair — how far the perturbed prediction moved the
// wrong way — from the logits of the original and the perturbation.
// BeLUGA's validation counts a pair as passing when ε ≤ 0.1.
func DIREps(orig, pert []float32, d Direction) (float64, error) {
	if len(orig) != len(pert) || len(orig) < 2 {
		return 0, fmt.Errorf("DIR pair of %d and %d logits", len(orig), len(pert))
	}
	sel, _, _, err := dirSelection(append(append([]float32{}, orig...), pert...), len(orig), []Direction{d})
	if err != nil {
		return 0, err
	}
	po, pp := softmax64(orig), softmax64(pert)
	diff := 0.0
	for c := range sel {
		diff += sel[c] * (pp[c] - po[c])
	}
	return math.Max(0, diff), nil
}
