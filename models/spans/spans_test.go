package spans

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// words is a test tokenizer: one token per white-space separated word, its
// id the word's length plus 1000.
type words struct{}

func (words) TokenizeOffsets(text string) ([]Token, error) {
	var out []Token
	rs := []rune(text)
	for i := 0; i < len(rs); {
		if unicode.IsSpace(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && !unicode.IsSpace(rs[j]) {
			j++
		}
		out = append(out, Token{ID: 1000 + j - i, Start: i, End: j})
		i = j
	}
	return out, nil
}

func TestContextWindows(t *testing.T) {
	cfg := Config{MaxLength: 10, Stride: 2}
	tests := []struct {
		nq, nc int
		want   [][2]int
	}{
		{2, 5, [][2]int{{0, 5}}},                   // fits: 2+5+3 = 10
		{2, 6, [][2]int{{0, 5}, {3, 6}}},           // 5 per window, step 3
		{2, 10, [][2]int{{0, 5}, {3, 8}, {6, 10}}}, // the last window ends at the context's end
		{2, 8, [][2]int{{0, 5}, {3, 8}}},           // no empty trailing window
	}
	for _, tc := range tests {
		got, err := contextWindows(tc.nq, tc.nc, 3, cfg)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%d+%d tokens: %v %v, want %v", tc.nq, tc.nc, got, err, tc.want)
		}
	}
	if _, err := contextWindows(5, 10, 3, cfg); err == nil {
		t.Error("stride not below the window: no error")
	}
	if _, err := contextWindows(8, 3, 3, cfg); err == nil {
		t.Error("question filling the feature: no error")
	}
}

func TestFeatures(t *testing.T) {
	cfg := Config{MaxLength: 10, Stride: 2, CLS: 101, SEP: 102, PAD: 0}
	//      0    5   9  12     19 22   27 29
	ctx := "aaaa bbb cc dddddd ee ffff g hh"
	ex := datasets.QAExample{ID: "x", Context: ctx, Question: "  qq q",
		Answers: []string{"dddddd ee"}, AnswerStarts: []int{12}}
	fs, err := Features(words{}, []datasets.QAExample{ex}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 2 question tokens leave 5 context tokens a window: [0,5) and [3,8)
	if len(fs) != 2 {
		t.Fatalf("%d features, want 2", len(fs))
	}
	want0 := []int{101, 1002, 1001, 102, 1004, 1003, 1002, 1006, 1002, 102}
	if !reflect.DeepEqual(fs[0].IDs, want0) || fs[0].Len != 10 {
		t.Errorf("feature 0 ids %v len %d, want %v len 10", fs[0].IDs, fs[0].Len, want0)
	}
	if want := []int{0, 0, 0, 0, 1, 1, 1, 1, 1, 1}; !reflect.DeepEqual(fs[0].TypeIDs, want) {
		t.Errorf("types %v, want %v", fs[0].TypeIDs, want)
	}
	if fs[1].Offsets[4] != [2]int{12, 18} || !fs[1].Context[4] || fs[1].Context[3] || fs[1].Context[9] {
		t.Errorf("feature 1: offsets %v, context %v", fs[1].Offsets, fs[1].Context)
	}
	// the answer is context tokens 3..4: positions 7..8 of window 0, 4..5 of window 1
	if fs[0].Start != 7 || fs[0].End != 8 || fs[1].Start != 4 || fs[1].End != 5 {
		t.Errorf("positions (%d,%d) and (%d,%d), want (7,8) and (4,5)", fs[0].Start, fs[0].End, fs[1].Start, fs[1].End)
	}
	// a window without the whole answer labels [CLS]
	ex.Answers, ex.AnswerStarts = []string{"ffff g"}, []int{22}
	fs, _ = Features(words{}, []datasets.QAExample{ex}, cfg)
	if fs[0].Start != 0 || fs[0].End != 0 || fs[1].Start != 6 || fs[1].End != 7 {
		t.Errorf("positions (%d,%d) and (%d,%d), want (0,0) and (6,7)", fs[0].Start, fs[0].End, fs[1].Start, fs[1].End)
	}
	// an answer starting in the window's last token is labelled there
	// (run_qa.py would label the feature's last position)
	ex.Answers, ex.AnswerStarts = []string{"hh"}, []int{29}
	fs, _ = Features(words{}, []datasets.QAExample{ex}, cfg)
	if fs[1].Start != 8 || fs[1].End != 8 {
		t.Errorf("last token: (%d,%d), want (8,8)", fs[1].Start, fs[1].End)
	}
	// a suite input whose label is not in the context
	none := SuiteExample("y", ctx, "qq", "NaN")
	fs, _ = Features(words{}, []datasets.QAExample{none}, cfg)
	for _, f := range fs {
		if f.Start != 0 || f.End != 0 {
			t.Errorf("no answer: (%d,%d), want (0,0)", f.Start, f.End)
		}
	}
}

func TestSuiteExample(t *testing.T) {
	ex := SuiteExample("1", "Ünïcode: John is taller than John.", "Who?", "John")
	if ex.AnswerStarts[0] != 9 || ex.Answers[0] != "John" {
		t.Errorf("answer %q at %d, want John at character 9", ex.Answers[0], ex.AnswerStarts[0])
	}
}

func TestAnswers(t *testing.T) {
	cfg := Config{MaxLength: 10, Stride: 2, NBest: 3, MaxAnswerTokens: 2, CLS: 101, SEP: 102}
	ctx := "aaaa bbb cc dddddd ee ffff g hh"
	exs := []datasets.QAExample{{ID: "x", Context: ctx, Question: "qq q"}, {ID: "y", Context: "zz", Question: "q"}}
	fs, err := Features(words{}, exs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 3 {
		t.Fatalf("%d features, want 3", len(fs))
	}
	b := Batch(fs)
	if b.Size != 3 || b.SeqLen != 10 || b.Mask[9] != 1 || b.Mask[20+4] != 1 || b.Mask[20+5] != 0 {
		t.Errorf("batch %d×%d mask %v", b.Size, b.SeqLen, b.Mask)
	}
	if nt := WithoutTypes(b); b.Types[5] != 1 || nt.Types[5] != 0 || &nt.IDs[0] != &b.IDs[0] {
		t.Errorf("WithoutTypes: types %v (batch's %v)", nt.Types, b.Types)
	}
	logits := func(pos map[int]float32) []float32 {
		z := make([]float32, cfg.MaxLength)
		for i := range z {
			z[i] = -10
		}
		for p, v := range pos {
			z[p] = v
		}
		return z
	}
	// window 0 (tokens aaaa..ee at 4..8): [CLS] is not context; start 5 +
	// end 8 = 5.5 is the best sum but 4 tokens long; "dddddd ee" (7, 8) = 4.
	// window 1 (dddddd..hh at 4..8): "g hh" (7, 8) = 5 wins.
	start := [][]float32{
		logits(map[int]float32{0: 9, 5: 2.5, 7: 1}),
		logits(map[int]float32{7: 4, 4: 1}),
		logits(map[int]float32{0: 5}),
	}
	end := [][]float32{
		logits(map[int]float32{8: 3, 5: 1}),
		logits(map[int]float32{8: 1, 4: 0.5}),
		logits(map[int]float32{0: 5}),
	}
	got, err := Answers(exs, fs, start, end, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// example y's 3 best starts and ends are [CLS] and padding: no answer
	if want := []string{"g hh", ""}; !reflect.DeepEqual(got, want) {
		t.Errorf("answers %q, want %q", got, want)
	}
	cfg.NBest = 10
	got, _ = Answers(exs, fs, start, end, cfg)
	if want := []string{"g hh", "zz"}; !reflect.DeepEqual(got, want) {
		t.Errorf("answers with 10 candidates %q, want %q", got, want)
	}
	var buf bytes.Buffer
	if err := WritePredOnly(&buf, []string{"a\nb", "", "c"}); err != nil || buf.String() != "a b\n\nc\n" {
		t.Errorf("pred_only %q, %v", buf.String(), err)
	}
}

func TestTopIndices(t *testing.T) {
	got := topIndices([]float32{1, 3, 3, 0, 2}, 3)
	if want := []int{2, 1, 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	if got := topIndices([]float32{1}, 5); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("%v", got)
	}
}

// TestSQuADDevHalves pins BeLUGA's halving of SQuAD dev (HuggingFace's
// train_test_split(test_size=0.5, seed=42) of its 10,570 questions) to
// numpy 1.24's default_rng(42).permutation(10570): the i.i.d. test half is
// its first 5,285 entries, the validation half the rest.
func TestSQuADDevHalves(t *testing.T) {
	val, test := datasets.Halve(10570, datasets.BeLUGAHalvingSeed)
	if len(val) != 5285 || len(test) != 5285 {
		t.Fatalf("halves of %d and %d, want 5285 each", len(val), len(test))
	}
	if want := []int{7115, 8833, 5552, 7967, 721}; !reflect.DeepEqual(test[:5], want) {
		t.Errorf("test half starts %v, want %v", test[:5], want)
	}
	if want := []int{3683, 7266, 1774, 9758, 9030}; !reflect.DeepEqual(val[:5], want) {
		t.Errorf("validation half starts %v, want %v", val[:5], want)
	}
	if want := []int{5668, 5729, 9864}; !reflect.DeepEqual(val[len(val)-3:], want) {
		t.Errorf("validation half ends %v, want %v", val[len(val)-3:], want)
	}
}

// benchFeatures is one example over two 384-token windows with logits.
func benchFeatures(b *testing.B) ([]datasets.QAExample, []Feature, [][]float32, [][]float32) {
	ctx := strings.Repeat("the quick brown fox jumps over the lazy dog ", 60)
	exs := []datasets.QAExample{{ID: "b", Context: ctx, Question: "what jumps over the dog?"}}
	fs, err := Features(words{}, exs, BeLUGA())
	if err != nil {
		b.Fatal(err)
	}
	start, end := make([][]float32, len(fs)), make([][]float32, len(fs))
	for i := range fs {
		start[i], end[i] = make([]float32, 384), make([]float32, 384)
		for j := range start[i] {
			start[i][j], end[i][j] = float32((j*37)%101), float32((j*53)%97)
		}
	}
	return exs, fs, start, end
}

func BenchmarkAnswers(b *testing.B) {
	exs, fs, start, end := benchFeatures(b)
	cfg := BeLUGA()
	for b.Loop() {
		if _, err := Answers(exs, fs, start, end, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTokenizeOffsets(b *testing.B) {
	tk, _ := bertTokenizer(b, filepath.Join(fixture.Dir(b), "vocab.txt"))
	text := strings.Repeat("The café's 1990s Skłodowska–Curie prize, unaffable! ", 20)
	for b.Loop() {
		if _, err := tk.TokenizeOffsets(text); err != nil {
			b.Fatal(err)
		}
	}
}

// bertTokenizer is BERT's uncased WordPiece tokenizer of a vocab.txt, as
// READ builds it for a BERT, with its span configuration.
func bertTokenizer(tb testing.TB, vocab string) (Tokenizer, Config) {
	tb.Helper()
	wp, err := tokenize.NewWordPieceFromVocab(vocab, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tk, cfg, err := FromTokenizer(wp)
	if err != nil {
		tb.Fatal(err)
	}
	return tk, cfg
}
