package predict

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// TestRunReproducesFixture predicts the fixture's texts and pairs from their
// raw text, in small mixed-length batches, and compares with HuggingFace.
func TestRunReproducesFixture(t *testing.T) {
	exp, m, tk := fixtureModel(t)
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

// TestRunSideBySideIsSerial checks that batches predicted side by side on
// several cores give the bits of one batch after another on one core, in
// input order (run it with -race: the batches share the model).
func TestRunSideBySideIsSerial(t *testing.T) {
	exp, m, tk := fixtureModel(t)
	var inputs []Input
	for _, x := range exp.Texts {
		inputs = append(inputs, Input{Text: x.Text})
	}
	prev := runtime.GOMAXPROCS(1)
	serial, err := Run(m, tk, inputs, 2)
	runtime.GOMAXPROCS(4)
	side, err2 := Run(m, tk, inputs, 2)
	runtime.GOMAXPROCS(prev)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	for i := range serial {
		for k, v := range serial[i].Logits {
			if math.Float32bits(side[i].Logits[k]) != math.Float32bits(v) {
				t.Fatalf("input %d logit %d: %g side by side, %g one batch after another", i, k, side[i].Logits[k], v)
			}
		}
	}
}

// TestRunStopsWhenCancelled checks that a cancelled context stops the
// prediction with its error, saying how far it got.
func TestRunStopsWhenCancelled(t *testing.T) {
	_, m, tk := fixtureModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := RunContext(ctx, m, tk, []Input{{Text: "a"}, {Text: "b"}}, 1)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after 0 of 2 inputs") {
		t.Fatalf("err = %v, want the cancellation after 0 of 2 inputs", err)
	}
}

// fixtureModel loads the BERT fixture, its expected outputs and its
// tokenizer.
func fixtureModel(t *testing.T) (*fixture.Expected, *models.BERT, *tokenize.WordPiece) {
	t.Helper()
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
	return exp, m, tk
}
