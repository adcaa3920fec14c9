package predict

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// TestRunReproducesFixture predicts the fixture's texts and pairs from their
// raw text, in small mixed-length batches, and compares with HuggingFace.
func TestRunReproducesFixture(t *testing.T) {
	exp := fixture.Load(t)
	dir := fixture.Dir(t)
	m, _, err := models.LoadBERT(dir)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := tokenize.NewWordPieceFromVocab(filepath.Join(dir, "vocab.txt"), exp.MaxLength)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []Input
	var want [][]float64
	for _, x := range exp.Texts {
		if x.Logits != nil {
			inputs = append(inputs, Input{Text: x.Text})
			want = append(want, x.Logits)
		}
	}
	for _, p := range exp.Pairs {
		b := p.B
		inputs = append(inputs, Input{Text: p.A, TextPair: &b})
		want = append(want, p.Logits)
	}
	outs, err := Run(m, tk, inputs, 7)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i, o := range outs {
		for k, w := range want[i] {
			worst = math.Max(worst, math.Abs(float64(o.Logits[k])-w))
		}
		if s := o.Probs[0] + o.Probs[1]; math.Abs(float64(s)-1) > 1e-6 {
			t.Errorf("input %d: probabilities sum to %g", i, s)
		}
	}
	if worst > 1e-4 {
		t.Errorf("logits differ from HuggingFace's by up to %g", worst)
	}
}
