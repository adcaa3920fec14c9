package models

import "fmt"

// HeadForward runs the classification head alone on pooled features (rows ×
// hidden, the pooler's output: Output.Pooled), as Forward does after the
// pooler: dropout when train is set (the hidden rate, from the model's
// dropout stream), then the linear classifier. Its Backward adds into the
// classifier's gradients only. Linear probing trains the head this way on
// features of the frozen encoder computed once.
func (m *BERT) HeadForward(pooled []float32, rows int, train bool) (Pass, error) {
	h := m.Config.HiddenSize
	if rows < 0 || len(pooled) != rows*h {
		return nil, fmt.Errorf("head: %d features for %d rows of width %d", len(pooled), rows, h)
	}
	p := &headPass{m: m, rows: rows, train: train, in: append([]float32(nil), pooled...)}
	if train {
		p.keep = m.keepMask(func(n int) []float32 { return make([]float32, n) }, len(p.in), m.HiddenDropout)
		applyKeep(p.in, p.keep)
	}
	cw, cb := m.byName["classifier.weight"], m.byName["classifier.bias"]
	p.logits = make([]float32, rows*m.numLabels)
	linearForward(p.logits, p.in, cw.Value, cb.Value, rows, h, m.numLabels)
	return p, nil
}

// headPass is a pass of the classification head alone.
type headPass struct {
	m        *BERT
	rows     int
	train    bool
	in, keep []float32 // features after dropout, dropout multipliers
	logits   []float32
}

func (p *headPass) Logits() []float32 { return p.logits }

func (p *headPass) Release() { *p = headPass{} }

// Backward adds d(loss)/d(classifier weights) into their gradients.
func (p *headPass) Backward(dLogits []float32) error {
	if !p.train {
		return fmt.Errorf("backward of an evaluation pass: call HeadForward with train set")
	}
	if len(dLogits) != len(p.logits) {
		return fmt.Errorf("backward: %d logit gradients for %d logits", len(dLogits), len(p.logits))
	}
	cw, cb := p.m.byName["classifier.weight"], p.m.byName["classifier.bias"]
	linearBackward(nil, cw.Grad, cb.Grad, dLogits, p.in, cw.Value, p.rows, p.m.Config.HiddenSize, p.m.numLabels)
	return nil
}
