package train

import (
	"fmt"

	"github.com/beluga-nlp/beluga/models"
)

// LossFunc computes a loss and its gradient with respect to the logits of
// a batch (package losses provides them).
type LossFunc func(logits []float32) (loss float64, dLogits []float32, err error)

// Update is one optimiser update: forward pass in training mode, loss,
// backward pass, gradient clipping at maxGradNorm (0: none), AdamW step with
// learning rate lr, and gradients cleared for the next update. Frozen
// encoders keep their weights.
func Update(m models.Classifier, b models.Batch, loss LossFunc, opt *AdamW, lr, maxGradNorm float64, frozen bool) (float64, error) {
	pass, err := m.Forward(b, true)
	if err != nil {
		return 0, err
	}
	defer pass.Release()
	l, dz, err := loss(pass.Logits())
	if err != nil {
		return l, fmt.Errorf("loss: %w", err)
	}
	if err := pass.Backward(dz); err != nil {
		return l, err
	}
	params := m.Params()
	if maxGradNorm > 0 {
		ClipGradNorm(params, maxGradNorm)
	}
	var skip func(*models.Param) bool
	if frozen {
		skip = func(p *models.Param) bool { return p.Encoder }
	}
	opt.Step(params, lr, skip)
	ZeroGrad(params)
	return l, nil
}
