// Package stepbench is the training step that benchmarks/gostep and
// benchmarks/floor time: a BERT-shaped classifier (forward, backward,
// gradient clipping, AdamW) on a fixed batch of synthetic token ids, as
// benchmarks/torch_step.py builds its PyTorch peer.
package stepbench

import (
	"fmt"
	"os"
	"strings"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/optim"
	"github.com/beluga-nlp/beluga/train"
)

// Shapes are the model shapes Config knows, smallest first.
var Shapes = []string{"tiny", "mini", "base"}

// Config returns the BERT config of a shape: tiny (2 layers, hidden 128),
// mini (4 layers, hidden 256) or base (12 layers, hidden 768, 12 heads,
// FFN 3072: bert-base-uncased).
func Config(shape string) (*checkpoint.Config, error) {
	switch shape {
	case "tiny":
		return models.TinyConfig(30522), nil
	case "mini":
		return models.MiniConfig(30522), nil
	case "base":
		c := models.TinyConfig(30522)
		c.NumHiddenLayers, c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize = 12, 768, 12, 3072
		return c, nil
	}
	return nil, fmt.Errorf("model shape %q: want one of %s", shape, strings.Join(Shapes, ", "))
}

// Step is one training step's model, batch and optimiser.
type Step struct {
	m    models.Classifier
	b    models.Batch
	loss train.LossFunc
	opt  *optim.AdamW
}

// New builds a two-label classifier of cfg and a batch of batch × seq
// token ids (no padding), as torch_step.py does.
func New(cfg *checkpoint.Config, batch, seq int) (*Step, error) {
	if seq+cfg.PadTokenID+1 > cfg.MaxPositionEmbeddings {
		return nil, fmt.Errorf("sequence %d: longer than the %s position table", seq, cfg.ModelType)
	}
	m, _, err := models.NewClassifier(cfg, 2, nil, 1)
	if err != nil {
		return nil, fmt.Errorf("building the %s classifier: %w", cfg.ModelType, err)
	}
	encs := make([]models.Encoding, batch)
	labels := make([]int, batch)
	for i := range encs {
		ids, types := make([]int, seq), make([]int, seq)
		for j := range ids {
			ids[j] = 1000 + (i*131+j*17)%29000
		}
		encs[i] = models.Encoding{IDs: ids, TypeIDs: types}
		labels[i] = i % 2
	}
	ev := losses.NewEvaluator()
	return &Step{m: m, b: models.NewBatch(encs), opt: optim.NewAdamW(m.Backend(), 0),
		loss: func(z []float32) (float64, []float32, error) { return ev.CE(z, batch, 2, labels) }}, nil
}

// Run takes one optimiser update: forward, backward, clipping at 1, AdamW
// at learning rate 1e-4.
func (s *Step) Run() error {
	_, err := train.Update(s.m, s.b, s.loss, s.opt, 1e-4, 1.0, false)
	return err
}

// PeakRSSMB reads the process's peak resident set size (VmHWM) from /proc.
func PeakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}
