package tokenize

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// provenanceInputs are the inputs of ../shared/data/tokenizers/PROVENANCE.md,
// whose reference ids come from HuggingFace's Rust tokenizers.
var provenanceInputs = [][2]string{
	{"Héllo wörld! The café's naïve résumé costs €5 — déjà vu.", ""},
	{"انا بكره النساء.", ""},
	{"The movie was great.", "I didn't like it at all."},
}

// provenanceIDs are PROVENANCE.md's reference ids and type ids (nil: all 0).
var provenanceIDs = map[string][][2][]int{
	"FacebookAI__roberta-base": {
		{{0, 725, 1140, 9905, 885, 17920, 4779, 328, 20, 26059, 18, 39300, 15367, 18581, 1140, 1042, 4480, 245, 93, 10768, 267, 5269, 748, 257, 4, 2}},
		{{0, 29438, 31746, 29438, 25790, 11423, 26068, 862, 29434, 39942, 32681, 31746, 40637, 34955, 5543, 4, 2}},
		{{0, 133, 1569, 21, 372, 4, 2, 2, 100, 399, 75, 101, 24, 23, 70, 4, 2}},
	},
	"google-bert__bert-base-multilingual-cased": {
		{{101, 145, 24817, 10715, 191, 15020, 12620, 106, 10117, 34551, 112, 187, 10132, 27514, 10612, 186, 11042, 10465, 10333, 34495, 1775, 11166, 100, 21369, 15632, 119, 102}},
		{{101, 14269, 10429, 98968, 10388, 58344, 119, 102}},
		{{101, 10117, 18379, 10134, 14772, 119, 102, 146, 34420, 112, 188, 11850, 10271, 10160, 10435, 119, 102},
			{0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	},
	"answerdotai__ModernBERT-base": {
		{{50281, 41, 860, 48620, 259, 6592, 392, 2, 380, 36241, 434, 36060, 9568, 2204, 860, 4815, 17275, 22, 1905, 41751, 24821, 15, 50282}},
		{{50281, 18906, 3142, 15677, 12346, 6900, 9427, 9445, 5846, 14585, 10714, 96, 15, 50282}},
		{{50281, 510, 6440, 369, 1270, 15, 50282, 42, 1904, 626, 751, 352, 387, 512, 15, 50282}},
	},
}

func TestHFMatchesProvenance(t *testing.T) {
	for dir, want := range provenanceIDs {
		t.Run(dir, func(t *testing.T) {
			path := shareddata.Path(t, filepath.Join("data/tokenizers", dir, "tokenizer.json"))
			tk, err := NewHF(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, in := range provenanceInputs {
				enc, err := tk.Encode(in[0], in[1], in[1] != "")
				if err != nil {
					t.Fatal(err)
				}
				types := want[i][1]
				if types == nil {
					types = make([]int, len(want[i][0]))
				}
				if !reflect.DeepEqual(enc.IDs, want[i][0]) || !reflect.DeepEqual(enc.TypeIDs, types) {
					t.Errorf("%q %q:\n got %v %v\nwant %v %v", in[0], in[1], enc.IDs, enc.TypeIDs, want[i][0], types)
				}
			}
		})
	}
}

// TestPreTokenizers pins pre-tokenizers and normalizers to the examples of
// HuggingFace's documentation (the tokenizers API reference).
func TestPreTokenizers(t *testing.T) {
	tests := []struct {
		json, text string
		want       []string
	}{
		{`{"type": "Whitespace"}`, "Hello there!", []string{"Hello", "there", "!"}},
		{`{"type": "WhitespaceSplit"}`, "Hello  there!\tx", []string{"Hello", "there!", "x"}},
		{`{"type": "Digits", "individual_digits": true}`, "Call 123 please", []string{"Call ", "1", "2", "3", " please"}},
		{`{"type": "Digits", "individual_digits": false}`, "Call 123 please", []string{"Call ", "123", " please"}},
		{`{"type": "Punctuation", "behavior": "Isolated"}`, "Hey friend!     How are you?!?", []string{"Hey friend", "!", "     How are you", "?", "!", "?"}},
		{`{"type": "Punctuation", "behavior": "Contiguous"}`, "Hey friend!     How are you?!?", []string{"Hey friend", "!", "     How are you", "?!?"}},
		{`{"type": "Split", "pattern": {"String": "-"}, "behavior": "Removed", "invert": false}`, "the-final--countdown", []string{"the", "final", "countdown"}},
		{`{"type": "Split", "pattern": {"String": "-"}, "behavior": "Isolated", "invert": false}`, "the-final--countdown", []string{"the", "-", "final", "-", "-", "countdown"}},
		{`{"type": "Split", "pattern": {"String": "-"}, "behavior": "MergedWithPrevious", "invert": false}`, "the-final--countdown", []string{"the-", "final-", "-", "countdown"}},
		{`{"type": "Split", "pattern": {"String": "-"}, "behavior": "MergedWithNext", "invert": false}`, "the-final--countdown", []string{"the", "-final", "-", "-countdown"}},
		{`{"type": "Split", "pattern": {"String": "-"}, "behavior": "Contiguous", "invert": false}`, "the-final--countdown", []string{"the", "-", "final", "--", "countdown"}},
		{`{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}`, "Hey friend", []string{"▁Hey", "▁friend"}},
		{`{"type": "ByteLevel", "add_prefix_space": true, "use_regex": true}`, "Hi  you're 42!\n", []string{"ĠHi", "Ġ", "Ġyou", "'re", "Ġ42", "!", "Ċ"}},
		{`{"type": "BertPreTokenizer"}`, "Hey, it's 1 café!", []string{"Hey", ",", "it", "'", "s", "1", "café", "!"}},
	}
	for _, tc := range tests {
		pre, _, err := buildPreTokenizer([]byte(tc.json))
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		var got []string
		for _, w := range pre(newNText(tc.text, 0), true) {
			got = append(got, w.s)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q: %q, want %q", tc.json, tc.text, got, tc.want)
		}
	}
	norms := []struct{ json, text, want string }{
		{`{"type": "Strip", "strip_left": false, "strip_right": true}`, "  a b  ", "  a b"},
		{`{"type": "Strip", "strip_left": true, "strip_right": false}`, "  a b  ", "a b  "},
		{`{"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]}`, "Héllò İ", "hello i"},
		{`{"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}`, "a   b  c d", "a b c d"},
		{`{"type": "Prepend", "prepend": "▁"}`, "hey", "▁hey"},
		{`{"type": "NFKC"}`, "ﬁ ①", "fi 1"},
	}
	for _, tc := range norms {
		n, _, err := buildNormalizer([]byte(tc.json))
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		got, err := n(newNText(tc.text, 0))
		if err != nil || got.s != tc.want {
			t.Errorf("%s %q: %q, %v; want %q", tc.json, tc.text, got.s, err, tc.want)
		}
	}
}
