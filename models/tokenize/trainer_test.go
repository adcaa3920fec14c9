package tokenize

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trainTexts are a few hundred short texts with repeated words.
func trainTexts() []string {
	words := []string{"the", "film", "was", "great", "terrible", "acting", "plot", "فيلم", "رائع", "سيء", "actor's", "2024"}
	var out []string
	for i := range 400 {
		var b strings.Builder
		for k := range 3 + i%5 {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[(i*7+k*3)%len(words)])
		}
		out = append(out, b.String())
	}
	return out
}

func TestTrain(t *testing.T) {
	texts := trainTexts()
	for _, kind := range []string{"wordpiece", "bpe", "unigram"} {
		t.Run(kind, func(t *testing.T) {
			size := 120
			if kind == "bpe" {
				size = 400 // 256 bytes and 5 special tokens first
			}
			opt := TrainOptions{Kind: kind, VocabSize: size}
			a, err := Train(texts, opt)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Train(texts, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Error("two trainings on the same texts differ")
			}
			path := filepath.Join(t.TempDir(), "tokenizer.json")
			if err := os.WriteFile(path, a, 0o644); err != nil {
				t.Fatal(err)
			}
			tk, err := NewHF(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if tk.VocabSize() > size || tk.VocabSize() < size/2 {
				t.Errorf("%d ids, want at most %d", tk.VocabSize(), size)
			}
			sp := tk.Specials()
			if sp.PAD != 0 || sp.UNK != 1 || sp.CLS != 2 || sp.SEP != 3 || sp.MASK != 4 {
				t.Errorf("special ids %+v, want [PAD] [UNK] [CLS] [SEP] [MASK] = 0…4", sp)
			}
			// Seen texts are cut into few tokens and nothing is unknown.
			st, err := ComputeStats(tk, texts, []int{8})
			if err != nil {
				t.Fatal(err)
			}
			if st.Unknown > 0 || st.TokensPerWord > 2 {
				t.Errorf("on its own texts: %d unknown, %.2f tokens per word", st.Unknown, st.TokensPerWord)
			}
			enc, err := tk.Encode("the film", "فيلم رائع", true)
			if err != nil {
				t.Fatal(err)
			}
			if enc.IDs[0] != 2 || enc.IDs[len(enc.IDs)-1] != 3 || enc.TypeIDs[len(enc.TypeIDs)-1] != 1 {
				t.Errorf("pair %v %v, want [CLS] a [SEP] b [SEP]", enc.IDs, enc.TypeIDs)
			}
		})
	}
	if _, err := Train(texts, TrainOptions{Kind: "nope", VocabSize: 100}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown kind: %v", err)
	}
	for _, opt := range []TrainOptions{{Kind: "wordpiece", VocabSize: 5}, {Kind: "bpe", VocabSize: 200}} {
		if _, err := Train(texts, opt); err == nil {
			t.Errorf("%+v: no error for a vocabulary of its base symbols only", opt)
		}
	}
}

// BenchmarkTrainWordPiece trains a WordPiece vocabulary on the test texts.
func BenchmarkTrainWordPiece(b *testing.B) {
	texts := trainTexts()
	for range b.N {
		if _, err := Train(texts, TrainOptions{Kind: "wordpiece", VocabSize: 120}); err != nil {
			b.Fatal(err)
		}
	}
}
