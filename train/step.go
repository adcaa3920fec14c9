package train

import (
	"fmt"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/optim"
)

// LossFunc computes a loss and its gradient with respect to the logits of
// a batch (package losses provides them).
type LossFunc func(logits []float32) (loss float64, dLogits []float32, err error)

// Accumulate runs the forward pass of b in training mode and the loss, and
// adds the loss's gradient, scaled by scale, to the parameters' gradients.
// It returns the unscaled loss.
func Accumulate(m models.Classifier, b models.Batch, loss LossFunc, scale float32) (float64, error) {
	pass, err := m.Forward(b, true)
	if err != nil {
		return 0, err
	}
	defer pass.Release()
	l, dz, err := loss(pass.Logits())
	if err != nil {
		return l, fmt.Errorf("loss: %w", err)
	}
	if scale != 1 {
		for i := range dz {
			dz[i] *= scale
		}
	}
	return l, pass.Backward(dz)
}

// encoderFrozen is the optimiser's skip rule of a frozen encoder.
func encoderFrozen(p *models.Param) bool { return p.Encoder }

// OptimizerStep clips the gradients' global norm at maxGradNorm (0: no
// clipping), takes an AdamW step with learning rate lr — leaving the
// encoder's weights alone when frozen — and clears the gradients: what
// HuggingFace's Trainer does after every training_step.
func OptimizerStep(params []*models.Param, opt *optim.AdamW, lr, maxGradNorm float64, frozen bool) {
	if maxGradNorm > 0 {
		optim.ClipGradNorm(opt.Backend(), params, maxGradNorm)
	}
	var skip func(*models.Param) bool
	if frozen {
		skip = encoderFrozen
	}
	opt.Step(params, lr, skip)
	optim.ZeroGrad(opt.Backend(), params)
}

// Update is one whole optimiser update on one batch: Accumulate, then
// OptimizerStep. It returns the loss.
func Update(m models.Classifier, b models.Batch, loss LossFunc, opt *optim.AdamW, lr, maxGradNorm float64, frozen bool) (float64, error) {
	l, err := Accumulate(m, b, loss, 1)
	if err != nil {
		optim.ZeroGrad(m.Backend(), m.Params())
		return l, err
	}
	OptimizerStep(m.Params(), opt, lr, maxGradNorm, frozen)
	return l, nil
}
