package tokenize

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/internal/shareddata"
)

func TestWordPieceMatchesHuggingFace(t *testing.T) {
	exp := fixture.Load(t)
	dir := fixture.Dir(t)
	builders := map[string]func() (*WordPiece, error){
		"vocab.txt": func() (*WordPiece, error) {
			return NewWordPieceFromVocab(filepath.Join(dir, "vocab.txt"), exp.MaxLength)
		},
		"tokenizer.json": func() (*WordPiece, error) {
			return NewWordPieceFromJSON(filepath.Join(dir, "tokenizer.json"), exp.MaxLength)
		},
	}
	for name, build := range builders {
		t.Run(name, func(t *testing.T) {
			tk, err := build()
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i, x := range exp.Texts {
				enc, err := tk.Encode(x.Text, "", false)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(enc.IDs, x.InputIDs) {
					bad++
					if bad <= 5 {
						t.Errorf("text %d %q:\n got %v\nwant %v", i, x.Text, enc.IDs, x.InputIDs)
					}
				}
			}
			for i, p := range exp.Pairs {
				enc, err := tk.Encode(p.A, p.B, true)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(enc.IDs, p.InputIDs) || !reflect.DeepEqual(enc.TypeIDs, p.TokenTypeIDs) {
					bad++
					if bad <= 5 {
						t.Errorf("pair %d (%q, %q):\n got %v %v\nwant %v %v", i, p.A, p.B, enc.IDs, enc.TypeIDs, p.InputIDs, p.TokenTypeIDs)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d encodings differ from HuggingFace's", bad, len(exp.Texts)+len(exp.Pairs))
			}
		})
	}
}

func BenchmarkWordPieceSST2(b *testing.B) {
	train, err := datasets.ReadSST2(shareddata.Path(b, "data/sst2/train.tsv"))
	if err != nil {
		b.Fatal(err)
	}
	train = train[:10000]
	tk, err := NewWordPieceFromVocab(shareddata.Path(b, "data/vocab/bert-base-uncased-vocab.txt"), 64)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, ex := range train {
			if _, err := tk.Encode(ex.Text, "", false); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(train)), "µs/sentence")
}
