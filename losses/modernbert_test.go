package losses

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// modernFixture is models/testdata/modernbert/tiny, written by its
// generate.py from HuggingFace's eager ModernBERT.
var modernFixture = filepath.Join("..", "models", "testdata", "modernbert", "tiny")

type modernGrad struct {
	Norms  map[string]float64   `json:"norms"`
	Full   map[string][]float64 `json:"full"`
	Sample map[string]struct {
		Index []int     `json:"index"`
		Value []float64 `json:"value"`
	} `json:"sample"`
}

type modernBatches struct {
	MFT struct {
		Texts      [][]int     `json:"texts"`
		SoftLabels [][]float64 `json:"soft_labels"`
	} `json:"mft"`
	INV struct{ Orig, Pert [][]int } `json:"inv"`
	DIR struct {
		Orig, Pert [][]int
		Directions []string `json:"directions"`
	} `json:"dir"`
}

// modernResult is the reference under one classifier_pooling.
type modernResult struct {
	BCE   float64    `json:"bce_with_logits"`
	CE    float64    `json:"softmax_ce"`
	INV   float64    `json:"inv"`
	DIR   float64    `json:"dir"`
	Total float64    `json:"total"`
	Grad  modernGrad `json:"grad"`
}

func idBatch(texts [][]int) models.Batch {
	encs := make([]models.Encoding, len(texts))
	for i, ids := range texts {
		encs[i] = models.Encoding{IDs: ids, TypeIDs: make([]int, len(ids))}
	}
	return models.NewBatch(encs)
}

// TestModernBERTFixtureLosses computes BeLUGA's losses (MFT's sigmoid BCE
// and soft CE, INV, DIR) with the tiny ModernBERT under both poolings,
// back-propagates MFT + INV + DIR and compares losses and every gradient
// with the PyTorch reference within 1e-5 relative.
func TestModernBERTFixtureLosses(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(modernFixture, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Losses json.RawMessage `json:"losses"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	// losses holds the batches ("mft", "inv", "dir") and the results per
	// pooling ("cls", "mean") side by side
	var fl modernBatches
	var results map[string]json.RawMessage
	if err := json.Unmarshal(file.Losses, &fl); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(file.Losses, &results); err != nil {
		t.Fatal(err)
	}
	ck, err := checkpoint.Load(modernFixture)
	if err != nil {
		t.Fatal(err)
	}
	dirs := make([]Direction, len(fl.DIR.Directions))
	for i, s := range fl.DIR.Directions {
		if dirs[i], err = ParseDirection(s); err != nil {
			t.Fatal(err)
		}
	}
	var targets []float64
	for _, y := range fl.MFT.SoftLabels {
		targets = append(targets, y...)
	}
	ev := NewEvaluator()
	for _, pooling := range []string{"cls", "mean"} {
		var want modernResult
		if err := json.Unmarshal(results[pooling], &want); err != nil {
			t.Fatal(err)
		}
		ck.Config.Extra["classifier_pooling"] = json.RawMessage(`"` + pooling + `"`)
		m, _, err := models.NewClassifier(ck.Config, 2, ck.Weights, 0)
		if err != nil {
			t.Fatal(err)
		}
		close := func(name string, got, want float64) {
			if math.Abs(got-want) > 1e-5*math.Abs(want) {
				t.Errorf("%s pooling: %s %.8g, want %.8g", pooling, name, got, want)
			}
		}
		total := 0.0
		step := func(name string, texts [][]int, loss func(z []float32, rows int) (float64, []float32, error), want float64) {
			pass, err := m.Forward(idBatch(texts), true)
			if err != nil {
				t.Fatal(err)
			}
			defer pass.Release()
			l, dz, err := loss(pass.Logits(), len(texts))
			if err != nil {
				t.Fatal(err)
			}
			close(name, l, want)
			total += l
			if err := pass.Backward(dz); err != nil {
				t.Fatal(err)
			}
		}
		step("MFT BCE", fl.MFT.Texts, func(z []float32, rows int) (float64, []float32, error) {
			ce, _, err := ev.MFT(z, rows, 2, targets, SoftmaxCE)
			if err != nil {
				return 0, nil, err
			}
			close("MFT soft CE", ce, want.CE)
			return ev.MFT(z, rows, 2, targets, SigmoidBCE)
		}, want.BCE)
		step("INV", append(append([][]int{}, fl.INV.Orig...), fl.INV.Pert...), func(z []float32, rows int) (float64, []float32, error) {
			return ev.INV(z, rows, 2, false)
		}, want.INV)
		step("DIR", append(append([][]int{}, fl.DIR.Orig...), fl.DIR.Pert...), func(z []float32, rows int) (float64, []float32, error) {
			return ev.DIR(z, rows, dirs)
		}, want.DIR)
		close("total", total, want.Total)
		worst := 0.0
		for _, p := range m.Params() {
			wn := want.Grad.Norms[p.Name]
			var sq float64
			for _, g := range p.Grad {
				sq += float64(g) * float64(g)
			}
			got := math.Sqrt(sq)
			if math.Abs(got-wn) > 1e-5*wn {
				t.Errorf("%s pooling: %s gradient norm %.8g, want %.8g", pooling, p.Name, got, wn)
			}
			worst = math.Max(worst, math.Abs(got-wn)/wn)
			if full, ok := want.Grad.Full[p.Name]; ok {
				var d2 float64
				for i, v := range full {
					d := float64(p.Grad[i]) - v
					d2 += d * d
				}
				if math.Sqrt(d2) > 1e-5*wn {
					t.Errorf("%s pooling: %s gradient off by %.3g relative", pooling, p.Name, math.Sqrt(d2)/wn)
				}
			}
			if s, ok := want.Grad.Sample[p.Name]; ok {
				var d2, n2 float64
				for i, j := range s.Index {
					d := float64(p.Grad[j]) - s.Value[i]
					d2 += d * d
					n2 += s.Value[i] * s.Value[i]
				}
				if math.Sqrt(d2) > 1e-5*math.Sqrt(n2) {
					t.Errorf("%s pooling: %s sampled gradient off by %.3g relative", pooling, p.Name, math.Sqrt(d2/n2))
				}
			}
		}
		t.Logf("%s pooling: total %.8g (want %.8g), largest relative difference of a gradient norm %.2g", pooling, total, want.Total, worst)
	}
}
