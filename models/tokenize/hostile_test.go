package tokenize

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/hostiletest"
)

// hostileID is a tokenizer.json whose model's vocabulary gives a token an
// id outside it.
type hostileID struct {
	name, model string
	json        []byte
	want        string
}

// hostileIDs are tokenizer.json files (made from the fuzz seeds) whose
// vocabulary gives the token "w" an id of 2^31−1 — a table indexed by id
// would take 34 GB — or −1, which indexed such a table out of range: for
// the WordPiece model (read by both of beluga's readers) and for BPE.
func hostileIDs() []hostileID {
	var out []hostileID
	for _, seed := range smallTokenizerJSONs() {
		var doc map[string]any
		if err := json.Unmarshal(seed, &doc); err != nil {
			panic(err)
		}
		model := doc["model"].(map[string]any)
		typ := model["type"].(string)
		if typ != "WordPiece" && typ != "BPE" {
			continue
		}
		for _, id := range []int64{math.MaxInt32, -1} {
			model["vocab"].(map[string]any)["w"] = id
			b, err := json.Marshal(doc)
			if err != nil {
				panic(err)
			}
			n := strconv.FormatInt(id, 10)
			out = append(out, hostileID{typ + " id " + n, typ, b,
				typ + ` vocab: token "w" has id ` + n + ", outside 0…17 (the vocabulary has 18 tokens)"})
		}
	}
	return out
}

// TestHostileTokenizerIDs reads each file under ulimit -v (hostiletest)
// with every reader that takes it: refused, naming the token.
func TestHostileTokenizerIDs(t *testing.T) {
	hostiletest.Run(t, func(t *testing.T) {
		for _, tc := range hostileIDs() {
			t.Run(tc.name, func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "tokenizer.json")
				if err := os.WriteFile(p, tc.json, 0o644); err != nil {
					t.Fatal(err)
				}
				readers := map[string]func() error{
					"NewHF": func() error { _, err := NewHF(p, 16); return err },
				}
				if tc.model == "WordPiece" {
					readers["NewWordPieceFromJSON"] = func() error { _, err := NewWordPieceFromJSON(p, 16); return err }
				}
				for name, read := range readers {
					err := read()
					if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
						t.Errorf("%s: error %v, want it to name the file and say %q", name, err, tc.want)
					}
				}
			})
		}
	})
}

// TestHostileAddedAndSpecialIDs: an added token's id and a post-processor's
// special token id outside the vocabulary are refused too.
func TestHostileAddedAndSpecialIDs(t *testing.T) {
	seed := smallTokenizerJSONs()[0] // WordPiece, BertProcessing
	for _, tc := range []struct{ from, to, want string }{
		{`"content":"[MASK]","id":4`, `"content":"[MASK]","id":2147483647`, `added_tokens[0] "[MASK]" has id 2147483647, outside 0…20`},
		{`"content":"[MASK]","id":4`, `"content":"[MASK]","id":-5`, `added_tokens[0] "[MASK]" has id -5`},
		{`"sep":["[SEP]",2]`, `"sep":["[SEP]",99]`, "post_processor: special token id 99 outside 0…17"},
	} {
		b := []byte(strings.Replace(string(seed), tc.from, tc.to, 1))
		if string(b) == string(seed) {
			t.Fatalf("seed has no %s", tc.from)
		}
		if _, err := parseHF(b, 16); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.to, err, tc.want)
		}
	}
}

// TestVocabSizeRefusesTheEmptyToken: the empty string is a token like any
// other, so one whose id lies outside the vocabulary is refused, not taken
// for "no bad token" (the fuzzer's {"": 1} indexed a table out of range).
func TestVocabSizeRefusesTheEmptyToken(t *testing.T) {
	for _, v := range []map[string]int32{{"": 1}, {"": -1, "a": 0}} {
		if _, err := vocabSize("BPE", v); err == nil || !strings.Contains(err.Error(), `token ""`) {
			t.Errorf("vocabSize(%v) = %v, want the empty token refused", v, err)
		}
	}
	if n, err := vocabSize("BPE", map[string]int32{"": 0, "a": 1}); err != nil || n != 2 {
		t.Errorf("a vocabulary with the empty token at id 0: %d, %v", n, err)
	}
}
