package models_test

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
)

// TestSpanBERTMatchesPyTorch compares SpanBERT's span logits, BeLUGA's span
// MFT and INV losses and the gradients of their sum with a hand-written
// PyTorch BertForQuestionAnswering on fixture A's weights
// (testdata/span_reference.py, run once: its output is stored).
func TestSpanBERTMatchesPyTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/span_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		IDs, Types   [][]int
		Starts, Ends []int
		QAWeight     []float32   `json:"qa_outputs.weight"`
		QABias       []float32   `json:"qa_outputs.bias"`
		StartLogits  [][]float64 `json:"start_logits"`
		EndLogits    [][]float64 `json:"end_logits"`
		AlignOrig    [][]int     `json:"align_orig"`
		AlignPert    [][]int     `json:"align_pert"`
		MFT, INV     float64
		Grad         map[string][]float64
		GradNorm     map[string]float64 `json:"grad_norm"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	// The stored reference was computed on fixture A: pinned, whatever
	// BELUGA_BERT_FIXTURE names for the other model tests.
	m, _, err := models.LoadSpanBERT(fixture.Shared(t, fixture.FixtureA))
	if err != nil {
		t.Fatal(err)
	}
	m.SetDropout(0, 0)
	for _, p := range m.Params() {
		switch p.Name {
		case "qa_outputs.weight":
			copy(p.Value, ref.QAWeight)
		case "qa_outputs.bias":
			copy(p.Value, ref.QABias)
		}
	}
	encs := make([]models.Encoding, len(ref.IDs))
	for i, ids := range ref.IDs {
		n := len(ids)
		for n > 0 && ids[n-1] == 0 {
			n--
		}
		encs[i] = models.Encoding{IDs: ids[:n], TypeIDs: ref.Types[i][:n]}
	}
	batch := models.NewBatch(encs)
	rows, L := batch.Size, batch.SeqLen
	pass, err := m.Forward(batch, true)
	if err != nil {
		t.Fatal(err)
	}
	z := pass.Logits()
	worst := 0.0
	for i := 0; i < rows; i++ {
		for j := 0; j < L; j++ {
			worst = math.Max(worst, math.Abs(float64(z[i*2*L+j])-ref.StartLogits[i][j]))
			worst = math.Max(worst, math.Abs(float64(z[i*2*L+L+j])-ref.EndLogits[i][j]))
		}
	}
	if worst > 1e-4 {
		t.Errorf("span logits differ from PyTorch's by up to %g", worst)
	}
	ev := losses.NewEvaluator()
	mft, dMFT, err := ev.SpanMFT(z, rows, L, ref.Starts, ref.Ends)
	if err != nil {
		t.Fatal(err)
	}
	var aligns []losses.SpanAlignment
	for i := 0; i < rows/2; i++ {
		a, err := losses.AlignSpans(ref.IDs[i], ref.IDs[rows/2+i], L)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Orig, ref.AlignOrig[i]) || !reflect.DeepEqual(a.Pert, ref.AlignPert[i]) {
			t.Errorf("pair %d: alignment %v / %v, difflib's %v / %v", i, a.Orig, a.Pert, ref.AlignOrig[i], ref.AlignPert[i])
		}
		aligns = append(aligns, a)
	}
	inv, dINV, err := ev.SpanINV(z, rows, L, aligns, false)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(mft-ref.MFT) > 1e-4 || math.Abs(inv-ref.INV) > 1e-4 {
		t.Errorf("losses MFT %.6f INV %.6f, PyTorch %.6f %.6f", mft, inv, ref.MFT, ref.INV)
	}
	for i := range dMFT {
		dMFT[i] += dINV[i]
	}
	if err := pass.Backward(dMFT); err != nil {
		t.Fatal(err)
	}
	params := map[string]*models.Param{}
	for _, p := range m.Params() {
		params[p.Name] = p
	}
	for name, want := range ref.Grad {
		got := params[name].Grad
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-4*math.Max(1, math.Abs(want[i])) {
				t.Errorf("%s gradient [%d] %g, PyTorch %g", name, i, got[i], want[i])
				break
			}
		}
	}
	for name, want := range ref.GradNorm {
		var s float64
		for _, g := range params[name].Grad {
			s += float64(g) * float64(g)
		}
		if got := math.Sqrt(s); math.Abs(got-want) > 1e-4*math.Max(1, want) {
			t.Errorf("%s gradient norm %g, PyTorch %g", name, got, want)
		}
	}
}
