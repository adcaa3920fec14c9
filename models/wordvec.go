package models

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// WordVec is the word-vector classifier: token embeddings (initialised from
// GloVe) pooled by mean and max over the real tokens, then the same head as
// BERT — a tanh pooler layer and a linear classifier:
//
//	f = [mean_t E[x_t], max_t E[x_t]]   (2·dim)
//	logits = W_c · dropout(tanh(W_p f + b_p)) + b_c
//
// The embeddings are its encoder: freezing the encoder freezes the vectors.
type WordVec struct {
	Dim, Hidden, Vocab int
	numLabels          int
	Dropout            float64
	emb, pw, pb        *Param
	cw, cb             *Param
	frozen             bool
	drop               *initStream
	computeCtx         // of the pooler's and classifier's products
}

// Special tokens of word-vector vocabularies, ahead of the GloVe words.
const (
	PadToken = "[PAD]" // id 0
	UnkToken = "[UNK]" // id 1
)

// ReadGloVe reads GloVe's text format (a word and its values per line,
// optionally gzip-compressed) into a vocabulary that starts with [PAD] and
// [UNK] (zero vectors) and a vocabulary × dim embedding matrix.
func ReadGloVe(path string) (words []string, vectors *checkpoint.Tensor, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("glove %s: %w", path, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, nil, fmt.Errorf("glove %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	words = []string{PadToken, UnkToken}
	var data []float32
	dim := 0
	seen := map[string]bool{}
	for line := 1; sc.Scan(); line++ {
		fields := strings.Split(strings.TrimRight(sc.Text(), " \r"), " ")
		if len(fields) < 2 {
			return nil, nil, fmt.Errorf("glove %s line %d: want a word and its values", path, line)
		}
		if dim == 0 {
			dim = len(fields) - 1
			data = make([]float32, 2*dim) // [PAD], [UNK]
		}
		if len(fields)-1 != dim {
			return nil, nil, fmt.Errorf("glove %s line %d: %d values, earlier lines have %d", path, line, len(fields)-1, dim)
		}
		if seen[fields[0]] {
			return nil, nil, fmt.Errorf("glove %s line %d: word %q appears twice", path, line, fields[0])
		}
		seen[fields[0]] = true
		for i, s := range fields[1:] {
			v, err := strconv.ParseFloat(s, 32)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("glove %s line %d value %d: %q is not a number", path, line, i+1, s)
			}
			data = append(data, float32(v))
		}
		words = append(words, fields[0])
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("glove %s: %w", path, err)
	}
	if dim == 0 {
		return nil, nil, fmt.Errorf("glove %s: no vectors", path)
	}
	return words, &checkpoint.Tensor{Shape: []int{len(words), dim}, Data: data}, nil
}

// NewWordVec builds a word-vector classifier over vectors (vocabulary ×
// dim), with a pooler of width hidden and labels outputs, the head
// initialised from seed.
func NewWordVec(vectors *checkpoint.Tensor, hidden, labels int, seed uint64) (*WordVec, error) {
	if len(vectors.Shape) != 2 || vectors.Shape[0] < 2 || vectors.Shape[1] < 1 {
		return nil, fmt.Errorf("word vectors of shape %v: want vocabulary × dimension", vectors.Shape)
	}
	v, d := vectors.Shape[0], vectors.Shape[1]
	if hidden <= 0 || labels <= 0 {
		return nil, fmt.Errorf("a word-vector model needs a positive hidden size and number of labels (got %d, %d)", hidden, labels)
	}
	params := float64(v)*float64(d) + float64(hidden)*(2*float64(d)+1+float64(labels)) + float64(labels)
	if err := checkFits(fmt.Sprintf("the word-vector model's %.3g parameters (hidden_size %d, %d labels)", params, hidden, labels), 8*params); err != nil {
		return nil, err
	}
	m := &WordVec{Dim: d, Hidden: hidden, Vocab: v, numLabels: labels, Dropout: 0.1, drop: newInitStream(seed ^ 0x5eed), computeCtx: newCompute()}
	mk := func(name string, shape []int, encoder, noDecay bool) *Param {
		n := checkpoint.NumElements(shape)
		return &Param{Name: name, Shape: shape, Value: m.be.Alloc(n), Grad: m.be.Alloc(n), Encoder: encoder, NoDecay: noDecay}
	}
	m.emb = mk("wordvec.embeddings.weight", []int{v, d}, true, false)
	copy(m.emb.Value, vectors.Data)
	m.pw, m.pb = mk("pooler.dense.weight", []int{hidden, 2 * d}, false, false), mk("pooler.dense.bias", []int{hidden}, false, true)
	m.cw, m.cb = mk("classifier.weight", []int{labels, hidden}, false, false), mk("classifier.bias", []int{labels}, false, true)
	s := newInitStream(seed)
	for _, p := range []*Param{m.pw, m.cw} {
		for i := range p.Value {
			p.Value[i] = float32(0.02 * s.normal())
		}
	}
	return m, nil
}

// NumLabels implements Classifier.
func (m *WordVec) NumLabels() int { return m.numLabels }

// Params implements Classifier.
func (m *WordVec) Params() []*Param { return []*Param{m.emb, m.pw, m.pb, m.cw, m.cb} }

// SetFrozenEncoder implements Classifier: frozen vectors get no gradient.
func (m *WordVec) SetFrozenEncoder(frozen bool) { m.frozen = frozen }

type wordVecPass struct {
	m                   *WordVec
	b                   Batch
	train               bool
	argmax              []int // per row and dimension, the token of the max
	feat, pooled, poolD []float32
	keep                []float32
	logits              []float32
}

// Forward implements Classifier.
func (m *WordVec) Forward(b Batch, train bool) (Pass, error) {
	d, L := m.Dim, b.SeqLen
	p := &wordVecPass{m: m, b: b, train: train, argmax: make([]int, b.Size*d), feat: make([]float32, b.Size*2*d)}
	for i := 0; i < b.Size; i++ {
		n := 0
		mean, mx := p.feat[i*2*d:i*2*d+d], p.feat[i*2*d+d:(i+1)*2*d]
		for k := range mx {
			mx[k] = float32(math.Inf(-1))
		}
		for t := 0; t < L; t++ {
			if b.Mask[i*L+t] == 0 {
				continue
			}
			id := b.IDs[i*L+t]
			if id < 0 || id >= m.Vocab {
				return nil, fmt.Errorf("token id %d outside the vocabulary of %d", id, m.Vocab)
			}
			n++
			row := m.emb.Value[id*d : (id+1)*d]
			for k, v := range row {
				mean[k] += v
				if v > mx[k] {
					mx[k], p.argmax[i*d+k] = v, id
				}
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("row %d of the batch has no tokens", i)
		}
		for k := range mean {
			mean[k] /= float32(n)
		}
	}
	p.pooled = make([]float32, b.Size*m.Hidden)
	linearForward(m.be, p.pooled, p.feat, m.pw.Value, m.pb.Value, b.Size, 2*d, m.Hidden)
	for i, v := range p.pooled {
		p.pooled[i] = float32(math.Tanh(float64(v)))
	}
	p.poolD = append([]float32(nil), p.pooled...)
	if train && m.Dropout > 0 {
		p.keep = make([]float32, len(p.poolD))
		for i := range p.keep {
			if m.drop.float() >= m.Dropout {
				p.keep[i] = float32(1 / (1 - m.Dropout))
			}
		}
		applyKeep(m.be, p.poolD, p.keep)
	}
	p.logits = make([]float32, b.Size*m.numLabels)
	linearForward(m.be, p.logits, p.poolD, m.cw.Value, m.cb.Value, b.Size, m.Hidden, m.numLabels)
	return p, nil
}

func (p *wordVecPass) Logits() []float32 { return p.logits }
func (p *wordVecPass) Release()          { *p = wordVecPass{} }

// Backward implements Pass.
func (p *wordVecPass) Backward(dLogits []float32) error {
	m, b := p.m, p.b
	if !p.train {
		return fmt.Errorf("backward of an evaluation pass: call Forward with train set")
	}
	if len(dLogits) != len(p.logits) {
		return fmt.Errorf("backward: %d logit gradients for %d logits", len(dLogits), len(p.logits))
	}
	d, L := m.Dim, b.SeqLen
	dPool := make([]float32, b.Size*m.Hidden)
	linearBackward(p.m.be, dPool, m.cw.Grad, m.cb.Grad, dLogits, p.poolD, m.cw.Value, b.Size, m.Hidden, m.numLabels)
	if p.keep != nil {
		applyKeep(p.m.be, dPool, p.keep)
	}
	for i, v := range p.pooled {
		dPool[i] *= 1 - v*v
	}
	dFeat := make([]float32, b.Size*2*d)
	linearBackward(p.m.be, dFeat, m.pw.Grad, m.pb.Grad, dPool, p.feat, m.pw.Value, b.Size, 2*d, m.Hidden)
	if m.frozen {
		return nil
	}
	g := m.emb.Grad
	for i := 0; i < b.Size; i++ {
		n := 0
		for t := 0; t < L; t++ {
			if b.Mask[i*L+t] != 0 {
				n++
			}
		}
		dMean, dMax := dFeat[i*2*d:i*2*d+d], dFeat[i*2*d+d:(i+1)*2*d]
		for t := 0; t < L; t++ {
			if b.Mask[i*L+t] == 0 {
				continue
			}
			id := b.IDs[i*L+t]
			for k := range dMean {
				g[id*d+k] += dMean[k] / float32(n)
			}
		}
		for k := range dMax {
			g[p.argmax[i*d+k]*d+k] += dMax[k]
		}
	}
	return nil
}

// Infer runs the model in evaluation mode.
func (m *WordVec) Infer(b Batch) (Output, error) {
	p, err := m.Forward(b, false)
	if err != nil {
		return Output{}, err
	}
	return Output{Logits: p.Logits()}, nil
}

// WordVecModelType is the config.json model_type of a word-vector model
// beluga saved; its config holds vocab_size, embedding_size (the vectors'
// dimension) and hidden_size (the pooler's width).
const WordVecModelType = "wordvec"

func init() {
	checkpoint.RegisterConfig(WordVecModelType, checkpoint.FamilyConfig{Validate: func(c *checkpoint.Config) error {
		if c.VocabSize < 2 || c.HiddenSize <= 0 || c.EmbeddingSize <= 0 {
			return fmt.Errorf("wordvec config needs vocab_size ≥ 2, hidden_size and embedding_size (got %d, %d, %d)", c.VocabSize, c.HiddenSize, c.EmbeddingSize)
		}
		return nil
	}})
}

// Save writes the model as a directory: config.json (model_type "wordvec"),
// model.safetensors and the vocabulary words (one a line) as vocab.txt.
func (m *WordVec) Save(dir string, words []string) error {
	if len(words) != m.Vocab {
		return fmt.Errorf("save word vectors: %d words for a vocabulary of %d", len(words), m.Vocab)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ts := checkpoint.Tensors{}
	for _, p := range m.Params() {
		ts[p.Name] = &checkpoint.Tensor{Shape: p.Shape, Data: p.Value}
	}
	if err := checkpoint.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "vocab.txt"), []byte(strings.Join(words, "\n")+"\n")); err != nil {
		return err
	}
	cfg := &checkpoint.Config{ModelType: WordVecModelType, VocabSize: m.Vocab, HiddenSize: m.Hidden, EmbeddingSize: m.Dim,
		NumLabels: m.numLabels, HiddenDropoutProb: m.Dropout}
	return checkpoint.WriteConfig(filepath.Join(dir, "config.json"), cfg)
}

// loadWordVec builds a word-vector model from a checkpoint.
func loadWordVec(ck *checkpoint.Checkpoint) (*WordVec, error) {
	c := ck.Config
	emb, ok := ck.Weights["wordvec.embeddings.weight"]
	if !ok {
		return nil, fmt.Errorf("model %s: no wordvec.embeddings.weight", ck.Dir)
	}
	if !sameShape(emb.Shape, []int{c.VocabSize, c.EmbeddingSize}) {
		return nil, fmt.Errorf("checkpoint tensor wordvec.embeddings.weight has shape %v, the config needs %v", emb.Shape, []int{c.VocabSize, c.EmbeddingSize})
	}
	m, err := NewWordVec(emb, c.HiddenSize, c.Labels(), 0)
	if err != nil {
		return nil, err
	}
	m.Dropout = c.HiddenDropoutProb
	for _, p := range m.Params()[1:] {
		t, ok := ck.Weights[p.Name]
		if !ok {
			return nil, fmt.Errorf("model %s: no %s", ck.Dir, p.Name)
		}
		if !sameShape(t.Shape, p.Shape) {
			return nil, fmt.Errorf("checkpoint tensor %s has shape %v, the config needs %v", p.Name, t.Shape, p.Shape)
		}
		copy(p.Value, t.Data)
	}
	return m, nil
}

// SetDropout sets the training-time dropout rate of the pooled features
// (the model has no attention).
func (m *WordVec) SetDropout(hidden, _ float64) { m.Dropout = hidden }
