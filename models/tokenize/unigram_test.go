package tokenize

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestUnigramScoresReadAsHuggingFace: a Unigram tokenizer.json whose
// scores tie in exact arithmetic (e + nt = en + t, as the unigram trainer
// writes them: "-10.246616157728505" has 17 digits) segments as
// HuggingFace's tokenizers do. HuggingFace reads the 17-digit score one
// unit in the last place above its correctly rounded value (serde_json
// without float_roundtrip), so "en t" wins there; read correctly, the tie
// keeps "e nt". The ids are those of HuggingFace's Rust tokenizers 0.22.2
// (testdata/parity/gen.mjs --show) on this file.
func TestUnigramScoresReadAsHuggingFace(t *testing.T) {
	const doc = `{"version": "1.0", "added_tokens": [{"id": 0, "content": "[UNK]", "single_word": false,
	"lstrip": false, "rstrip": false, "normalized": false, "special": true}],
	"normalizer": null, "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
	"post_processor": null, "decoder": null,
	"model": {"type": "Unigram", "unk_id": 0, "byte_fallback": false, "vocab": [["[UNK]", 0], ["▁", -3.5084636631325488],
	["e", -9.55346897716856], ["nt", -10.93976333828845], ["en", -10.246616157728505], ["t", -10.246616157728505]]}}`
	tk, err := parseHF([]byte(doc), 0)
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string][]int{"ent": {1, 4, 5}, "ent went": {1, 4, 5, 1, 0, 4, 5}} {
		enc, err := tk.Encode(text, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(enc.IDs, want) {
			t.Errorf("%q: ids %v, HuggingFace's %v", text, enc.IDs, want)
		}
	}
}

// TestSerdeFloat: numbers as serde_json reads them by default — the
// correctly rounded value wherever the digits fit 2^53 and one power of
// ten, one unit off where they do not.
func TestSerdeFloat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"0", 0}, {"-0", 0}, {"12", 12}, {"-3.5", -3.5}, {"1e-5", 1e-5}, {"-2.5E+3", -2500}, {"1.25e2", 125},
		{"-9.55346897716856", -9.55346897716856},
		{"-10.246616157728505", -10.246616157728504}, // correctly rounded: -10.246616157728505
	} {
		got, err := serdeFloat(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: %v, want %v (correctly rounded %s)", tc.in, got, tc.want, func() string {
				f, _ := strconv.ParseFloat(tc.in, 64)
				return strconv.FormatFloat(f, 'g', -1, 64)
			}())
		}
	}
	for _, bad := range []string{"", "-", "1.", ".5", "01", "1e", "\"1\"", "nan", "1.5x"} {
		if _, err := serdeFloat(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestSerdeFloatMatchesHuggingFace: 600 numbers (17-digit scores above
// all, exponents, digits past a uint64) read as HuggingFace's tokenizers
// read them (testdata/parity/serde_floats.mjs); strconv's correctly
// rounded reading differs on some.
func TestSerdeFloatMatchesHuggingFace(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "parity", "serde-floats.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	bad, rounded := 0, 0
	for _, line := range lines {
		in, hf, _ := strings.Cut(line, " ")
		want, err := strconv.ParseFloat(hf, 64)
		if err != nil {
			t.Fatal(err)
		}
		got, err := serdeFloat(in)
		if err != nil || got != want {
			if bad++; bad <= 5 {
				t.Errorf("%s: %v (%v), HuggingFace reads %v", in, got, err, want)
			}
		}
		if c, _ := strconv.ParseFloat(in, 64); c != want {
			rounded++
		}
	}
	t.Logf("%d numbers: %d read otherwise than HuggingFace (strconv: %d)", len(lines), bad, rounded)
	if rounded == 0 {
		t.Error("no number tells serde_json's reading from a correctly rounded one")
	}
}
