package models

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// BERT is HuggingFace's BertForSequenceClassification: embeddings (word +
// position + token type, LayerNorm), N transformer layers (multi-head
// self-attention with the padding mask, residual + LayerNorm, a feed-forward
// block with the exact erf GELU, residual + LayerNorm), a tanh pooler on the
// [CLS] state, and a linear classifier. Its parameters carry HuggingFace's
// names and shapes (a Linear weight is [out, in]).
type BERT struct {
	Config    checkpoint.Config
	NumLabels int
	params    []*Param
	byName    map[string]*Param
}

// bertParamShapes lists every parameter of a BertForSequenceClassification
// in HuggingFace's order.
func bertParamShapes(c *checkpoint.Config, labels int) []struct {
	name  string
	shape []int
} {
	type ps = struct {
		name  string
		shape []int
	}
	h, f := c.HiddenSize, c.IntermediateSize
	out := []ps{
		{"bert.embeddings.word_embeddings.weight", []int{c.VocabSize, h}},
		{"bert.embeddings.position_embeddings.weight", []int{c.MaxPositionEmbeddings, h}},
		{"bert.embeddings.token_type_embeddings.weight", []int{c.TypeVocabSize, h}},
		{"bert.embeddings.LayerNorm.weight", []int{h}},
		{"bert.embeddings.LayerNorm.bias", []int{h}},
	}
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf("bert.encoder.layer.%d.", l)
		out = append(out,
			ps{p + "attention.self.query.weight", []int{h, h}}, ps{p + "attention.self.query.bias", []int{h}},
			ps{p + "attention.self.key.weight", []int{h, h}}, ps{p + "attention.self.key.bias", []int{h}},
			ps{p + "attention.self.value.weight", []int{h, h}}, ps{p + "attention.self.value.bias", []int{h}},
			ps{p + "attention.output.dense.weight", []int{h, h}}, ps{p + "attention.output.dense.bias", []int{h}},
			ps{p + "attention.output.LayerNorm.weight", []int{h}}, ps{p + "attention.output.LayerNorm.bias", []int{h}},
			ps{p + "intermediate.dense.weight", []int{f, h}}, ps{p + "intermediate.dense.bias", []int{f}},
			ps{p + "output.dense.weight", []int{h, f}}, ps{p + "output.dense.bias", []int{h}},
			ps{p + "output.LayerNorm.weight", []int{h}}, ps{p + "output.LayerNorm.bias", []int{h}},
		)
	}
	return append(out,
		ps{"bert.pooler.dense.weight", []int{h, h}}, ps{"bert.pooler.dense.bias", []int{h}},
		ps{"classifier.weight", []int{labels, h}}, ps{"classifier.bias", []int{labels}},
	)
}

// LoadReport says how a checkpoint's tensors met the model's parameters, as
// HuggingFace reports it when loading a checkpoint into another head.
type LoadReport struct {
	Ignored     []string // checkpoint tensors the model has no use for
	Initialised []string // model parameters the checkpoint lacks, initialised afresh
}

// NewBERT builds a classifier with labels outputs from a checkpoint's
// weights. Parameters the checkpoint lacks (a pooler or classifier missing
// from an MLM checkpoint) are initialised from seed as HuggingFace does;
// tensors the model does not use are ignored; both are reported. A tensor
// whose shape disagrees with the config is an error naming both shapes.
func NewBERT(cfg *checkpoint.Config, labels int, weights checkpoint.Tensors, seed uint64) (*BERT, LoadReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, LoadReport{}, err
	}
	m := &BERT{Config: *cfg, NumLabels: labels, byName: map[string]*Param{}}
	init := newInitStream(seed)
	var rep LoadReport
	used := map[string]bool{}
	for _, s := range bertParamShapes(cfg, labels) {
		p := &Param{Name: s.name, Shape: s.shape, Encoder: !strings.HasPrefix(s.name, "classifier."),
			NoDecay: strings.HasSuffix(s.name, ".bias") || strings.Contains(s.name, "LayerNorm")}
		n := checkpoint.NumElements(s.shape)
		if t, ok := weights[s.name]; ok {
			if !sameShape(t.Shape, s.shape) {
				return nil, rep, fmt.Errorf("checkpoint tensor %s has shape %v, the config needs %v", s.name, t.Shape, s.shape)
			}
			p.Value = append([]float32(nil), t.Data...)
			used[s.name] = true
		} else {
			p.Value = make([]float32, n)
			initParam(p, cfg.InitializerRange, init)
			rep.Initialised = append(rep.Initialised, s.name)
		}
		p.Grad = make([]float32, n)
		m.params = append(m.params, p)
		m.byName[s.name] = p
	}
	for _, name := range weights.Names() {
		if !used[name] {
			rep.Ignored = append(rep.Ignored, name)
		}
	}
	return m, rep, nil
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// initParam is HuggingFace's BertPreTrainedModel._init_weights: normal(0,
// initializer_range) for weights and embeddings, zeros for biases, ones for
// LayerNorm weights.
func initParam(p *Param, std float64, s *initStream) {
	switch {
	case strings.Contains(p.Name, "LayerNorm.weight"):
		for i := range p.Value {
			p.Value[i] = 1
		}
	case strings.HasSuffix(p.Name, ".bias"):
		for i := range p.Value {
			p.Value[i] = 0
		}
	default:
		for i := range p.Value {
			p.Value[i] = float32(std * s.normal())
		}
	}
}

// initStream is a small seeded source of normal deviates (SplitMix64 +
// Box-Muller), so initialisation does not depend on math/rand's algorithm.
type initStream struct {
	state uint64
	spare float64
	has   bool
}

func newInitStream(seed uint64) *initStream { return &initStream{state: seed} }

func (s *initStream) uint64() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *initStream) normal() float64 {
	if s.has {
		s.has = false
		return s.spare
	}
	u1 := (float64(s.uint64()>>11) + 0.5) / (1 << 53)
	u2 := float64(s.uint64()>>11) / (1 << 53)
	r := math.Sqrt(-2 * math.Log(u1))
	s.spare, s.has = r*math.Sin(2*math.Pi*u2), true
	return r * math.Cos(2*math.Pi*u2)
}

// Params lists the parameters in HuggingFace's order.
func (m *BERT) Params() []*Param { return m.params }

// Param returns the parameter called name, or nil.
func (m *BERT) Param(name string) *Param { return m.byName[name] }

// Weights returns the parameters as checkpoint tensors (sharing memory).
func (m *BERT) Weights() checkpoint.Tensors {
	ts := checkpoint.Tensors{}
	for _, p := range m.params {
		ts[p.Name] = &checkpoint.Tensor{Shape: p.Shape, Data: p.Value}
	}
	return ts
}

// Output is the result of an inference pass.
type Output struct {
	Logits    []float32 // Size × NumLabels
	CLSHidden []float32 // Size × hidden: the final layer's [CLS] states
}

// Infer runs the model in evaluation mode (no dropout) on b.
func (m *BERT) Infer(b Batch) (Output, error) {
	c := &m.Config
	h := c.HiddenSize
	if b.SeqLen > c.MaxPositionEmbeddings {
		return Output{}, fmt.Errorf("sequence of %d tokens exceeds max_position_embeddings %d", b.SeqLen, c.MaxPositionEmbeddings)
	}
	n := b.Size * b.SeqLen
	x := make([]float32, n*h)
	word, pos, typ := m.byName["bert.embeddings.word_embeddings.weight"].Value,
		m.byName["bert.embeddings.position_embeddings.weight"].Value,
		m.byName["bert.embeddings.token_type_embeddings.weight"].Value
	for r := 0; r < n; r++ {
		id, t, j := b.IDs[r], b.Types[r], r%b.SeqLen
		if id < 0 || id >= c.VocabSize {
			return Output{}, fmt.Errorf("token id %d outside the vocabulary of %d", id, c.VocabSize)
		}
		if t < 0 || t >= c.TypeVocabSize {
			return Output{}, fmt.Errorf("token type %d outside the %d types", t, c.TypeVocabSize)
		}
		row := x[r*h : (r+1)*h]
		for k := range row {
			row[k] = word[id*h+k] + pos[j*h+k] + typ[t*h+k]
		}
	}
	eps := float32(c.LayerNormEps)
	layerNorm(x, h, m.byName["bert.embeddings.LayerNorm.weight"].Value, m.byName["bert.embeddings.LayerNorm.bias"].Value, eps)
	for l := 0; l < c.NumHiddenLayers; l++ {
		x = m.layer(l, x, b)
	}
	cls := make([]float32, b.Size*h)
	for i := 0; i < b.Size; i++ {
		copy(cls[i*h:(i+1)*h], x[i*b.SeqLen*h:])
	}
	pooled := linear(cls, b.Size, m.byName["bert.pooler.dense.weight"], m.byName["bert.pooler.dense.bias"])
	for i, v := range pooled {
		pooled[i] = float32(math.Tanh(float64(v)))
	}
	logits := linear(pooled, b.Size, m.byName["classifier.weight"], m.byName["classifier.bias"])
	return Output{Logits: logits, CLSHidden: cls}, nil
}

func (m *BERT) layer(l int, x []float32, b Batch) []float32 {
	c := &m.Config
	h, heads := c.HiddenSize, c.NumAttentionHeads
	d := h / heads
	n := b.Size * b.SeqLen
	p := func(s string) *Param { return m.byName[fmt.Sprintf("bert.encoder.layer.%d.%s", l, s)] }
	q := linear(x, n, p("attention.self.query.weight"), p("attention.self.query.bias"))
	k := linear(x, n, p("attention.self.key.weight"), p("attention.self.key.bias"))
	v := linear(x, n, p("attention.self.value.weight"), p("attention.self.value.bias"))
	ctx := make([]float32, n*h)
	L := b.SeqLen
	scores := make([]float32, L*L)
	scale := float32(1 / math.Sqrt(float64(d)))
	// HuggingFace adds the float32 minimum to the scores of padding keys.
	const maskAdd = -math.MaxFloat32
	for bi := 0; bi < b.Size; bi++ {
		for hd := 0; hd < heads; hd++ {
			qm := blas32.General{Rows: L, Cols: d, Stride: h, Data: q[bi*L*h+hd*d:]}
			km := blas32.General{Rows: L, Cols: d, Stride: h, Data: k[bi*L*h+hd*d:]}
			vm := blas32.General{Rows: L, Cols: d, Stride: h, Data: v[bi*L*h+hd*d:]}
			sm := blas32.General{Rows: L, Cols: L, Stride: L, Data: scores}
			blas32.Gemm(blas.NoTrans, blas.Trans, scale, qm, km, 0, sm)
			for i := 0; i < L; i++ {
				row := scores[i*L : (i+1)*L]
				for j := range row {
					if b.Mask[bi*L+j] == 0 {
						row[j] += maskAdd
					}
				}
				softmaxInPlace(row)
			}
			cm := blas32.General{Rows: L, Cols: d, Stride: h, Data: ctx[bi*L*h+hd*d:]}
			blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, sm, vm, 0, cm)
		}
	}
	attn := linear(ctx, n, p("attention.output.dense.weight"), p("attention.output.dense.bias"))
	for i := range attn {
		attn[i] += x[i]
	}
	eps := float32(c.LayerNormEps)
	layerNorm(attn, h, p("attention.output.LayerNorm.weight").Value, p("attention.output.LayerNorm.bias").Value, eps)
	inter := linear(attn, n, p("intermediate.dense.weight"), p("intermediate.dense.bias"))
	for i, v := range inter {
		inter[i] = gelu(v)
	}
	out := linear(inter, n, p("output.dense.weight"), p("output.dense.bias"))
	for i := range out {
		out[i] += attn[i]
	}
	layerNorm(out, h, p("output.LayerNorm.weight").Value, p("output.LayerNorm.bias").Value, eps)
	return out
}

// linear returns x·Wᵀ + b for n rows of x, W of shape [out, in].
func linear(x []float32, n int, w, bias *Param) []float32 {
	out, in := w.Shape[0], w.Shape[1]
	y := make([]float32, n*out)
	for r := 0; r < n; r++ {
		copy(y[r*out:(r+1)*out], bias.Value)
	}
	blas32.Gemm(blas.NoTrans, blas.Trans, 1,
		blas32.General{Rows: n, Cols: in, Stride: in, Data: x},
		blas32.General{Rows: out, Cols: in, Stride: in, Data: w.Value},
		1, blas32.General{Rows: n, Cols: out, Stride: out, Data: y})
	return y
}

// layerNorm normalises each row of width h of x in place: (x−μ)/√(σ²+eps)·γ+β,
// with the biased variance, accumulating in float64.
func layerNorm(x []float32, h int, gamma, beta []float32, eps float32) {
	for r := 0; r+h <= len(x); r += h {
		row := x[r : r+h]
		var mean float64
		for _, v := range row {
			mean += float64(v)
		}
		mean /= float64(h)
		var variance float64
		for _, v := range row {
			d := float64(v) - mean
			variance += d * d
		}
		variance /= float64(h)
		inv := 1 / math.Sqrt(variance+float64(eps))
		for k, v := range row {
			row[k] = float32((float64(v)-mean)*inv)*gamma[k] + beta[k]
		}
	}
}

// gelu is the exact GELU: x·Φ(x) = ½x(1 + erf(x/√2)).
func gelu(x float32) float32 {
	return float32(0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2)))
}

func softmaxInPlace(row []float32) {
	mx := row[0]
	for _, v := range row {
		if v > mx {
			mx = v
		}
	}
	var sum float64
	for i, v := range row {
		e := math.Exp(float64(v - mx))
		row[i] = float32(e)
		sum += e
	}
	for i := range row {
		row[i] = float32(float64(row[i]) / sum)
	}
}
