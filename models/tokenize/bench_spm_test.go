package tokenize

import (
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

func benchTokenizer(b *testing.B, tk Tokenizer) {
	corpus := parityCorpus(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		in := corpus[i%len(corpus)]
		if _, err := tk.Encode(in.Text, in.Pair, in.Is); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnigramDeBERTa is SentencePiece's unigram model (deberta-v3-base)
// on the parity corpus, an input an iteration.
func BenchmarkUnigramDeBERTa(b *testing.B) {
	tk, err := NewSentencePiece(shareddata.Path(b, "data/tokenizers/microsoft__deberta-v3-base/spm.model"), WrapDeBERTa, 0)
	if err != nil {
		b.Fatal(err)
	}
	benchTokenizer(b, tk)
}

// BenchmarkBPERoBERTa is byte-level BPE (roberta-base's tokenizer.json) on
// the parity corpus, an input an iteration.
func BenchmarkBPERoBERTa(b *testing.B) {
	tk, err := NewHF(filepath.Join(shareddata.Path(b, "data/tokenizers"), "FacebookAI__roberta-base/tokenizer.json"), 0)
	if err != nil {
		b.Fatal(err)
	}
	benchTokenizer(b, tk)
}

// BenchmarkBPESentencePiece is SentencePiece's BPE model (a small one) on
// the parity corpus, an input an iteration.
func BenchmarkBPESentencePiece(b *testing.B) {
	tk, err := NewSentencePiece(filepath.Join("testdata", "parity", "small-bpe.model"), WrapXLMR, 0)
	if err != nil {
		b.Fatal(err)
	}
	benchTokenizer(b, tk)
}
