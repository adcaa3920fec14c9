package models_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// families are the fixture families of testdata/families (gen.py writes
// them: a random tiny checkpoint of each in HuggingFace's layout and what
// HuggingFace's graph computes on it).
var families = []string{"bert", "electra", "roberta", "xlm-roberta", "distilbert"}

type familyInput struct {
	IDs   []int `json:"input_ids"`
	Types []int `json:"token_type_ids"`
}

type familyExpected struct {
	Inputs      []familyInput
	Logits      [][]float64
	FirstHidden [][]float64 `json:"first_hidden"`
	Span        struct {
		QAWeight   []float32 `json:"qa_outputs.weight"`
		QABias     []float32 `json:"qa_outputs.bias"`
		Start, End [][]float64
		Batch      []familyInput
		Grad       struct {
			DStart   []float32          `json:"d_start"`
			DEnd     []float32          `json:"d_end"`
			Norms    map[string]float64 `json:"norms"`
			QAWeight []float64          `json:"qa_outputs.weight"`
		}
	}
	Losses struct {
		MFT struct {
			Texts      []string
			SoftLabels [][]float64 `json:"soft_labels"`
			BCE        float64     `json:"bce_with_logits"`
		}
		INV struct {
			Orig, Pert []string
			Loss       float64
		}
		DIR struct {
			Orig, Pert [][2]*string
			Directions []string
			Loss       float64
		}
		Total float64
		Grad  map[string]json.RawMessage
	}
}

func loadFamily(t *testing.T, family string) (*checkpoint.Checkpoint, *familyExpected) {
	t.Helper()
	dir := filepath.Join("testdata", "families", family)
	ck, err := checkpoint.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp familyExpected
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	return ck, &exp
}

func familyBatch(in []familyInput) models.Batch {
	encs := make([]models.Encoding, len(in))
	for i, x := range in {
		encs[i] = models.Encoding{IDs: x.IDs, TypeIDs: x.Types}
	}
	return models.NewBatch(encs)
}

func maxDiff(got []float32, want []float64) float64 {
	d := 0.0
	if len(got) != len(want) {
		return math.Inf(1)
	}
	for i := range want {
		d = math.Max(d, math.Abs(float64(got[i])-want[i]))
	}
	return d
}

// diffNorms are ‖got − want‖ and ‖want‖.
func diffNorms(got []float32, want []float64) (diff, ref float64) {
	if len(got) != len(want) {
		return math.Inf(1), 0
	}
	for i := range want {
		d := float64(got[i]) - want[i]
		diff += d * d
		ref += want[i] * want[i]
	}
	return math.Sqrt(diff), math.Sqrt(ref)
}

func norm(x []float32) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// TestFamiliesMatchHuggingFace: each family's classifier, loaded from
// model.safetensors and from pytorch_model.bin, gives the reference logits
// and first-token states (1e-4), its span model the reference start and
// end logits, on padded batches with pairs.
func TestFamiliesMatchHuggingFace(t *testing.T) {
	for _, family := range families {
		t.Run(family, func(t *testing.T) {
			ck, exp := loadFamily(t, family)
			pt, err := checkpoint.ReadPyTorch(filepath.Join("testdata", "families", family, "pytorch_model.bin"))
			if err != nil {
				t.Fatal(err)
			}
			worstLogit, worstFirst := 0.0, 0.0
			for _, w := range []checkpoint.Tensors{ck.Weights, pt.Weights} {
				m, rep, err := models.NewClassifier(ck.Config, ck.Config.Labels(), w, 1)
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Ignored)+len(rep.Initialised) > 0 {
					t.Errorf("report %+v, want every tensor used and none initialised", rep)
				}
				b := familyBatch(exp.Inputs)
				out, err := m.Infer(b)
				if err != nil {
					t.Fatal(err)
				}
				var logits, first []float64
				for i := range exp.Logits {
					logits = append(logits, exp.Logits[i]...)
					first = append(first, exp.FirstHidden[i]...)
				}
				dl, df := maxDiff(out.Logits, logits), maxDiff(out.CLSHidden, first)
				if dl > 1e-4 {
					t.Errorf("logits differ from HuggingFace's by up to %.3g", dl)
				}
				if df > 1e-4 {
					t.Errorf("first-token states differ from HuggingFace's by up to %.3g", df)
				}
				worstLogit, worstFirst = math.Max(worstLogit, dl), math.Max(worstFirst, df)
			}
			t.Logf("%d inputs, safetensors and pytorch_model.bin: max |Δlogit| %.2g, max |Δfirst-token state| %.2g",
				len(exp.Inputs), worstLogit, worstFirst)
			sw := checkpoint.Tensors{}
			for k, v := range ck.Weights {
				sw[k] = v
			}
			sw["qa_outputs.weight"] = &checkpoint.Tensor{Shape: []int{2, len(exp.Span.QAWeight) / 2}, Data: exp.Span.QAWeight}
			sw["qa_outputs.bias"] = &checkpoint.Tensor{Shape: []int{2}, Data: exp.Span.QABias}
			sm, rep, err := models.NewSpanModel(ck.Config, sw, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Initialised) > 0 {
				t.Errorf("span model initialised %v", rep.Initialised)
			}
			b := familyBatch(exp.Inputs)
			sp, err := sm.InferSpans(b)
			if err != nil {
				t.Fatal(err)
			}
			worstSpan := 0.0
			for i := range exp.Inputs {
				s, e := sp.Row(i)
				n := len(exp.Inputs[i].IDs)
				d := math.Max(maxDiff(s[:n], exp.Span.Start[i]), maxDiff(e[:n], exp.Span.End[i]))
				if d > 1e-4 {
					t.Errorf("row %d: span logits differ from HuggingFace's by up to %.3g", i, d)
				}
				worstSpan = math.Max(worstSpan, d)
			}
			t.Logf("span logits: max |Δ| %.2g", worstSpan)
		})
	}
}

// wordEncoder encodes space-separated vocabulary words as gen.py does:
// [CLS] a [SEP] (b [SEP], of type 1).
type wordEncoder map[string]int

func newWordEncoder(t *testing.T, family string) wordEncoder {
	b, err := os.ReadFile(filepath.Join("testdata", "families", family, "vocab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	w := wordEncoder{}
	for i, s := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		w[s] = i
	}
	return w
}

func (w wordEncoder) encode(a string, b *string) models.Encoding {
	ids := []int{w["[CLS]"]}
	for _, s := range strings.Fields(a) {
		ids = append(ids, w[s])
	}
	ids = append(ids, w["[SEP]"])
	types := make([]int, len(ids))
	if b != nil {
		for _, s := range strings.Fields(*b) {
			ids, types = append(ids, w[s]), append(types, 1)
		}
		ids, types = append(ids, w["[SEP]"]), append(types, 1)
	}
	return models.Encoding{IDs: ids, TypeIDs: types}
}

// TestFamiliesLossesAndGradients: BeLUGA's MFT, INV and DIR losses through
// each family's classifier, and the gradients of their sum, against
// PyTorch autograd on HuggingFace's graph (1e-5 relative; a loss may also
// be off by 1e-7: DIR's is a difference of probabilities near 1e-3, which
// float32 logits give to a few 1e-8); and the span model's gradients for
// fixed span-logit gradients.
func TestFamiliesLossesAndGradients(t *testing.T) {
	for _, family := range families {
		t.Run(family, func(t *testing.T) {
			ck, exp := loadFamily(t, family)
			// The reference runs without dropout: DistilBERT's head rates,
			// which SetDropout leaves alone, too.
			ck.Config.Extra["seq_classif_dropout"], ck.Config.Extra["qa_dropout"] = json.RawMessage("0"), json.RawMessage("0")
			m, _, err := models.NewClassifier(ck.Config, 2, ck.Weights, 1)
			if err != nil {
				t.Fatal(err)
			}
			m.SetDropout(0, 0)
			w := newWordEncoder(t, family)
			ev := losses.NewEvaluator()
			fl := exp.Losses
			total := 0.0
			step := func(name string, encs []models.Encoding, loss func(z []float32, rows int) (float64, []float32, error), want float64) {
				pass, err := m.Forward(models.NewBatch(encs), true)
				if err != nil {
					t.Fatal(err)
				}
				defer pass.Release()
				l, dz, err := loss(pass.Logits(), len(encs))
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(l-want) > 1e-5*math.Abs(want)+1e-7 {
					t.Errorf("%s loss %.8g, want %.8g", name, l, want)
				}
				t.Logf("%s loss %.8g, reference %.8g: |Δ| %.2g", name, l, want, math.Abs(l-want))
				total += l
				if err := pass.Backward(dz); err != nil {
					t.Fatal(err)
				}
			}
			var encs []models.Encoding
			var targets []float64
			for i, s := range fl.MFT.Texts {
				encs = append(encs, w.encode(s, nil))
				targets = append(targets, fl.MFT.SoftLabels[i]...)
			}
			step("MFT", encs, func(z []float32, rows int) (float64, []float32, error) {
				return ev.MFT(z, rows, 2, targets, losses.SigmoidBCE)
			}, fl.MFT.BCE)
			encs = nil
			for _, s := range append(append([]string{}, fl.INV.Orig...), fl.INV.Pert...) {
				encs = append(encs, w.encode(s, nil))
			}
			step("INV", encs, func(z []float32, rows int) (float64, []float32, error) { return ev.INV(z, rows, 2, false) }, fl.INV.Loss)
			encs = nil
			for _, p := range append(append([][2]*string{}, fl.DIR.Orig...), fl.DIR.Pert...) {
				encs = append(encs, w.encode(*p[0], p[1]))
			}
			dirs := make([]losses.Direction, len(fl.DIR.Directions))
			for i, s := range fl.DIR.Directions {
				if dirs[i], err = losses.ParseDirection(s); err != nil {
					t.Fatal(err)
				}
			}
			step("DIR", encs, func(z []float32, rows int) (float64, []float32, error) { return ev.DIR(z, rows, dirs) }, fl.DIR.Loss)
			if math.Abs(total-fl.Total) > 1e-5*math.Abs(fl.Total) {
				t.Errorf("total %.8g, want %.8g", total, fl.Total)
			}
			checkGrads(t, m.Params(), fl.Grad)

			// The span model: fixed d(loss)/d(span logits) back through
			// qa_outputs and the encoder.
			sw := checkpoint.Tensors{}
			for k, v := range ck.Weights {
				sw[k] = v
			}
			sw["qa_outputs.weight"] = &checkpoint.Tensor{Shape: []int{2, len(exp.Span.QAWeight) / 2}, Data: exp.Span.QAWeight}
			sw["qa_outputs.bias"] = &checkpoint.Tensor{Shape: []int{2}, Data: exp.Span.QABias}
			sm, _, err := models.NewSpanModel(ck.Config, sw, 1)
			if err != nil {
				t.Fatal(err)
			}
			sm.SetDropout(0, 0)
			b := familyBatch(exp.Span.Batch)
			pass, err := sm.Forward(b, true)
			if err != nil {
				t.Fatal(err)
			}
			L := b.SeqLen
			g := exp.Span.Grad
			d := make([]float32, b.Size*2*L)
			for i := 0; i < b.Size; i++ {
				copy(d[i*2*L:], g.DStart[i*L:(i+1)*L])
				copy(d[i*2*L+L:], g.DEnd[i*L:(i+1)*L])
			}
			if err := pass.Backward(d); err != nil {
				t.Fatal(err)
			}
			pass.Release()
			norms, _ := json.Marshal(g.Norms)
			qa, _ := json.Marshal(g.QAWeight)
			checkGrads(t, sm.Params(), map[string]json.RawMessage{"norms": norms, "qa_outputs.weight": qa})
		})
	}
}

// checkGrads compares gradients with the reference's: whole tensors where
// it gives them, norms for every parameter: 1e-5 relative, or within 1e-6
// of the largest gradient's norm — float32 rounding in both frameworks,
// which decides tensors whose gradient is near nothing (the key biases',
// which softmax's shift invariance leaves without gradient; the query
// biases').
func checkGrads(t *testing.T, params []*models.Param, ref map[string]json.RawMessage) {
	t.Helper()
	var norms map[string]float64
	if err := json.Unmarshal(ref["norms"], &norms); err != nil {
		t.Fatal(err)
	}
	top := 0.0
	for _, v := range norms {
		top = math.Max(top, v)
	}
	seen, fullCount, floored := 0, 0, 0
	worstNorm, worstTensor := 0.0, 0.0 // relative, over gradients above the floor
	for _, p := range params {
		want, ok := norms[p.Name]
		if !ok {
			t.Errorf("%s: no reference gradient", p.Name)
			continue
		}
		seen++
		got := norm(p.Grad)
		if math.Abs(got-want) > 1e-5*want && math.Abs(got-want) > 1e-6*top {
			t.Errorf("%s: gradient norm %.8g, want %.8g", p.Name, got, want)
		}
		if want > 0 && want >= 0.1*top {
			worstNorm = math.Max(worstNorm, math.Abs(got-want)/want)
		} else if math.Abs(got-want) > 1e-5*want {
			floored++
		}
		raw, ok := ref[p.Name]
		if !ok {
			continue
		}
		var full []float64
		if err := json.Unmarshal(raw, &full); err != nil {
			t.Fatal(err)
		}
		diff, ref := diffNorms(p.Grad, full)
		if diff > 1e-5*ref && diff > 1e-6*top {
			t.Errorf("%s: gradient off by %.3g (norm %.3g)", p.Name, diff, ref)
		}
		fullCount++
		if ref > 0 && ref >= 0.1*top {
			worstTensor = math.Max(worstTensor, diff/ref)
		}
	}
	if seen != len(norms) {
		t.Errorf("%d of the reference's %d gradients compared", seen, len(norms))
	}
	t.Logf("%d gradient norms (%d whole tensors): max relative difference %.2g of a norm, %.2g of a whole tensor, "+
		"over gradients of at least a tenth of the largest norm; %d smaller ones beyond 1e-5 relative but within 1e-6 of the largest",
		seen, fullCount, worstNorm, worstTensor, floored)
}
