package models

import (
	"encoding/json"
	"github.com/beluga-nlp/beluga/models/backend"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// modernFixtureDir is the tiny ModernBERT checkpoint written by
// testdata/modernbert/generate.py from HuggingFace's eager forward.
var modernFixtureDir = filepath.Join("testdata", "modernbert", "tiny")

// modernGradSummary is a gradient as the fixture keeps it: every norm, the
// small tensors whole, a sample of each matrix.
type modernGradSummary struct {
	Norms  map[string]float64   `json:"norms"`
	Full   map[string][]float64 `json:"full"`
	Sample map[string]struct {
		Index []int     `json:"index"`
		Value []float64 `json:"value"`
	} `json:"sample"`
}

type modernExpected struct {
	Texts      [][]int     `json:"texts"`
	LogitsCLS  [][]float64 `json:"logits_cls"`
	LogitsMean [][]float64 `json:"logits_mean"`
	QAStart    [][]float64 `json:"qa_start"`
	QAEnd      [][]float64 `json:"qa_end"`
	QALoss     struct {
		Texts  [][]int           `json:"texts"`
		Starts []int             `json:"starts"`
		Ends   []int             `json:"ends"`
		Loss   float64           `json:"loss"`
		Grad   modernGradSummary `json:"grad"`
	} `json:"qa_loss"`
}

func loadModernExpected(t *testing.T) *modernExpected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(modernFixtureDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e modernExpected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return &e
}

// loadModernFixture reads the fixture's config and the weights file named.
func loadModernFixture(t *testing.T, weightsFile string) (*checkpoint.Config, checkpoint.Tensors) {
	t.Helper()
	cfg, err := checkpoint.ReadConfig(filepath.Join(modernFixtureDir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(modernFixtureDir, weightsFile)
	st, err := checkpoint.ReadWeights(path)
	if err != nil {
		t.Fatal(err)
	}
	w := st.Weights
	return cfg, w
}

func modernMaxDiff(got []float32, want [][]float64) float64 {
	var d float64
	k := 0
	for _, row := range want {
		for _, v := range row {
			d = math.Max(d, math.Abs(float64(got[k])-v))
			k++
		}
	}
	return d
}

// TestModernBERTFixtureLogits compares the sequence classifier's logits
// (both poolings) and the span head's start and end logits at every
// position, padding included, with HuggingFace's eager forward, from both
// weight formats.
func TestModernBERTFixtureLogits(t *testing.T) {
	exp := loadModernExpected(t)
	b := idsBatch(exp.Texts)
	for _, file := range []string{"model.safetensors", "pytorch_model.bin"} {
		cfg, w := loadModernFixture(t, file)
		for _, pooling := range []string{"cls", "mean"} {
			cfg.Extra["classifier_pooling"] = json.RawMessage(`"` + pooling + `"`)
			m, rep, err := NewClassifier(cfg, 2, w, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Initialised)+len(rep.Ignored) != 0 {
				t.Fatalf("%s: load report %+v, want every tensor used", file, rep)
			}
			out, err := m.Infer(b)
			if err != nil {
				t.Fatal(err)
			}
			want := exp.LogitsCLS
			if pooling == "mean" {
				want = exp.LogitsMean
			}
			d := modernMaxDiff(out.Logits, want)
			if d > 1e-4 {
				t.Errorf("%s, %s pooling: logits differ by %.2g", file, pooling, d)
			}
			t.Logf("%s, %s pooling: %d logits, largest difference %.2g", file, pooling, len(out.Logits), d)
		}
		s, rep, err := NewSpanModel(cfg, w, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Initialised)+len(rep.Ignored) != 0 {
			t.Fatalf("%s: span model's load report %+v, want every tensor used", file, rep)
		}
		pass, err := s.Forward(b, false)
		if err != nil {
			t.Fatal(err)
		}
		out := Output{Logits: append([]float32(nil), pass.Logits()...)}
		pass.Release()
		var want [][]float64
		for i := range exp.QAStart {
			want = append(want, exp.QAStart[i], exp.QAEnd[i])
		}
		d := modernMaxDiff(out.Logits, want)
		if d > 1e-4 {
			t.Errorf("%s: span logits differ by %.2g", file, d)
		}
		t.Logf("%s: %d span logits, largest difference %.2g", file, len(out.Logits), d)
	}
}

// checkModernGrads compares a model's gradients with a fixture's summary
// within rel (relative to each tensor's norm). Norms below 1e-7 are rounding
// noise in both (the span classifier's bias gets none: a softmax does not
// move when every logit does).
func checkModernGrads(t *testing.T, m Classifier, want modernGradSummary, rel float64) {
	t.Helper()
	const noise = 1e-7
	worst := 0.0
	for _, p := range m.Params() {
		wn, ok := want.Norms[p.Name]
		if !ok {
			t.Errorf("%s: no expected gradient", p.Name)
			continue
		}
		var sq float64
		for _, g := range p.Grad {
			sq += float64(g) * float64(g)
		}
		got := math.Sqrt(sq)
		if math.Abs(got-wn) > rel*wn+noise {
			t.Errorf("%s: gradient norm %.8g, want %.8g", p.Name, got, wn)
		}
		if wn > noise {
			worst = math.Max(worst, math.Abs(got-wn)/wn)
		}
		if full, ok := want.Full[p.Name]; ok {
			var d2 float64
			for i, v := range full {
				d := float64(p.Grad[i]) - v
				d2 += d * d
			}
			if math.Sqrt(d2) > rel*wn+noise {
				t.Errorf("%s: gradient off by %.3g relative", p.Name, math.Sqrt(d2)/wn)
			}
		}
		if s, ok := want.Sample[p.Name]; ok {
			var d2, n2 float64
			for i, j := range s.Index {
				d := float64(p.Grad[j]) - s.Value[i]
				d2 += d * d
				n2 += s.Value[i] * s.Value[i]
			}
			if math.Sqrt(d2) > rel*math.Sqrt(n2)+noise {
				t.Errorf("%s: sampled gradient off by %.3g relative", p.Name, math.Sqrt(d2/n2))
			}
		}
	}
	t.Logf("largest relative difference of a gradient norm: %.2g", worst)
}

// TestModernBERTFixtureSpanGradients back-propagates HuggingFace's
// question-answering loss (the mean of the start and end cross-entropies
// over every position) and compares the loss and every gradient.
func TestModernBERTFixtureSpanGradients(t *testing.T) {
	exp := loadModernExpected(t)
	cfg, w := loadModernFixture(t, "model.safetensors")
	m, _, err := NewSpanModel(cfg, w, 0)
	if err != nil {
		t.Fatal(err)
	}
	ql := exp.QALoss
	b := idsBatch(ql.Texts)
	pass, err := m.Forward(b, true)
	if err != nil {
		t.Fatal(err)
	}
	z, L := pass.Logits(), b.SeqLen
	dz := make([]float32, len(z))
	var loss float64
	for i := 0; i < b.Size; i++ {
		for k, gold := range []int{ql.Starts[i], ql.Ends[i]} {
			row := z[(2*i+k)*L : (2*i+k+1)*L]
			p := make([]float64, L)
			for j, v := range row {
				p[j] = float64(v)
			}
			SoftmaxInPlace(backend.Reference(), p)
			loss -= math.Log(p[gold]) / float64(2*b.Size)
			for j := range p {
				g := p[j]
				if j == gold {
					g--
				}
				dz[(2*i+k)*L+j] = float32(g / float64(2*b.Size))
			}
		}
	}
	if math.Abs(loss-ql.Loss) > 1e-5*ql.Loss {
		t.Errorf("loss %.8g, want %.8g", loss, ql.Loss)
	}
	if err := pass.Backward(dz); err != nil {
		t.Fatal(err)
	}
	checkModernGrads(t, m, ql.Grad, 1e-5)
}

// BenchmarkModernBERTStep times a training step's forward and backward
// passes of TinyModernBERTConfig on a batch of 32 × 64 tokens.
func BenchmarkModernBERTStep(b *testing.B) {
	m, _, err := NewClassifier(TinyModernBERTConfig(50368), 2, nil, 1)
	if err != nil {
		b.Fatal(err)
	}
	texts := make([][]int, 32)
	for i := range texts {
		texts[i] = make([]int, 64)
		for j := range texts[i] {
			texts[i][j] = 1000 + (i*131+j*17)%29000
		}
	}
	batch := idsBatch(texts)
	dz := make([]float32, 32*2)
	for i := range dz {
		dz[i] = 0.01
	}
	b.ResetTimer()
	for b.Loop() {
		pass, err := m.Forward(batch, true)
		if err != nil {
			b.Fatal(err)
		}
		if err := pass.Backward(dz); err != nil {
			b.Fatal(err)
		}
		pass.Release()
	}
}

// TestModernBERTFromMLMCheckpoint loads a ModernBertForMaskedLM state dict
// (the hub's checkpoints): its prediction head is the classifier's, as in
// HuggingFace; the classifier is initialised and the decoder ignored, both
// reported.
func TestModernBERTFromMLMCheckpoint(t *testing.T) {
	cfg, w := loadModernFixture(t, "model.safetensors")
	mlm := checkpoint.Tensors{}
	for name, t := range w {
		if name != "classifier.weight" && name != "classifier.bias" {
			mlm[name] = t
		}
	}
	mlm["decoder.bias"] = &checkpoint.Tensor{Shape: []int{cfg.VocabSize}, Data: make([]float32, cfg.VocabSize)}
	for _, span := range []bool{false, true} {
		var rep LoadReport
		var err error
		var head *Param
		if span {
			var m *SpanModel
			m, rep, err = NewSpanModel(cfg, mlm, 1)
			if m != nil {
				head = m.Param("head.dense.weight")
			}
		} else {
			var m *SequenceClassifier
			m, rep, err = NewClassifier(cfg, 3, mlm, 1)
			if m != nil {
				head = m.Param("head.dense.weight")
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Initialised, []string{"classifier.weight", "classifier.bias"}) || !slices.Equal(rep.Ignored, []string{"decoder.bias"}) {
			t.Errorf("span %v: report %+v, want the classifier initialised and decoder.bias ignored", span, rep)
		}
		if !slices.Equal(head.Value, w["head.dense.weight"].Data) {
			t.Errorf("span %v: head.dense not taken from the MLM checkpoint", span)
		}
	}
}

// TestModernBERTInitScales checks the deviations parameters a checkpoint
// lacks are drawn with, as ModernBertPreTrainedModel._init_weights: the
// classifier at hidden^−½, output projections at
// initializer_range/√(2·layers), the rest at initializer_range.
func TestModernBERTInitScales(t *testing.T) {
	cfg := TinyModernBERTConfig(1000)
	m, _, err := NewClassifier(cfg, 2, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := cfg.InitializerRange / math.Sqrt(2*float64(cfg.NumHiddenLayers))
	for _, tc := range []struct {
		name string
		std  float64
	}{
		{"classifier.weight", math.Pow(float64(cfg.HiddenSize), -0.5)},
		{"head.dense.weight", out},
		{"model.layers.1.attn.Wo.weight", out},
		{"model.layers.1.mlp.Wo.weight", out},
		{"model.layers.1.attn.Wqkv.weight", cfg.InitializerRange},
		{"model.embeddings.tok_embeddings.weight", cfg.InitializerRange},
	} {
		var sq float64
		v := m.Param(tc.name).Value
		for _, x := range v {
			sq += float64(x) * float64(x)
		}
		if got := math.Sqrt(sq / float64(len(v))); math.Abs(got-tc.std) > 0.15*tc.std {
			t.Errorf("%s: deviation %.4g, want %.4g", tc.name, got, tc.std)
		}
	}
}

// TestModernBERTConfigNumbers: ModernBERT's own fields read whole numbers
// written with an exponent or a fraction as BERT's keys are, and refuse a
// value of the wrong type naming the field.
func TestModernBERTConfigNumbers(t *testing.T) {
	for _, tc := range []struct {
		extra  string
		window int
		err    string
	}{
		{`1.28e2`, 128, ""},
		{`64.0`, 64, ""},
		{`12.5`, 0, `modernbert config: field "local_attention": number 12.5, want a whole number`},
		{`"wide"`, 0, `modernbert config: field "local_attention": string, want a whole number`},
	} {
		cfg := TinyModernBERTConfig(1000)
		cfg.Extra["local_attention"] = json.RawMessage(tc.extra)
		a, err := ParseModernBERTConfig(cfg)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("local_attention %s: error %v, want %q", tc.extra, err, tc.err)
		case tc.err == "" && (err != nil || a.LocalAttention != tc.window):
			t.Errorf("local_attention %s: %d (%v), want %d", tc.extra, a.LocalAttention, err, tc.window)
		}
	}
}
