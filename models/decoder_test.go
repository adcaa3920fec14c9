package models_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// decoderFixtures are the model directories of testdata/decoders (gen.py
// writes them with transformers' own code: GPT-2 on 4.27.1, Llama and Qwen2
// on 4.40) and the family whose expected.json each is checked against.
var decoderFixtures = []struct{ dir, family string }{
	{"gpt2", "gpt2"},         // pytorch_model.bin
	{"gpt2-sharded", "gpt2"}, // safetensors shards + index
	{"llama", "llama"},       // grouped-query attention, untied lm_head
	{"qwen2", "qwen2"},       // q/k/v biases, tied embeddings, rope θ 1e6
}

type decoderExpected struct {
	InputIDs     [][]int     `json:"input_ids"`
	PadTokenID   int         `json:"pad_token_id"`
	HiddenRight  [][]float64 `json:"hidden_right"`
	HiddenLeft   [][]float64 `json:"hidden_left"`
	NextLogProbs [][]float64 `json:"next_logprobs"`
	Logits       [][]float64 `json:"logits"`
	Score        []float32   `json:"score.weight"`
	Losses       struct {
		MFT struct {
			Rows       []int
			SoftLabels [][]float64 `json:"soft_labels"`
			BCE        float64     `json:"bce_with_logits"`
		}
		INV struct {
			Orig, Pert []int
			Loss       float64
		}
		DIR struct {
			Orig, Pert []int
			Directions []string
			Loss       float64
		}
		Total float64
		Grad  map[string]json.RawMessage
	}
}

func loadDecoder(t *testing.T, dir, family string) (*checkpoint.Checkpoint, *decoderExpected) {
	t.Helper()
	ck, err := checkpoint.LoadDir(filepath.Join("testdata", "decoders", dir))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "decoders", family, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp decoderExpected
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	return ck, &exp
}

// padded is a batch of rows, left-padded (padding first) when left is set,
// else right-padded as NewBatch pads; padding ids are pad.
func padded(rows [][]int, pad int, left bool) models.Batch {
	L := 0
	for _, r := range rows {
		L = max(L, len(r))
	}
	b := models.Batch{Size: len(rows), SeqLen: L, IDs: make([]int, len(rows)*L), Types: make([]int, len(rows)*L), Mask: make([]float32, len(rows)*L)}
	for i, r := range rows {
		s := 0
		if left {
			s = L - len(r)
		}
		for j := range b.IDs[i*L : (i+1)*L] {
			b.IDs[i*L+j] = pad
		}
		for j, id := range r {
			b.IDs[i*L+s+j], b.Mask[i*L+s+j] = id, 1
		}
	}
	return b
}

// withScore is the checkpoint's weights with the classifier's score head
// of expected.json (the checkpoints are language models).
func withScore(ck *checkpoint.Checkpoint, exp *decoderExpected) checkpoint.Tensors {
	w := checkpoint.Tensors{}
	for k, v := range ck.Weights {
		w[k] = v
	}
	w["score.weight"] = &checkpoint.Tensor{Shape: []int{2, len(exp.Score) / 2}, Data: exp.Score}
	return w
}

// TestDecodersMatchHuggingFace: each decoder family's language model,
// loaded from what transformers' save_pretrained wrote (a bin, safetensors
// shards, a single safetensors), gives transformers' final hidden states on
// a right-padded and on a left-padded batch, its next-token
// log-probabilities, and its …ForSequenceClassification's logits on the
// last real token (1e-4, the encoders' tolerance).
func TestDecodersMatchHuggingFace(t *testing.T) {
	for _, fx := range decoderFixtures {
		t.Run(fx.dir, func(t *testing.T) {
			ck, exp := loadDecoder(t, fx.dir, fx.family)
			lm, rep, err := models.NewCausalLM(ck.Config, ck.Weights, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Initialised) > 0 {
				t.Errorf("initialised %v, want every parameter from the checkpoint", rep.Initialised)
			}
			for _, n := range rep.Ignored {
				if filepath.Ext(n) != ".masked_bias" {
					t.Errorf("ignored %s", n)
				}
			}
			h := ck.Config.HiddenSize
			worst := map[string]float64{}
			for _, left := range []bool{false, true} {
				b := padded(exp.InputIDs, exp.PadTokenID, left)
				hid, err := lm.Hidden(b)
				if err != nil {
					t.Fatal(err)
				}
				want, name := exp.HiddenRight, "hidden (right-padded)"
				if left {
					want, name = exp.HiddenLeft, "hidden (left-padded)"
				}
				for i, r := range exp.InputIDs {
					s := 0
					if left {
						s = b.SeqLen - len(r)
					}
					got := hid[(i*b.SeqLen+s)*h : (i*b.SeqLen+s+len(r))*h]
					d := maxDiff(got, want[i])
					if d > 1e-4 {
						t.Errorf("%s row %d differs from HuggingFace's by up to %.3g", name, i, d)
					}
					worst[name] = math.Max(worst[name], d)
				}
			}
			lp, err := lm.NextLogProbs(padded(exp.InputIDs, exp.PadTokenID, false))
			if err != nil {
				t.Fatal(err)
			}
			for i := range exp.NextLogProbs {
				for j, w := range exp.NextLogProbs[i] {
					if j >= len(lp[i]) {
						t.Fatalf("row %d: %d log-probabilities, want %d", i, len(lp[i]), len(exp.NextLogProbs[i]))
					}
					d := math.Abs(lp[i][j] - w)
					if d > 1e-4 {
						t.Errorf("row %d token %d: log-probability %.6g, HuggingFace's %.6g", i+1, j, lp[i][j], w)
					}
					worst["next-token log-probability"] = math.Max(worst["next-token log-probability"], d)
				}
			}
			m, _, err := models.NewClassifier(ck.Config, 2, withScore(ck, exp), 1)
			if err != nil {
				t.Fatal(err)
			}
			out, err := m.Infer(padded(exp.InputIDs, exp.PadTokenID, false))
			if err != nil {
				t.Fatal(err)
			}
			var logits []float64
			for _, r := range exp.Logits {
				logits = append(logits, r...)
			}
			if d := maxDiff(out.Logits, logits); d > 1e-4 {
				t.Errorf("classifier logits differ from HuggingFace's by up to %.3g", d)
			} else {
				worst["classifier logit"] = d
			}
			t.Logf("%d rows, max |Δ| %v", len(exp.InputIDs), worst)
		})
	}
}

// TestDecoderLossesAndGradients: BeLUGA's MFT, INV and DIR losses through
// each decoder family's classifier, and the gradients of their sum, against
// PyTorch autograd on transformers' own …ForSequenceClassification, as
// TestFamiliesLossesAndGradients checks the encoders.
func TestDecoderLossesAndGradients(t *testing.T) {
	for _, fx := range decoderFixtures {
		if fx.dir != fx.family {
			continue // the same weights as another fixture
		}
		t.Run(fx.dir, func(t *testing.T) {
			ck, exp := loadDecoder(t, fx.dir, fx.family)
			m, _, err := models.NewClassifier(ck.Config, 2, withScore(ck, exp), 1)
			if err != nil {
				t.Fatal(err)
			}
			m.SetDropout(0, 0)
			ev := losses.NewEvaluator()
			fl := exp.Losses
			total := 0.0
			rowsOf := func(idx []int) [][]int {
				var out [][]int
				for _, i := range idx {
					out = append(out, exp.InputIDs[i])
				}
				return out
			}
			step := func(name string, rows [][]int, loss func(z []float32, rows int) (float64, []float32, error), want float64) {
				pass, err := m.Forward(padded(rows, exp.PadTokenID, false), true)
				if err != nil {
					t.Fatal(err)
				}
				defer pass.Release()
				l, dz, err := loss(pass.Logits(), len(rows))
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(l-want) > 1e-5*math.Abs(want)+1e-7 {
					t.Errorf("%s loss %.8g, want %.8g", name, l, want)
				}
				total += l
				if err := pass.Backward(dz); err != nil {
					t.Fatal(err)
				}
			}
			var targets []float64
			for _, s := range fl.MFT.SoftLabels {
				targets = append(targets, s...)
			}
			step("MFT", rowsOf(fl.MFT.Rows), func(z []float32, rows int) (float64, []float32, error) {
				return ev.MFT(z, rows, 2, targets, losses.SigmoidBCE)
			}, fl.MFT.BCE)
			step("INV", rowsOf(append(append([]int{}, fl.INV.Orig...), fl.INV.Pert...)), func(z []float32, rows int) (float64, []float32, error) {
				return ev.INV(z, rows, 2, false)
			}, fl.INV.Loss)
			dirs := make([]losses.Direction, len(fl.DIR.Directions))
			for i, s := range fl.DIR.Directions {
				if dirs[i], err = losses.ParseDirection(s); err != nil {
					t.Fatal(err)
				}
			}
			step("DIR", rowsOf(append(append([]int{}, fl.DIR.Orig...), fl.DIR.Pert...)), func(z []float32, rows int) (float64, []float32, error) {
				return ev.DIR(z, rows, dirs)
			}, fl.DIR.Loss)
			if math.Abs(total-fl.Total) > 1e-5*math.Abs(fl.Total) {
				t.Errorf("total %.8g, want %.8g", total, fl.Total)
			}
			checkGrads(t, m.Params(), fl.Grad)
		})
	}
}
