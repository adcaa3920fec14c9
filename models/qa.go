package models

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// SpanArchitecture is the HuggingFace class whose checkpoints SpanBERT reads
// and writes.
const SpanArchitecture = "BertForQuestionAnswering"

// SpanBERT is HuggingFace's BertForQuestionAnswering: the BERT encoder
// without a pooler and a linear layer qa_outputs (hidden → 2) on every
// token's final hidden state, giving a start and an end logit per token. No
// dropout sits between the encoder and qa_outputs, as in HuggingFace.
//
// It implements Classifier with one difference in the logits' layout: a
// row's logits are its SeqLen start logits followed by its SeqLen end
// logits, so Pass.Logits has Size×2×SeqLen values (NumLabels is 2: start and
// end). The losses in package losses (SpanMFT, SpanINV) read that layout.
type SpanBERT struct {
	enc    *BERT
	qaW    *Param // qa_outputs.weight [2, hidden]
	qaB    *Param // qa_outputs.bias [2]
	params []*Param
}

// isHeadOfClassifier is true for the BertForSequenceClassification
// parameters a span model does not have.
func isHeadOfClassifier(name string) bool {
	return strings.HasPrefix(name, "bert.pooler.") || strings.HasPrefix(name, "classifier.")
}

// NewSpanBERT builds a span model from a checkpoint's weights: a
// BertForQuestionAnswering checkpoint loads whole; an encoder-only one (an
// MLM or a sequence classifier) gets a freshly initialised qa_outputs drawn
// from seed, and the report lists it, with the tensors left unused (a pooler,
// an MLM or classification head) under Ignored.
func NewSpanBERT(cfg *checkpoint.Config, weights checkpoint.Tensors, seed uint64) (*SpanBERT, LoadReport, error) {
	enc, encRep, err := NewBERT(cfg, 2, weights, seed)
	if err != nil {
		return nil, LoadReport{}, err
	}
	m := &SpanBERT{enc: enc}
	var rep LoadReport
	for _, name := range encRep.Initialised {
		if !isHeadOfClassifier(name) {
			rep.Initialised = append(rep.Initialised, name)
		}
	}
	for _, name := range encRep.Ignored {
		if !strings.HasPrefix(name, "qa_outputs.") {
			rep.Ignored = append(rep.Ignored, name)
		}
	}
	for _, p := range enc.params {
		if isHeadOfClassifier(p.Name) {
			if _, ok := weights[p.Name]; ok {
				rep.Ignored = append(rep.Ignored, p.Name)
			}
			continue
		}
		m.params = append(m.params, p)
	}
	// A stream of its own, so the head's initial values do not depend on
	// which encoder parameters the checkpoint happened to lack.
	init := newInitStream(seed ^ 0x9a0)
	h := cfg.HiddenSize
	for _, s := range []struct {
		name  string
		shape []int
		p     **Param
	}{{"qa_outputs.weight", []int{2, h}, &m.qaW}, {"qa_outputs.bias", []int{2}, &m.qaB}} {
		p := &Param{Name: s.name, Shape: s.shape, NoDecay: strings.HasSuffix(s.name, ".bias")}
		n := checkpoint.NumElements(s.shape)
		if t, ok := weights[s.name]; ok {
			if !sameShape(t.Shape, s.shape) {
				return nil, rep, fmt.Errorf("checkpoint tensor %s has shape %v, the config needs %v", s.name, t.Shape, s.shape)
			}
			p.Value = append([]float32(nil), t.Data...)
		} else {
			p.Value = make([]float32, n)
			initParam(p, cfg.InitializerRange, init)
			rep.Initialised = append(rep.Initialised, s.name)
		}
		p.Grad = make([]float32, n)
		*s.p = p
		m.params = append(m.params, p)
	}
	return m, rep, nil
}

// LoadSpanBERT reads a model directory (or .tar.gz) into a span model; see
// NewSpanBERT for what it does with an encoder-only checkpoint.
func LoadSpanBERT(path string) (*SpanBERT, LoadReport, error) {
	ck, err := checkpoint.Load(path)
	if err != nil {
		return nil, LoadReport{}, err
	}
	m, rep, err := NewSpanBERT(ck.Config, ck.Weights, 0)
	if err != nil {
		return nil, rep, fmt.Errorf("model %s: %w", path, err)
	}
	return m, rep, nil
}

// Encoder is the underlying encoder (for its dropout settings and config).
func (m *SpanBERT) Encoder() *BERT { return m.enc }

// SetDropout sets the encoder's training-time dropout rates (BeLUGA's
// dropout method); qa_outputs has no dropout of its own.
func (m *SpanBERT) SetDropout(hidden, attention float64) { m.enc.SetDropout(hidden, attention) }

// NumLabels implements Classifier: a start and an end logit per token.
func (m *SpanBERT) NumLabels() int { return 2 }

// Params implements Classifier: the encoder's parameters in HuggingFace's
// order, then qa_outputs.weight and qa_outputs.bias.
func (m *SpanBERT) Params() []*Param { return m.params }

// SetFrozenEncoder implements Classifier: frozen, only qa_outputs learns
// (BeLUGA's linear probing).
func (m *SpanBERT) SetFrozenEncoder(frozen bool) { m.enc.SetFrozenEncoder(frozen) }

// Weights returns the parameters as checkpoint tensors (sharing memory), as
// a BertForQuestionAnswering checkpoint holds them.
func (m *SpanBERT) Weights() checkpoint.Tensors {
	ts := checkpoint.Tensors{}
	for _, p := range m.params {
		ts[p.Name] = &checkpoint.Tensor{Shape: p.Shape, Data: p.Value}
	}
	return ts
}

// Save writes m as a HuggingFace BertForQuestionAnswering directory
// (config.json, model.safetensors, and vocab.txt when vocabFile is set),
// each file atomically and config.json last.
func (m *SpanBERT) Save(dir, vocabFile string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := m.enc.Config
	cfg.NumLabels = 2
	cfg.Architectures = []string{SpanArchitecture}
	cfg.ModelType = "bert"
	cfg.ID2Label = nil
	if err := checkpoint.WriteSafetensors(filepath.Join(dir, "model.safetensors"), m.Weights()); err != nil {
		return err
	}
	if vocabFile != "" {
		if err := copyVocab(vocabFile, filepath.Join(dir, "vocab.txt")); err != nil {
			return err
		}
	}
	return checkpoint.WriteConfig(filepath.Join(dir, "config.json"), &cfg)
}

// copyVocab is BERT.Save's vocabulary copy.
func copyVocab(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("save vocabulary: %w", err)
	}
	return atomicfile.WriteFile(dst, b)
}

// SpanLogits are the start and end logits of one batch, Size×SeqLen each.
type SpanLogits struct {
	Size, SeqLen int
	Start, End   []float32
}

// Row returns row i's start and end logits.
func (s SpanLogits) Row(i int) (start, end []float32) {
	L := s.SeqLen
	return s.Start[i*L : (i+1)*L], s.End[i*L : (i+1)*L]
}

// InferSpans runs the model in evaluation mode on b.
func (m *SpanBERT) InferSpans(b Batch) (SpanLogits, error) {
	p, err := m.forward(b, false)
	if err != nil {
		return SpanLogits{}, err
	}
	defer p.Release()
	L := b.SeqLen
	out := SpanLogits{Size: b.Size, SeqLen: L, Start: make([]float32, b.Size*L), End: make([]float32, b.Size*L)}
	for i := 0; i < b.Size; i++ {
		copy(out.Start[i*L:], p.logits[i*2*L:i*2*L+L])
		copy(out.End[i*L:], p.logits[i*2*L+L:(i+1)*2*L])
	}
	return out, nil
}

// Forward implements Classifier.
func (m *SpanBERT) Forward(b Batch, train bool) (Pass, error) { return m.forward(b, train) }

// spanPass is one forward pass of a SpanBERT.
type spanPass struct {
	m      *SpanBERT
	seq    *SequencePass
	b      Batch
	logits []float32 // Size × [start SeqLen | end SeqLen]
}

func (m *SpanBERT) forward(b Batch, train bool) (*spanPass, error) {
	seq, err := m.enc.ForwardSequence(b, train)
	if err != nil {
		return nil, err
	}
	n, L, h := b.Size*b.SeqLen, b.SeqLen, m.enc.Config.HiddenSize
	y := make([]float32, n*2)
	linearForward(y, seq.Hidden(), m.qaW.Value, m.qaB.Value, n, h, 2)
	logits := make([]float32, n*2)
	for r := 0; r < n; r++ {
		i, j := r/L, r%L
		logits[i*2*L+j] = y[2*r]
		logits[i*2*L+L+j] = y[2*r+1]
	}
	return &spanPass{m: m, seq: seq, b: b, logits: logits}, nil
}

// Logits implements Pass.
func (p *spanPass) Logits() []float32 { return p.logits }

// Release implements Pass.
func (p *spanPass) Release() {
	if p.seq != nil {
		p.seq.Release()
	}
	*p = spanPass{}
}

// Backward implements Pass.
func (p *spanPass) Backward(dLogits []float32) error {
	if len(dLogits) != len(p.logits) {
		return fmt.Errorf("backward: %d logit gradients for %d span logits", len(dLogits), len(p.logits))
	}
	if !p.seq.p.train {
		return fmt.Errorf("backward of an evaluation pass: call Forward with train set")
	}
	m := p.m
	n, L, h := p.b.Size*p.b.SeqLen, p.b.SeqLen, m.enc.Config.HiddenSize
	dy := make([]float32, n*2)
	for r := 0; r < n; r++ {
		i, j := r/L, r%L
		dy[2*r] = dLogits[i*2*L+j]
		dy[2*r+1] = dLogits[i*2*L+L+j]
	}
	var dHidden []float32
	if !m.enc.frozen {
		dHidden = make([]float32, n*h)
	}
	linearBackward(dHidden, m.qaW.Grad, m.qaB.Grad, dy, p.seq.Hidden(), m.qaW.Value, n, h, 2)
	if dHidden == nil {
		return nil
	}
	return p.seq.BackwardHidden(dHidden)
}
