package tokenize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestLoadGPT2 builds the GPT-2 fixture's tokenizer (../testdata/decoders/
// gpt2, written by transformers 4.27.1's GPT2Tokenizer.save_pretrained) from
// its tokenizer.json and from its slow files (vocab.json, merges.txt,
// tokenizer_config.json), and checks both give the slow tokenizer's ids:
// byte-level BPE without special tokens, a pair joined without a separator.
func TestLoadGPT2(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("..", "testdata", "decoders", "gpt2"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Texts     []string `json:"texts"`
		InputIDs  [][]int  `json:"input_ids"`
		Tokenizer struct {
			Pair    []string `json:"pair"`
			PairIDs []int    `json:"pair_ids"`
		}
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, dir string }{
		{"tokenizer.json", src},
		{"vocab.json+merges.txt", linkDir(t, src, []string{"config.json", "tokenizer_config.json", "vocab.json", "merges.txt"}, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := Load(tc.dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range exp.Texts {
				enc, err := tok.Encode(text, "", false)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(enc.IDs, exp.InputIDs[i]) {
					t.Errorf("%q: ids %v, GPT2Tokenizer's %v", text, enc.IDs, exp.InputIDs[i])
				}
			}
			enc, err := tok.Encode(exp.Tokenizer.Pair[0], exp.Tokenizer.Pair[1], true)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(enc.IDs, exp.Tokenizer.PairIDs) {
				t.Errorf("pair: ids %v, GPT2Tokenizer's %v", enc.IDs, exp.Tokenizer.PairIDs)
			}
		})
	}
}
