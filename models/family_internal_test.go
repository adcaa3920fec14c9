package models

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// familyFixtures are testdata/families' checkpoints (gen.py).
var familyFixtures = []string{"bert", "electra", "roberta", "xlm-roberta", "distilbert"}

func loadFamilyFixture(t *testing.T, family string) *checkpoint.Checkpoint {
	t.Helper()
	ck, err := checkpoint.LoadDir(filepath.Join("testdata", "families", family))
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

// familyTestBatch is a padded batch with a pair, in ids every fixture has.
func familyTestBatch() Batch {
	return NewBatch([]Encoding{
		{IDs: []int{2, 10, 11, 12, 3}, TypeIDs: []int{0, 0, 0, 0, 0}},
		{IDs: []int{2, 40, 41, 3, 42, 43, 44, 3}, TypeIDs: []int{0, 0, 0, 0, 1, 1, 1, 1}},
		{IDs: []int{2, 90, 3}, TypeIDs: []int{0, 0, 0}},
	})
}

// TestFamiliesGradientDirectional checks every family's backward pass
// (encoder, pooler, head; the span model) against central differences,
// dropout off, and with dropout on: the same masks drawn for every pass
// (SeedDropout), so the difference quotient sees the masked graph.
func TestFamiliesGradientDirectional(t *testing.T) {
	for _, family := range familyFixtures {
		t.Run(family, func(t *testing.T) {
			ck := loadFamilyFixture(t, family)
			cfg := *ck.Config
			cfg.Extra = maps.Clone(cfg.Extra)
			cfg.Extra["seq_classif_dropout"] = json.RawMessage("0")
			m, _, err := NewClassifier(&cfg, 2, ck.Weights, 5)
			if err != nil {
				t.Fatal(err)
			}
			m.SetDropout(0, 0)
			step := rmsStep
			if family == "distilbert" {
				// Its head's ReLU: a step small enough not to cross a kink.
				step = func(orig []float32) float64 { return rmsStep(orig) / 20 }
			}
			checkDirectional(t, m, familyTestBatch(), 21, step)
			cfg.Extra["qa_dropout"] = json.RawMessage("0")
			s, _, err := NewSpanModel(&cfg, ck.Weights, 5)
			if err != nil {
				t.Fatal(err)
			}
			s.SetDropout(0, 0)
			checkDirectional(t, s, familyTestBatch(), 23, rmsStep)

			d, _, _ := NewClassifier(ck.Config, 2, ck.Weights, 5)
			d.SetDropout(0.2, 0.2)
			checkDirectionalSeeded(t, d, familyTestBatch(), 25)
		})
	}
}

// checkDirectionalSeeded is checkDirectional on training passes whose
// dropout masks are the same every time.
func checkDirectionalSeeded(t *testing.T, m *SequenceClassifier, b Batch, seed uint64) {
	t.Helper()
	r := &rng{seed}
	forward := func() Pass {
		m.SeedDropout(99)
		p, err := m.Forward(b, true)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pass := forward()
	weights := randVec(r, len(pass.Logits()))
	dl := make([]float32, len(weights))
	for i, w := range weights {
		dl[i] = float32(w)
	}
	if err := pass.Backward(dl); err != nil {
		t.Fatal(err)
	}
	pass.Release()
	loss := func() float64 {
		p := forward()
		defer p.Release()
		return dot(float64s(p.Logits()), weights)
	}
	for _, p := range m.Params() {
		u := randVec(r, len(p.Value))
		analytic := 0.0
		for i := range u {
			analytic += float64(p.Grad[i]) * u[i]
		}
		orig := append([]float32(nil), p.Value...)
		eps := rmsStep(orig)
		for i := range p.Value {
			p.Value[i] = orig[i] + float32(eps*u[i])
		}
		up := loss()
		for i := range p.Value {
			p.Value[i] = orig[i] - float32(eps*u[i])
		}
		down := loss()
		copy(p.Value, orig)
		if num := (up - down) / (2 * eps); math.Abs(num-analytic) > 2e-3*math.Max(1, math.Abs(num)) {
			t.Errorf("%s (dropout): directional derivative %.6g, backward gives %.6g", p.Name, num, analytic)
		}
	}
}

// TestFamiliesLinearProbing: frozen, only the head learns (RoBERTa's
// classifier.dense too, BERT's pooler not); the head run alone on Infer's
// features gives Infer's logits and, dropout off, a full pass's gradients.
func TestFamiliesLinearProbing(t *testing.T) {
	for _, family := range familyFixtures {
		t.Run(family, func(t *testing.T) {
			ck := loadFamilyFixture(t, family)
			ck.Config.Extra["seq_classif_dropout"] = json.RawMessage("0")
			m, _, err := NewClassifier(ck.Config, 2, ck.Weights, 5)
			if err != nil {
				t.Fatal(err)
			}
			m.SetDropout(0, 0)
			m.SetFrozenEncoder(true)
			b := familyTestBatch()
			dz := []float32{0.3, -0.1, -0.7, 0.2, 1, -2}
			pass, err := m.Forward(b, true)
			if err != nil {
				t.Fatal(err)
			}
			if err := pass.Backward(dz); err != nil {
				t.Fatal(err)
			}
			heads := 0
			full := map[string][]float32{}
			for _, p := range m.Params() {
				nonzero := false
				for _, g := range p.Grad {
					nonzero = nonzero || g != 0
				}
				if p.Encoder != strings.HasPrefix(p.Name, m.Family().Prefix+".") {
					t.Errorf("%s: Encoder %v", p.Name, p.Encoder)
				}
				if p.Encoder == nonzero {
					t.Errorf("%s (encoder %v): gradient nonzero %v", p.Name, p.Encoder, nonzero)
				}
				if !p.Encoder {
					heads++
					full[p.Name] = append([]float32(nil), p.Grad...)
					clear(p.Grad)
				}
			}
			out, err := m.Infer(b)
			if err != nil {
				t.Fatal(err)
			}
			hp, err := m.HeadForward(out.Pooled, b.Size, true)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range hp.Logits() {
				if math.Abs(float64(v-out.Logits[i])) > 1e-6 {
					t.Fatalf("head logits %v, model logits %v", hp.Logits(), out.Logits)
				}
			}
			if err := hp.Backward(dz); err != nil {
				t.Fatal(err)
			}
			for name, want := range full {
				for i, g := range m.Param(name).Grad {
					if math.Abs(float64(g-want[i])) > 1e-6 {
						t.Fatalf("%s: head-alone gradient %v, full pass %v", name, g, want[i])
					}
				}
			}
			if heads == 0 {
				t.Error("no head parameters")
			}
		})
	}
}

// TestFamiliesLoadReport: an encoder-only checkpoint (the head dropped, a
// pretraining head's tensor added) initialises the head — biases zero —
// and ignores the extra tensor, both reported; a span model of a
// classifier checkpoint ignores the classifier's head.
func TestFamiliesLoadReport(t *testing.T) {
	for _, family := range familyFixtures {
		t.Run(family, func(t *testing.T) {
			ck := loadFamilyFixture(t, family)
			f, _ := LookupFamily(ck.Config.ModelType)
			specs, err := f.HeadSpecs(ck.Config, 2)
			if err != nil {
				t.Fatal(err)
			}
			w := checkpoint.Tensors{}
			var head []string
			for k, v := range ck.Weights {
				w[k] = v
			}
			for _, s := range specs {
				delete(w, s.Name)
				head = append(head, s.Name)
			}
			w["discriminator_predictions.dense.weight"] = &checkpoint.Tensor{Shape: []int{1}, Data: []float32{1}}
			m, rep, err := NewClassifier(ck.Config, 2, w, 3)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(rep.Initialised, ",") != strings.Join(head, ",") {
				t.Errorf("initialised %v, want the head %v", rep.Initialised, head)
			}
			if strings.Join(rep.Ignored, ",") != "discriminator_predictions.dense.weight" {
				t.Errorf("ignored %v", rep.Ignored)
			}
			for _, name := range head {
				p := m.Param(name)
				if strings.HasSuffix(name, ".bias") && norm32(p.Value) != 0 {
					t.Errorf("%s initialised to %v, want zeros", name, p.Value)
				}
				if strings.HasSuffix(name, ".weight") && norm32(p.Value) == 0 {
					t.Errorf("%s not drawn", name)
				}
			}
			_, rep, err = NewSpanModel(ck.Config, ck.Weights, 3)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(rep.Initialised, ",") != "qa_outputs.weight,qa_outputs.bias" {
				t.Errorf("span model initialised %v", rep.Initialised)
			}
			for _, name := range head {
				if !strings.Contains(strings.Join(rep.Ignored, ","), name) {
					t.Errorf("span model: %s not reported ignored (%v)", name, rep.Ignored)
				}
			}
		})
	}
}

func norm32(x []float32) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// TestFamiliesSaveLoadRoundTrip: a classifier and a span model saved and
// loaded again are the same, as their family's HF classes, with the
// family's own config keys (DistilBERT's dim, n_layers, …).
func TestFamiliesSaveLoadRoundTrip(t *testing.T) {
	for _, family := range familyFixtures {
		t.Run(family, func(t *testing.T) {
			ck := loadFamilyFixture(t, family)
			m, _, err := NewClassifier(ck.Config, 2, ck.Weights, 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range m.Params() {
				for i := range p.Value {
					p.Value[i] += float32(i%7) * 1e-3
				}
			}
			dir := t.TempDir()
			if err := m.Save(dir, ""); err != nil {
				t.Fatal(err)
			}
			back, rep, err := LoadBERT(dir)
			if family != "bert" {
				if err == nil {
					t.Error("LoadBERT took a " + family)
				}
				var ck2 *checkpoint.Checkpoint
				ck2, err = checkpoint.LoadDir(dir)
				if err == nil {
					back, rep, err = NewClassifier(ck2.Config, ck2.Config.Labels(), ck2.Weights, 0)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Initialised)+len(rep.Ignored) > 0 {
				t.Errorf("reload report %+v", rep)
			}
			b := familyTestBatch()
			x, _ := m.Infer(b)
			y, _ := back.Infer(b)
			for i := range x.Logits {
				if math.Float32bits(x.Logits[i]) != math.Float32bits(y.Logits[i]) {
					t.Fatalf("logit %d changed by saving and loading", i)
				}
			}
			raw, _ := os.ReadFile(filepath.Join(dir, "config.json"))
			var keys map[string]json.RawMessage
			json.Unmarshal(raw, &keys)
			if string(keys["model_type"]) != `"`+family+`"` || !strings.Contains(string(keys["architectures"]), m.Family().Classifier) {
				t.Errorf("config model_type %s architectures %s", keys["model_type"], keys["architectures"])
			}
			if family == "distilbert" {
				for _, k := range []string{"dim", "hidden_dim", "n_layers", "n_heads", "dropout", "attention_dropout", "activation"} {
					if _, ok := keys[k]; !ok {
						t.Errorf("saved DistilBERT config lacks %q", k)
					}
				}
				for _, k := range []string{"hidden_size", "num_hidden_layers", "type_vocab_size", "hidden_act"} {
					if _, ok := keys[k]; ok {
						t.Errorf("saved DistilBERT config has BERT's %q", k)
					}
				}
			}
			s, _, err := NewSpanModel(ck.Config, ck.Weights, 3)
			if err != nil {
				t.Fatal(err)
			}
			sdir := t.TempDir()
			if err := s.Save(sdir, ""); err != nil {
				t.Fatal(err)
			}
			ck3, err := checkpoint.LoadDir(sdir)
			if err != nil {
				t.Fatal(err)
			}
			if a := ck3.Config.Architectures; len(a) != 1 || a[0] != m.Family().Span {
				t.Errorf("span architectures %v, want %s", a, m.Family().Span)
			}
			if _, rep, err := NewSpanModel(ck3.Config, ck3.Weights, 0); err != nil || len(rep.Initialised)+len(rep.Ignored) > 0 {
				t.Errorf("span reload: %+v, %v", rep, err)
			}
		})
	}
}

// TestRobertaPositions: positions count a row's non-padding tokens from
// padding_idx+1, padding (by mask or by the pad id) gets padding_idx, and
// a row longer than the table allows is refused.
func TestRobertaPositions(t *testing.T) {
	ck := loadFamilyFixture(t, "roberta")
	enc, err := newRobertaEncoder(ck.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := enc.(*bertEncoder)
	b := NewBatch([]Encoding{{IDs: []int{0, 7, 1, 8, 2}, TypeIDs: make([]int, 5)}, {IDs: []int{0, 9, 2}, TypeIDs: make([]int, 3)}})
	pos, err := e.positionIDs(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{2, 3, 1, 4, 5, 2, 3, 4, 1, 1}
	for i := range want {
		if pos[i] != want[i] {
			t.Fatalf("positions %v, want %v", pos, want)
		}
	}
	long := make([]int, ck.Config.MaxPositionEmbeddings-1)
	if _, err := e.positionIDs(NewBatch([]Encoding{{IDs: long, TypeIDs: long}})); err == nil || !strings.Contains(err.Error(), "max_position_embeddings") {
		t.Errorf("a row of %d tokens: %v, want the position table's limit", len(long), err)
	}
}
