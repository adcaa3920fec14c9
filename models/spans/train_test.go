package spans_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/optim"
	"github.com/beluga-nlp/beluga/models/spans"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/train"
)

// TestSpanModelLearnsAnswers (an external test: package train imports
// spans) runs the whole READ path on the fixture BERT:
// features, the span MFT and INV losses through SpanBERT's backward pass,
// AdamW, then Predict. A small model fitting three questions must end up
// answering them.
func TestSpanModelLearnsAnswers(t *testing.T) {
	dir := fixture.Dir(t)
	wp, err := tokenize.NewWordPieceFromVocab(filepath.Join(dir, "vocab.txt"), 0)
	if err != nil {
		t.Fatal(err)
	}
	tk, cfg, err := spans.FromTokenizer(wp)
	if err != nil {
		t.Fatal(err)
	}
	m, rep, err := models.LoadSpanBERT(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Initialised) != 2 {
		t.Errorf("initialised %v, want the span head", rep.Initialised)
	}
	m.SetDropout(0, 0)
	cfg.MaxLength = 48
	ctx := "Mary is taller than John. The café opened in 1990 in Paris."
	exs := []datasets.QAExample{
		spans.SuiteExample("a", ctx, "Who is taller?", "Mary"),
		spans.SuiteExample("b", ctx, "When did the café open?", "1990"),
		spans.SuiteExample("c", ctx, "Where is the café?", "Paris"),
	}
	fs, err := spans.Features(tk, exs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := spans.Batch(fs)
	starts, ends := spans.Positions(fs)
	// the INV pair: question a and a typo of it
	pert, err := spans.Features(tk, []datasets.QAExample{spans.SuiteExample("a'", ctx, "Who is tallr?", "Mary")}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	align, err := losses.AlignSpans(fs[0].IDs, pert[0].IDs, cfg.MaxLength)
	if err != nil {
		t.Fatal(err)
	}
	inv := spans.Batch([]spans.Feature{fs[0], pert[0]})
	ev := losses.NewEvaluator()
	opt := optim.NewAdamW(m.Backend(), 0)
	var first, last float64
	for step := 0; step < 60; step++ {
		l, err := train.Update(m, b, func(z []float32) (float64, []float32, error) {
			return ev.SpanMFT(z, b.Size, b.SeqLen, starts, ends)
		}, opt, 3e-3, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := train.Update(m, inv, func(z []float32) (float64, []float32, error) {
			return ev.SpanINV(z, 2, inv.SeqLen, []losses.SpanAlignment{align}, false)
		}, opt, 3e-3, 1, false); err != nil {
			t.Fatal(err)
		}
		if step == 0 {
			first = l
		}
		last = l
	}
	got, err := spans.Predict(m, tk, exs, cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Mary", "1990", "Paris"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers %q after training (MFT loss %.3f → %.3f), want %q", got, first, last, want)
	}
}
