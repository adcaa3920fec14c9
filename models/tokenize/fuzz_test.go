package tokenize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// fuzzTexts are what the fuzzers encode with a tokenizer they could read:
// accents in both normal forms, Arabic, CJK, emoji, an added token, white
// space runs, a control character, invalid UTF-8 and an empty text.
var fuzzTexts = [][2]string{
	{"Héllo wörld! The cafe\u0301's naïve résumé", ""},
	{"انا بكره النساء.", "ﻻ أحب ٢٠٢٣"},
	{"中文 テスト 😀👍🏽 [MASK] \t\n  x\u0000y", ""},
	{"\xff\xfe bad \xc3", "tail"},
	{"", ""},
}

// encodeAll encodes fuzzTexts, single and paired, checking that every
// offset lies inside its text.
func encodeAll(t *testing.T, tk Tokenizer) {
	for _, in := range fuzzTexts {
		for _, pair := range []bool{false, true} {
			e, err := tk.EncodeOffsets(in[0], in[1], pair)
			if err != nil {
				continue
			}
			if len(e.Offsets) != len(e.IDs) || len(e.TypeIDs) != len(e.IDs) || len(e.Seq) != len(e.IDs) {
				t.Fatalf("%q: %d ids, %d offsets, %d type ids, %d sequence ids", in[0], len(e.IDs), len(e.Offsets), len(e.TypeIDs), len(e.Seq))
			}
			for j, o := range e.Offsets {
				text := in[0]
				if e.Seq[j] == 1 {
					text = in[1]
				}
				if o.Start < 0 || o.Start > o.End || o.End > len(text) {
					t.Fatalf("%q: token %d has offsets %v outside its %d-byte text", text, j, o, len(text))
				}
			}
		}
	}
}

// smallTokenizerJSONs are small tokenizer.json files of every model kind
// and pipeline piece beluga reads, the fuzzers' seeds.
func smallTokenizerJSONs() [][]byte {
	vocab := map[string]int{"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3, "[MASK]": 4, "h": 5, "e": 6, "l": 7, "o": 8,
		"he": 9, "ll": 10, "hello": 11, "##llo": 12, "w": 13, "▁": 14, "▁he": 15, "Ġ": 16, "Ġw": 17}
	added := []map[string]any{{"id": 4, "content": "[MASK]", "special": true, "lstrip": true, "normalized": false},
		{"id": 1, "content": "[CLS]", "special": true}, {"id": 2, "content": "[SEP]", "special": true}}
	template := map[string]any{"type": "TemplateProcessing",
		"single": []any{map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
		"pair": []any{map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}, map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 1}},
			map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 1}}},
		"special_tokens": map[string]any{"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{1}, "tokens": []string{"[CLS]"}},
			"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{2}, "tokens": []string{"[SEP]"}}}}
	docs := []map[string]any{
		{"added_tokens": added, "normalizer": map[string]any{"type": "BertNormalizer", "lowercase": true},
			"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
			"post_processor": map[string]any{"type": "BertProcessing", "sep": []any{"[SEP]", 2}, "cls": []any{"[CLS]", 1}},
			"model":          map[string]any{"type": "WordPiece", "vocab": vocab, "unk_token": "[UNK]", "continuing_subword_prefix": "##"}},
		{"added_tokens": added, "normalizer": map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFKC"},
			map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": "\\s+"}, "content": " "}, map[string]any{"type": "Lowercase"}}},
			"pre_tokenizer":  map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": true},
			"post_processor": map[string]any{"type": "RobertaProcessing", "sep": []any{"[SEP]", 2}, "cls": []any{"[CLS]", 1}, "trim_offsets": true, "add_prefix_space": true},
			"model":          map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{"h e", "l l", "Ġ w"}, "unk_token": "[UNK]"}},
		{"added_tokens": added, "normalizer": map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFD"},
			map[string]any{"type": "StripAccents"}, map[string]any{"type": "Strip"}, map[string]any{"type": "Prepend", "prepend": "▁"}}},
			"pre_tokenizer":  map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true},
			"post_processor": template,
			"model": map[string]any{"type": "Unigram", "unk_id": 0, "vocab": []any{[]any{"[UNK]", 0}, []any{"[CLS]", 0}, []any{"[SEP]", 0},
				[]any{"▁", -2.0}, []any{"▁he", -1.5}, []any{"h", -3.0}, []any{"e", -3.0}, []any{"l", -3.0}, []any{"o", -3.0}, []any{"llo", -2.0}}}},
		{"normalizer": map[string]any{"type": "NFC"}, "pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"String": " "}, "behavior": "MergedWithNext"},
			map[string]any{"type": "Punctuation"}, map[string]any{"type": "Digits", "individual_digits": true}, map[string]any{"type": "WhitespaceSplit"}}},
			"model": map[string]any{"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}},
	}
	var out [][]byte
	for _, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			panic(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzTokenizerJSON feeds the tokenizer.json reader (normalisers,
// pre-tokenizers, models, post-processors, added tokens) arbitrary bytes;
// a tokenizer it accepts must encode every fuzzText without panicking,
// with offsets inside the text.
func FuzzTokenizerJSON(f *testing.F) {
	for _, b := range smallTokenizerJSONs() {
		f.Add(b)
	}
	// Ids of 2^31−1 and −1 in a WordPiece and a BPE vocabulary.
	for _, h := range hostileIDs() {
		f.Add(h.json)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := parseHF(data, 16)
		if err != nil {
			return
		}
		encodeAll(t, h)
	})
}

// FuzzSentencePieceModel feeds the SentencePiece model reader (the
// protobuf of spm.model, its charsmap and pieces) arbitrary bytes; a
// model it accepts must encode every fuzzText under both wrappings.
func FuzzSentencePieceModel(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "parity", "small-unigram.model"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, wrap := range []string{WrapDeBERTa, WrapXLMR} {
			sp, err := newSentencePiece(data, "fuzz.model", wrap, 16)
			if err != nil {
				continue
			}
			encodeAll(t, sp)
		}
	})
}

// TestFuzzSeedsAreTokenizers: every seed of FuzzTokenizerJSON is a
// tokenizer beluga reads (a seed it refuses would fuzz the error path
// only).
func TestFuzzSeedsAreTokenizers(t *testing.T) {
	for i, b := range smallTokenizerJSONs() {
		h, err := parseHF(b, 16)
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		encodeAll(t, h)
	}
}
