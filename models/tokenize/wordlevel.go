package tokenize

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models"
)

// WordLevel maps lower-cased words to ids for word-vector models: a word is
// looked up whole, and failing that with its leading and trailing
// punctuation split off (GloVe has separate tokens for "," and "n't");
// unknown words map to id 1 ([UNK]), and id 0 ([PAD]) is never produced.
type WordLevel struct {
	ids       map[string]int
	words     []string
	maxLength int
}

// NewWordLevel builds a tokenizer over words (id = index; words[1] must be
// the unknown token), truncating to maxLength tokens (0: no limit).
func NewWordLevel(words []string, maxLength int) (*WordLevel, error) {
	if len(words) < 2 || words[1] != "[UNK]" {
		return nil, fmt.Errorf("word-level vocabulary must start with [PAD], [UNK]")
	}
	w := &WordLevel{ids: make(map[string]int, len(words)), words: words, maxLength: maxLength}
	for i, s := range words {
		w.ids[s] = i
	}
	return w, nil
}

// Encode implements the tokenizer interface; pairs are joined with the
// pair's tokens after the text's (word-vector models pool over all of them),
// the pair's tokens carrying type 1.
func (w *WordLevel) Encode(text, pair string, isPair bool) (models.Encoding, error) {
	var enc models.Encoding
	add := func(s string, typ int) {
		for _, id := range w.words2ids(s) {
			enc.IDs = append(enc.IDs, id)
			enc.TypeIDs = append(enc.TypeIDs, typ)
		}
	}
	add(text, 0)
	if isPair {
		add(pair, 1)
	}
	if w.maxLength > 0 && len(enc.IDs) > w.maxLength {
		enc.IDs, enc.TypeIDs = enc.IDs[:w.maxLength], enc.TypeIDs[:w.maxLength]
	}
	if len(enc.IDs) == 0 {
		enc.IDs, enc.TypeIDs = []int{wordLevelUnknown}, []int{0}
	}
	return enc, nil
}

func (w *WordLevel) words2ids(s string) []int {
	var out []int
	for _, tok := range strings.Fields(strings.ToLower(s)) {
		if id, ok := w.ids[tok]; ok {
			out = append(out, id)
			continue
		}
		out = append(out, w.pieces(tok)...)
	}
	return out
}

// pieces splits leading and trailing punctuation off an unknown word.
func (w *WordLevel) pieces(tok string) []int {
	isP := func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) }
	core := strings.TrimFunc(tok, isP)
	lead := tok[:strings.Index(tok, core)]
	if core == "" {
		lead = tok
	}
	trail := tok[len(lead)+len(core):]
	var out []int
	for _, r := range lead {
		out = append(out, w.id(string(r)))
	}
	if core != "" {
		out = append(out, w.id(core))
	}
	for _, r := range trail {
		out = append(out, w.id(string(r)))
	}
	return out
}

func (w *WordLevel) id(s string) int {
	if id, ok := w.ids[s]; ok {
		return id
	}
	return wordLevelUnknown
}

// wordLevelUnknown is the id of [UNK] in a word-level vocabulary (words[1]).
const wordLevelUnknown = 1

// UnknownID is the id unknown words map to ([UNK], 1).
func (w *WordLevel) UnknownID() int { return wordLevelUnknown }

// Fingerprint identifies the tokenizer's behaviour (its vocabulary and
// maximum length), for the tokenisation cache.
func (w *WordLevel) Fingerprint() string {
	h := sha256.New()
	fmt.Fprintf(h, "wordlevel maxlen=%d words=%d\n", w.maxLength, len(w.words))
	for _, s := range w.words {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Words returns the vocabulary in id order.
func (w *WordLevel) Words() []string { return w.words }

// SaveVocab writes the vocabulary, one word a line, atomically.
func SaveVocab(path string, words []string) error {
	return atomicfile.WriteFile(path, []byte(strings.Join(words, "\n")+"\n"))
}

// ReadVocab reads a vocabulary written by SaveVocab (or BERT's vocab.txt).
func ReadVocab(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", path, err)
	}
	defer f.Close()
	var words []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		words = append(words, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", path, err)
	}
	return words, nil
}
