package spans

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// TestFeaturesWithAnyTokenizer: with RoBERTa's, DeBERTa-v3's, ModernBERT's
// and mBERT's tokenizers, a feature that holds the whole context is the
// tokenizer's own encoding of (question, context), as HuggingFace's QA
// preprocessing builds it, and the answer's tokens map back to its text;
// windows of a long context keep to MaxLength.
func TestFeaturesWithAnyTokenizer(t *testing.T) {
	root := shareddata.Path(t, "data/tokenizers")
	dirs := []string{"FacebookAI__roberta-base", "microsoft__deberta-v3-base", "answerdotai__ModernBERT-base",
		"google-bert__bert-base-multilingual-cased"}
	ctx := "The café's owner, Zoë, opened it in 1999 — and she still runs it."
	ans := "Zoë"
	ex := datasets.QAExample{ID: "x", Context: ctx, Question: "  Who opened the café? ", Answers: []string{ans},
		AnswerStarts: []int{len([]rune(ctx[:strings.Index(ctx, ans)]))}}
	for _, d := range dirs {
		t.Run(d, func(t *testing.T) {
			tk, err := tokenize.Load(filepath.Join(root, d), 0)
			if err != nil {
				t.Fatal(err)
			}
			stk, cfg, err := FromTokenizer(tk)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := Features(stk, []datasets.QAExample{ex}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != 1 {
				t.Fatalf("%d features, want 1", len(fs))
			}
			f := fs[0]
			want, err := tk.Encode(strings.TrimSpace(ex.Question), ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.IDs[:f.Len], want.IDs) || !reflect.DeepEqual(f.TypeIDs[:f.Len], want.TypeIDs) {
				t.Errorf("feature\n %v %v\nwant the tokenizer's pair\n %v %v", f.IDs[:f.Len], f.TypeIDs[:f.Len], want.IDs, want.TypeIDs)
			}
			if f.Start == 0 || f.End < f.Start {
				t.Fatalf("answer at tokens (%d, %d)", f.Start, f.End)
			}
			if got := string([]rune(ctx)[f.Offsets[f.Start][0]:f.Offsets[f.End][1]]); strings.TrimSpace(got) != ans {
				t.Errorf("answer tokens cover %q, want %q", got, ans)
			}
			for i := f.Len; i < len(f.IDs); i++ {
				if f.IDs[i] != cfg.PAD {
					t.Fatalf("padding id %d at %d, want %d", f.IDs[i], i, cfg.PAD)
				}
			}
			// Windows: a context several times longer than a feature.
			long := ex
			long.Context = strings.Repeat("Nothing here at all. ", 12) + ctx
			long.AnswerStarts = []int{len([]rune(long.Context[:strings.LastIndex(long.Context, ans)]))}
			small := cfg
			small.MaxLength, small.Stride = 32, 8
			fs, err = Features(stk, []datasets.QAExample{long}, small)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range fs {
				if f.Len > small.MaxLength {
					t.Errorf("a window of %d tokens", f.Len)
				}
				if f.Start > 0 {
					found = true
					if got := string([]rune(long.Context)[f.Offsets[f.Start][0]:f.Offsets[f.End][1]]); strings.TrimSpace(got) != ans {
						t.Errorf("window answer %q", got)
					}
				}
			}
			if len(fs) < 2 || !found {
				t.Errorf("%d windows, answer found %v", len(fs), found)
			}
		})
	}
}
