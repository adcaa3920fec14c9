package tokenize

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/beluga-nlp/beluga/models"
)

// countingEncoder counts the encodings it computes.
type countingEncoder struct {
	Encoder
	calls int
}

func (c *countingEncoder) Encode(text, pair string, isPair bool) (models.Encoding, error) {
	c.calls++
	return c.Encoder.Encode(text, pair, isPair)
}

var cacheInputs = []Input{
	{Text: "Café au lait"}, {Text: "hello", Pair: "world!", IsPair: true}, {Text: ""}, {Text: "unaffable [MASK]"},
}

func direct(t *testing.T, tk Encoder, inputs []Input) []models.Encoding {
	t.Helper()
	var out []models.Encoding
	for _, in := range inputs {
		e, err := tk.Encode(in.Text, in.Pair, in.IsPair)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestCacheTokenisesOnce(t *testing.T) {
	w, _ := smallWordPiece(t, 0)
	c, err := NewCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tk := &countingEncoder{Encoder: w}
	want := direct(t, w, cacheInputs)
	for run := 0; run < 3; run++ {
		got, err := c.Encode(context.Background(), tk, cacheInputs)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: cached encodings %v, want %v", run, got, want)
		}
	}
	if tk.calls != len(cacheInputs) {
		t.Errorf("%d encodings computed over 3 runs, want %d (once)", tk.calls, len(cacheInputs))
	}
}

func TestCacheKey(t *testing.T) {
	w, _ := smallWordPiece(t, 0)
	w8, _ := smallWordPiece(t, 8)
	wl, err := NewWordLevel([]string{"[PAD]", "[UNK]", "cafe"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	base := Key(w, cacheInputs)
	if Key(w, cacheInputs) != base {
		t.Fatal("the key is not deterministic")
	}
	asSingle := append([]Input(nil), cacheInputs...)
	asSingle[1].IsPair = false
	asSingle[1].Pair = ""
	joined := append([]Input(nil), cacheInputs...)
	joined[1] = Input{Text: "hello" + "world!"}
	for name, k := range map[string]string{
		"max length":      Key(w8, cacheInputs),
		"tokenizer kind":  Key(wl, cacheInputs),
		"fewer inputs":    Key(w, cacheInputs[:3]),
		"pair flag":       Key(w, asSingle),
		"text boundaries": Key(w, joined),
	} {
		if k == base {
			t.Errorf("the key ignores the %s", name)
		}
	}
}

func TestCacheRecomputesDamagedFile(t *testing.T) {
	w, _ := smallWordPiece(t, 0)
	c, err := NewCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := direct(t, w, cacheInputs)
	if _, err := c.Encode(context.Background(), w, cacheInputs); err != nil {
		t.Fatal(err)
	}
	path := c.Path(w, cacheInputs)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"truncated":     full[:len(full)-3],
		"empty":         nil,
		"wrong version": append([]byte("beluga-tokens\x00\x09"), full[len(cacheMagic):]...),
		"old version":   append([]byte("beluga-tokens\x00\x01"), full[len(cacheMagic):len(full)-32]...),
		"extra bytes":   append(append([]byte(nil), full...), 0),
		// The first encoding's first id, one more: a file that parses.
		"shifted id": func() []byte {
			b := append([]byte(nil), full...)
			b[len(cacheMagic)+8]++
			return b
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			tk := &countingEncoder{Encoder: w}
			got, err := c.Encode(context.Background(), tk, cacheInputs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) || tk.calls != len(cacheInputs) {
				t.Fatalf("encodings %v after %d calls, want %v recomputed", got, tk.calls, want)
			}
			again, err := os.ReadFile(path)
			if err != nil || !reflect.DeepEqual(again, full) {
				t.Fatalf("the damaged file was not rewritten (%v)", err)
			}
		})
	}
}

func BenchmarkCacheHitSentimentSuite(b *testing.B) {
	inputs := sentimentSuiteInputs(b)
	w, _ := smallWordPiece(b, 128)
	c, err := NewCache(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Encode(context.Background(), w, inputs); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Encode(context.Background(), w, inputs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(inputs)), "µs/input")
}

// TestCacheEveryTokenizer: the cache keys every tokenizer kind by its
// behaviour (file and maximum length) and gives back what it encodes.
func TestCacheEveryTokenizer(t *testing.T) {
	spmPath := filepath.Join("testdata", "parity", "small-unigram.model")
	js := `{"normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"},
		"model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "hello": 1, "world": 2, "!": 3}, "unk_token": "[UNK]"}}`
	jsPath := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(jsPath, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	build := []func() (Tokenizer, error){
		func() (Tokenizer, error) { return NewSentencePiece(spmPath, WrapXLMR, 0) },
		func() (Tokenizer, error) { return NewSentencePiece(spmPath, WrapXLMR, 8) },
		func() (Tokenizer, error) { return NewHF(jsPath, 0) },
		func() (Tokenizer, error) { return NewHF(jsPath, 4) },
		func() (Tokenizer, error) { w, _ := smallWordPiece(t, 0); return w, nil },
	}
	c, err := NewCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	for i, b := range build {
		tk, err := b()
		if err != nil {
			t.Fatal(err)
		}
		k := Key(tk, cacheInputs)
		if j, dup := keys[k]; dup {
			t.Errorf("tokenizers %d and %d share a cache key", j, i)
		}
		keys[k] = i
		got, err := c.Encode(context.Background(), tk, cacheInputs)
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.Encode(context.Background(), tk, cacheInputs)
		if err != nil {
			t.Fatal(err)
		}
		if want := direct(t, tk, cacheInputs); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(again, want) {
			t.Errorf("tokenizer %d: cached encodings differ from direct ones", i)
		}
	}
}
