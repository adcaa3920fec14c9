package models

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

var _ Classifier = (*SpanBERT)(nil)

func loadFixtureSpan(t *testing.T) *SpanBERT {
	t.Helper()
	m, _, err := LoadSpanBERT(fixture.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSpanBERTMatchesSequenceOutput recomputes the span logits in float64
// from the encoder's sequence output, whose [CLS] rows must equal
// HuggingFace's final-layer [CLS] states of the fixture.
func TestSpanBERTMatchesSequenceOutput(t *testing.T) {
	m := loadFixtureSpan(t)
	exp := fixture.Load(t)
	var encs []Encoding
	var wantCLS []float64
	for _, x := range exp.Texts {
		if x.CLSLastHidden != nil {
			encs = append(encs, Encoding{IDs: x.InputIDs, TypeIDs: make([]int, len(x.InputIDs))})
			wantCLS = append(wantCLS, x.CLSLastHidden...)
		}
	}
	if len(encs) == 0 {
		t.Fatal("fixture without [CLS] states")
	}
	b := NewBatch(encs)
	r := m.newRun(false)
	defer r.release()
	seq, err := m.enc.Forward(r, b)
	if err != nil {
		t.Fatal(err)
	}
	h, L := m.Config.HiddenSize, b.SeqLen
	hid := seq.Hidden()
	cls := make([]float32, 0, b.Size*h)
	for i := 0; i < b.Size; i++ {
		cls = append(cls, hid[i*L*h:i*L*h+h]...)
	}
	if d := maxAbsDiff(cls, wantCLS); d > 1e-4 {
		t.Errorf("sequence output at [CLS] differs from HuggingFace's by up to %g", d)
	}
	sp, err := m.InferSpans(b)
	if err != nil {
		t.Fatal(err)
	}
	w, bias := m.Param("qa_outputs.weight").Value, m.Param("qa_outputs.bias").Value
	for r := 0; r < b.Size*L; r++ {
		for c, got := range []float32{sp.Start[r], sp.End[r]} {
			want := float64(bias[c])
			for k := 0; k < h; k++ {
				want += float64(w[c*h+k]) * float64(hid[r*h+k])
			}
			if math.Abs(float64(got)-want) > 1e-5 {
				t.Fatalf("token %d logit %d: %v, want %v", r, c, got, want)
			}
		}
	}
}

// TestSpanBERTGradientDirectional checks the span model's backward pass
// (head and encoder) against central differences along random directions.
func TestSpanBERTGradientDirectional(t *testing.T) {
	m := loadFixtureSpan(t)
	m.SetDropout(0, 0)
	checkDirectional(t, m, fixtureBatch(), 11, rmsStep)
}

func TestSpanBERTFrozenEncoder(t *testing.T) {
	m := loadFixtureSpan(t)
	m.SetFrozenEncoder(true)
	b := fixtureBatch()
	pass, err := m.Forward(b, true)
	if err != nil {
		t.Fatal(err)
	}
	dl := make([]float32, len(pass.Logits()))
	for i := range dl {
		dl[i] = float32(i%5) - 2
	}
	if err := pass.Backward(dl); err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() {
		nonzero := false
		for _, g := range p.Grad {
			nonzero = nonzero || g != 0
		}
		if p.Encoder == nonzero {
			t.Errorf("%s (encoder %v): gradient nonzero %v", p.Name, p.Encoder, nonzero)
		}
	}
}

// TestSpanBERTFromEncoderCheckpoints loads checkpoints without a span head:
// an MLM encoder and a sequence classifier.
func TestSpanBERTFromEncoderCheckpoints(t *testing.T) {
	for _, tc := range []struct {
		name, path  string
		ignoredHas  []string
		initialised []string
	}{
		{"mlm", shareddata.Path(t, "fixtures/bert-tiny-mlm.tar.gz"), []string{"cls.predictions."}, []string{"qa_outputs.weight", "qa_outputs.bias"}},
		{"classifier", fixture.Dir(t), []string{"bert.pooler.dense.weight", "classifier.weight", "classifier.bias"}, []string{"qa_outputs.weight", "qa_outputs.bias"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ck, err := checkpoint.Load(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			m, rep, err := NewSpanBERT(ck.Config, ck.Weights, 3)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(rep.Initialised, ",") != strings.Join(tc.initialised, ",") {
				t.Errorf("initialised %v, want %v", rep.Initialised, tc.initialised)
			}
			ignored := strings.Join(rep.Ignored, ",")
			for _, s := range tc.ignoredHas {
				if !strings.Contains(ignored, s) {
					t.Errorf("ignored %v, want %s among them", rep.Ignored, s)
				}
			}
			if strings.Contains(ignored, "qa_outputs") || strings.Contains(strings.Join(rep.Initialised, ","), "pooler") {
				t.Errorf("report %+v mentions the span head as ignored or the pooler as initialised", rep)
			}
			for _, p := range m.Params() {
				if strings.HasPrefix(p.Name, "bert.pooler.") || strings.HasPrefix(p.Name, "classifier.") {
					t.Errorf("span model has the classifier parameter %s", p.Name)
				}
			}
			if b := m.Param("qa_outputs.bias").Value; b[0] != 0 || b[1] != 0 {
				t.Errorf("qa_outputs.bias initialised to %v, want zeros", b)
			}
		})
	}
}

func TestSpanBERTSaveLoadRoundTrip(t *testing.T) {
	dir := fixture.Dir(t)
	m := loadFixtureSpan(t)
	for _, p := range m.Params() {
		for i := range p.Value {
			p.Value[i] += float32(i%5) * 1e-3
		}
	}
	out := t.TempDir()
	if err := m.Save(out, filepath.Join(dir, "vocab.txt")); err != nil {
		t.Fatal(err)
	}
	ck, err := checkpoint.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if a := ck.Config.Architectures; len(a) != 1 || a[0] != SpanArchitecture {
		t.Errorf("architectures %v, want [%s]", a, SpanArchitecture)
	}
	if _, ok := ck.Weights["bert.pooler.dense.weight"]; ok {
		t.Error("saved a pooler, which BertForQuestionAnswering lacks")
	}
	back, rep, err := LoadSpanBERT(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Initialised)+len(rep.Ignored) > 0 {
		t.Errorf("reload report %+v, want nothing ignored or initialised", rep)
	}
	b := fixtureBatch()
	x, _ := m.InferSpans(b)
	y, _ := back.InferSpans(b)
	for i := range x.Start {
		if math.Float32bits(x.Start[i]) != math.Float32bits(y.Start[i]) || math.Float32bits(x.End[i]) != math.Float32bits(y.End[i]) {
			t.Fatalf("token %d: logits changed by saving and loading", i)
		}
	}
}
