package models

import "fmt"

// SequencePass is a forward pass of the BERT encoder read at its sequence
// output — the final hidden state of every token, as token-level heads
// (SQuAD's span head) need — rather than at the pooled [CLS] state.
type SequencePass struct{ p *bertPass }

// ForwardSequence runs the encoder on b (with dropout when train is set). The
// pooler and classification head run too but take no part in what the pass
// returns or back-propagates.
func (m *BERT) ForwardSequence(b Batch, train bool) (*SequencePass, error) {
	p, err := m.forward(b, train)
	if err != nil {
		return nil, err
	}
	return &SequencePass{p: p}, nil
}

// Hidden returns the final hidden states, Size×SeqLen×hidden row-major. The
// slice belongs to the pass.
func (s *SequencePass) Hidden() []float32 { return s.p.out }

// Release drops the pass's activations.
func (s *SequencePass) Release() { s.p.Release() }

// BackwardHidden adds d(loss)/d(encoder params) into each Param.Grad, given
// dHidden = d(loss)/d(Hidden()). A frozen encoder gets nothing.
func (s *SequencePass) BackwardHidden(dHidden []float32) error {
	p := s.p
	m := p.m
	if !p.train {
		return fmt.Errorf("backward of an evaluation pass: call ForwardSequence with train set")
	}
	if len(dHidden) != len(p.out) {
		return fmt.Errorf("backward: %d hidden-state gradients for %d hidden states", len(dHidden), len(p.out))
	}
	if m.frozen {
		return nil
	}
	// The pass's backward takes over a pool buffer: copy dHidden into one.
	dx := m.pool.get(len(dHidden))
	copy(dx, dHidden)
	p.encoderBackward(dx)
	return nil
}
