package models_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

func loadMLM(t testing.TB) (*models.MaskedLM, *tokenize.WordPiece, []string) {
	t.Helper()
	dir, cleanup, err := checkpoint.Open(shareddata.Path(t, "fixtures/bert-tiny-mlm.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	m, _, err := models.LoadMaskedLM(dir)
	if err != nil {
		t.Fatal(err)
	}
	vocabFile := filepath.Join(dir, "vocab.txt")
	tk, err := tokenize.NewWordPieceFromVocab(vocabFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	vocab, err := tokenize.ReadVocab(vocabFile)
	if err != nil {
		t.Fatal(err)
	}
	return m, tk, vocab
}

// The head is right when the pretrained checkpoint predicts held-out words
// about as well as its pretraining loss says (final MLM loss 4.2, on 15 %
// masks with 80/10/10 replacement): a head with a wrong transform, an untied
// decoder or no bias lands near ln(30522) ≈ 10.3.
func TestMaskedLMLoss(t *testing.T) {
	m, tk, _ := loadMLM(t)
	dev, err := datasets.ReadSST2(shareddata.Path(t, "data/sst2/dev.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var encs []models.Encoding
	var pos, gold []int
	for _, ex := range dev[:8] {
		e, err := tk.Encode(ex.Text, "", false)
		if err != nil {
			t.Fatal(err)
		}
		for j := 1; j < len(e.IDs)-1; j++ {
			ids := append([]int(nil), e.IDs...)
			gold = append(gold, ids[j])
			ids[j] = 103 // [MASK]
			encs = append(encs, models.Encoding{IDs: ids, TypeIDs: make([]int, len(ids))})
			pos = append(pos, j)
		}
	}
	nll, top1 := 0.0, 0
	for start := 0; start < len(encs); start += 64 {
		end := min(start+64, len(encs))
		lp, err := m.LogProbs(models.NewBatch(encs[start:end]), pos[start:end])
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range lp {
			g := gold[start+i]
			nll -= float64(row[g])
			best := 0
			for k, v := range row {
				if v > row[best] {
					best = k
				}
			}
			if best == g {
				top1++
			}
		}
	}
	nll /= float64(len(gold))
	acc := float64(top1) / float64(len(gold))
	t.Logf("%d masked tokens of 8 SST-2 dev sentences: mean NLL %.3f (perplexity %.1f), top-1 %.1f %%", len(gold), nll, math.Exp(nll), 100*acc)
	if nll > 5.5 || acc < 0.2 {
		t.Errorf("mean NLL %.3f, top-1 %.3f: the MLM head does not predict masked words", nll, acc)
	}
}

func TestSuggest(t *testing.T) {
	m, tk, vocab := loadMLM(t)
	got, err := models.Suggest(m, tk, vocab, "I {mask} the food.", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("%d suggestions", len(got))
	}
	for i, s := range got {
		if strings.HasPrefix(s.Word, "##") || strings.HasPrefix(s.Word, "[") || s.Prob <= 0 || (i > 0 && s.Prob > got[i-1].Prob) {
			t.Errorf("suggestion %d %+v", i, s)
		}
	}
	t.Logf("I {mask} the food.: %v", got)
	for _, bad := range []string{"no mask here", "{mask} and {mask}"} {
		if _, err := models.Suggest(m, tk, vocab, bad, 5); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestMaskedLMNeedsHead(t *testing.T) {
	_, _, err := models.LoadMaskedLM(fixture.Dir(t))
	if err == nil || !strings.Contains(err.Error(), "no masked-LM head") {
		t.Errorf("checkpoint without cls.predictions: %v", err)
	}
}
