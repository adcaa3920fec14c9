package models

// This file is the contract between the models and the packages that train
// and score them. A classifier computes logits for a padded batch of token ids;
// losses are graphs on those logits (package losses) whose gradient with
// respect to the logits is fed back through Pass.Backward. Keeping the loss
// outside the encoder lets one encoder serve every loss, including IRM's
// penalty, which depends on the parameters only through the logits.

import "github.com/beluga-nlp/beluga/models/backend"

// Encoding is one tokenized input.
type Encoding struct {
	IDs     []int // token ids, special tokens included
	TypeIDs []int // token type (segment) ids, same length as IDs
}

// Batch is a padded batch of encodings, stored row-major.
type Batch struct {
	Size   int       // number of rows
	SeqLen int       // padded length of every row
	IDs    []int     // Size*SeqLen token ids, padding = 0
	Types  []int     // Size*SeqLen token type ids
	Mask   []float32 // Size*SeqLen: 1 for a real token, 0 for padding
}

// NewBatch pads encs to the longest of them.
func NewBatch(encs []Encoding) Batch {
	seq := 0
	for _, e := range encs {
		if len(e.IDs) > seq {
			seq = len(e.IDs)
		}
	}
	b := Batch{
		Size:   len(encs),
		SeqLen: seq,
		IDs:    make([]int, len(encs)*seq),
		Types:  make([]int, len(encs)*seq),
		Mask:   make([]float32, len(encs)*seq),
	}
	for i, e := range encs {
		row := i * seq
		copy(b.IDs[row:], e.IDs)
		copy(b.Types[row:], e.TypeIDs)
		for j := range e.IDs {
			b.Mask[row+j] = 1
		}
	}
	return b
}

// Param is one named parameter tensor with its gradient accumulator.
type Param struct {
	Name  string    // HuggingFace-style name, e.g. "bert.encoder.layer.0.output.dense.weight"
	Shape []int     // row-major shape
	Value []float32 // len = product of Shape
	Grad  []float32 // same length; Backward adds into it
	// Encoder is true for parameters of the encoder (everything but the
	// classification head); linear probing freezes exactly these.
	Encoder bool
	// NoDecay is true for biases and LayerNorm weights, which decoupled weight
	// decay leaves alone (as HuggingFace's Trainer does).
	NoDecay bool
}

// Classifier is a text classifier trained by package train.
type Classifier interface {
	// NumLabels is the number of logits per row.
	NumLabels() int
	// Forward computes the logits of b. With train set, dropout is active
	// (drawn from the classifier's own seeded stream) and the returned pass
	// can be back-propagated.
	Forward(b Batch, train bool) (Pass, error)
	// Params lists every parameter in a fixed order.
	Params() []*Param
	// SetFrozenEncoder freezes (or unfreezes) the encoder: Backward then
	// computes no gradient for encoder parameters and leaves them untouched.
	SetFrozenEncoder(frozen bool)
	// Backend is the model's compute context: the backend (kernel path and
	// precision included) its passes run on and its parameters live on,
	// where its optimiser runs too.
	Backend() backend.Backend
}

// Pass is the result of one forward pass.
type Pass interface {
	// Logits returns Size*NumLabels logits, row-major. The slice belongs to
	// the pass and is valid until Release.
	Logits() []float32
	// Backward adds d(loss)/d(params) into each Param.Grad, given
	// dLogits = d(loss)/d(logits) in the layout of Logits.
	Backward(dLogits []float32) error
	// Release returns the pass's buffers for reuse.
	Release()
}
