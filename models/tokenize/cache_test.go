package tokenize

import (
	"os"
	"reflect"
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/suites"
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

var cacheInputs = []suites.Input{
	{Text: "Café au lait"}, {Text: "hello", Pair: "world!", IsPair: true}, {Text: ""}, {Text: "unaffable [MASK]"},
}

func direct(t *testing.T, tk Encoder, inputs []suites.Input) []models.Encoding {
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
		got, err := c.Encode(tk, cacheInputs)
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
	asSingle := append([]suites.Input(nil), cacheInputs...)
	asSingle[1].IsPair = false
	asSingle[1].Pair = ""
	joined := append([]suites.Input(nil), cacheInputs...)
	joined[1] = suites.Input{Text: "hello" + "world!"}
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
	if _, err := c.Encode(w, cacheInputs); err != nil {
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
		"extra bytes":   append(append([]byte(nil), full...), 0),
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			tk := &countingEncoder{Encoder: w}
			got, err := c.Encode(tk, cacheInputs)
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
	if _, err := c.Encode(w, inputs); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Encode(w, inputs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(inputs)), "µs/input")
}
