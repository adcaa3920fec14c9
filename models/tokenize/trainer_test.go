package tokenize

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
			ta, err := Train(texts, opt)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := Train(texts, opt)
			if err != nil {
				t.Fatal(err)
			}
			a, b := ta.JSON, tb.JSON
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
			st, err := ComputeStats(context.Background(), tk, texts, []int{8})
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

// naiveBPE is learnBPE written the slow, obvious way: recount every pair
// of every word before each merge. learnBPE must agree with it merge for
// merge.
func naiveBPE(words map[string]int, size, minFreq int, prefix string) (vocab, merges []string) {
	ws := sortedWords(words)
	syms := make([][]string, len(ws))
	alphabet := map[string]bool{}
	for i, w := range ws {
		for k, r := range []rune(w) {
			s := string(r)
			if k > 0 {
				s = prefix + s
			}
			syms[i] = append(syms[i], s)
			alphabet[s] = true
		}
	}
	if prefix == "" {
		for b := range 256 {
			alphabet[byteChars[b]] = true
		}
	}
	for s := range alphabet {
		vocab = append(vocab, s)
	}
	sort.Strings(vocab)
	inVocab := map[string]bool{}
	for _, v := range vocab {
		inVocab[v] = true
	}
	type pair struct{ a, b string }
	for len(vocab) < size {
		counts := map[pair]int{}
		for i, s := range syms {
			for k := 0; k+1 < len(s); k++ {
				counts[pair{s[k], s[k+1]}] += words[ws[i]]
			}
		}
		var best pair
		n := 0
		for p, c := range counts {
			if c > n || (c == n && (p.a < best.a || (p.a == best.a && p.b < best.b))) {
				best, n = p, c
			}
		}
		if n == 0 || n < minFreq {
			break
		}
		merged := best.a + strings.TrimPrefix(best.b, prefix)
		merges = append(merges, best.a+" "+best.b)
		if !inVocab[merged] {
			inVocab[merged] = true
			vocab = append(vocab, merged)
		}
		for i, s := range syms {
			var next []string
			for k := 0; k < len(s); k++ {
				if k+1 < len(s) && s[k] == best.a && s[k+1] == best.b {
					next = append(next, merged)
					k++
				} else {
					next = append(next, s[k])
				}
			}
			syms[i] = next
		}
	}
	return vocab, merges
}

// TestLearnBPEMatchesNaive checks the incremental pair counts against a
// recount on small random corpora: few symbols, so that runs of one symbol
// (aaaa: overlapping pairs), merges spelling the same token twice (a+bc,
// ab+c) and ties are common.
func TestLearnBPEMatchesNaive(t *testing.T) {
	for seed := range 40 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		alphabet := []rune("aabbc的是")
		words := map[string]int{}
		for range 5 + rng.IntN(60) {
			n := 1 + rng.IntN(12)
			w := make([]rune, n)
			for k := range w {
				w[k] = alphabet[rng.IntN(len(alphabet))]
			}
			words[string(w)] += 1 + rng.IntN(4)
		}
		for _, prefix := range []string{"", "##"} {
			size := 40 + rng.IntN(60)
			if prefix == "" {
				size += 256
			}
			minFreq := 1 + rng.IntN(3)
			wantV, wantM := naiveBPE(words, size, minFreq, prefix)
			gotV, gotM := learnBPE(words, size, minFreq, prefix)
			if !slices.Equal(gotM, wantM) || !slices.Equal(gotV, wantV) {
				t.Fatalf("seed %d prefix %q: merges\n%q\nwant\n%q", seed, prefix, gotM, wantM)
			}
		}
	}
}

// spacelessTexts are n sentences of a language written without spaces:
// runs of 10 to 60 Han characters drawn from a few hundred words of one to
// three characters with Zipf-like frequencies, so that each sentence is
// one pre-tokenized word, as Chinese is.
func spacelessTexts(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	var lex []string
	for i := range 400 {
		w := make([]rune, 1+i%3)
		for k := range w {
			w[k] = rune(0x4e00 + rng.IntN(1500))
		}
		lex = append(lex, string(w))
	}
	texts := make([]string, n)
	for i := range texts {
		var b strings.Builder
		for b.Len() < 3*(10+rng.IntN(50)) {
			b.WriteString(lex[int(float64(len(lex))*rng.Float64()*rng.Float64())])
		}
		if rng.IntN(3) == 0 {
			b.WriteString("，")
		}
		texts[i] = b.String() + "。"
	}
	return texts
}

// BenchmarkTrainBPESpaceless trains byte-level BPE on 5,000 sentences
// without spaces (each one long pre-tokenized word).
func BenchmarkTrainBPESpaceless(b *testing.B) {
	texts := spacelessTexts(5000)
	for range b.N {
		if _, err := Train(texts, TrainOptions{Kind: "bpe", VocabSize: 4000}); err != nil {
			b.Fatal(err)
		}
	}
}

// WordPiece on Chinese learns single characters (BERT's pre-tokenizer cuts
// every ideograph off) and says so, naming BPE and Unigram; BPE learns
// pieces of several characters and says nothing.
func TestTrainWordPieceOnChineseWarns(t *testing.T) {
	texts := spacelessTexts(300)
	wp, err := Train(texts, TrainOptions{Kind: "wordpiece", VocabSize: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if len(wp.Warnings) != 1 || !strings.Contains(wp.Warnings[0], "CJK ideographs") || !strings.Contains(wp.Warnings[0], "--kind bpe or --kind unigram") {
		t.Errorf("WordPiece on Chinese warns %q", wp.Warnings)
	}
	bpe, err := Train(texts, TrainOptions{Kind: "bpe", VocabSize: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if len(bpe.Warnings) != 0 {
		t.Errorf("BPE on Chinese warns %q", bpe.Warnings)
	}
	path := filepath.Join(t.TempDir(), "bpe.json")
	if err := os.WriteFile(path, bpe.JSON, 0o644); err != nil {
		t.Fatal(err)
	}
	tk, err := NewHF(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ComputeStats(context.Background(), tk, texts, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Pieces of several characters: fewer tokens than characters; per
	// white-space word (a sentence) it would look like a broken tokenizer.
	if st.Text.Main() != "Han" || st.TokensPerChar >= 0.9 || st.TokensPerSpaceWord < 5 {
		t.Errorf("BPE on Chinese: script %s, %.2f tokens per character, %.2f per white-space word", st.Text.Main(), st.TokensPerChar, st.TokensPerSpaceWord)
	}
	var out strings.Builder
	st.Print(&out)
	if !strings.Contains(out.String(), "Han is written without spaces") {
		t.Errorf("stats of Chinese texts do not say the per-word figures are not words:\n%s", out.String())
	}
	// English texts: no warning.
	en, err := Train(trainTexts(), TrainOptions{Kind: "wordpiece", VocabSize: 120})
	if err != nil || len(en.Warnings) != 0 {
		t.Errorf("WordPiece on English: %v, warnings %q", err, en.Warnings)
	}
}
