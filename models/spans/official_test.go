package spans

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
)

var update = flag.Bool("update", false, "rewrite testdata/dev_predictions.json")

// predictedExamples is how many SQuAD dev questions get a stored prediction.
const predictedExamples = 1000

// syntheticLogits gives feature i start and end logits around its gold
// positions: exact for most, the end moved for some, noise alone for the
// rest, so that the predictions are right, partly right and wrong.
func syntheticLogits(f Feature, i int) (start, end []float32) {
	s := uint64(i)*0x9e3779b97f4a7c15 + 1
	next := func() float64 {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		return float64(s>>11) / (1 << 53)
	}
	start, end = make([]float32, len(f.IDs)), make([]float32, len(f.IDs))
	for j := range start {
		start[j], end[j] = float32(4*next()-2), float32(4*next()-2)
	}
	switch r := next(); {
	case r < 0.6:
		start[f.Start] += 8
		end[f.End] += 8
	case r < 0.8:
		start[f.Start] += 8
		if e := f.End + 1 + int(3*next()); e < len(end) {
			end[e] += 8
		}
	}
	return start, end
}

// TestOfficialEvaluation scores stored predictions — made by Answers from
// synthetic logits on the first 1000 SQuAD dev questions — with metrics'
// exact match and F1 and compares them with the official SQuAD v1.1
// evaluation's numbers (testdata/evaluate_v11.py, run once and stored).
func TestOfficialEvaluation(t *testing.T) {
	loadSQuADDev(t)
	d := &squadDev
	n := 0
	for n < len(d.fs) && d.fs[n].Example < predictedExamples {
		n++
	}
	start, end := make([][]float32, n), make([][]float32, n)
	for i := range n {
		start[i], end[i] = syntheticLogits(d.fs[i], i)
	}
	answers, err := Answers(d.exs[:predictedExamples], d.fs[:n], start, end, d.cfg)
	if err != nil {
		t.Fatal(err)
	}
	preds := map[string]string{}
	for i, a := range answers {
		preds[d.exs[i].ID] = a
	}
	file := filepath.Join("testdata", "dev_predictions.json")
	if *update {
		b, err := json.MarshalIndent(preds, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := atomicfile.WriteFile(file, append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	var stored map[string]string
	readJSON(t, file, &stored)
	for id, a := range preds {
		if stored[id] != a {
			t.Errorf("%s: answer %q, stored %q", id, a, stored[id])
		}
	}
	var official struct {
		ExactMatch float64 `json:"exact_match"`
		F1         float64 `json:"f1"`
		Total      int     `json:"total"`
	}
	readJSON(t, filepath.Join("testdata", "official_eval.json"), &official)
	var em, f1 float64
	for _, ex := range d.exs {
		if p, ok := stored[ex.ID]; ok {
			em += metrics.ExactMatch(p, ex.Answers)
			f1 += metrics.TokenF1(p, ex.Answers)
		}
	}
	em, f1 = 100*em/float64(len(d.exs)), 100*f1/float64(len(d.exs))
	if len(d.exs) != official.Total || math.Abs(em-official.ExactMatch) > 1e-9 || math.Abs(f1-official.F1) > 1e-9 {
		t.Errorf("EM %.6f F1 %.6f over %d questions, official %.6f %.6f over %d", em, f1, len(d.exs), official.ExactMatch, official.F1, official.Total)
	}
	// over the predicted questions alone, for the report
	scale := float64(len(d.exs)) / predictedExamples
	t.Logf("%d predictions: EM %.2f F1 %.2f (official evaluation: %.2f %.2f)", predictedExamples, em*scale, f1*scale, official.ExactMatch*scale, official.F1*scale)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
