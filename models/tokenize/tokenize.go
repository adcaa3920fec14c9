// Package tokenize turns texts and text pairs into token ids for the models:
// BERT's WordPiece (lower-casing, accent stripping, Chinese-character and
// punctuation splitting, [CLS] a [SEP] b [SEP] with token type ids, and
// longest-first truncation), built on github.com/sugarme/tokenizer from a
// vocab.txt or a HuggingFace tokenizer.json.
package tokenize

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/model/wordpiece"
	"github.com/sugarme/tokenizer/normalizer"
	"github.com/sugarme/tokenizer/pretokenizer"
	"github.com/sugarme/tokenizer/pretrained"
	"github.com/sugarme/tokenizer/processor"

	"github.com/beluga-nlp/beluga/models"
)

// WordPiece is a BERT tokenizer. It is safe for concurrent use.
type WordPiece struct {
	mu        sync.Mutex // sugarme's Tokenizer keeps per-call state
	tk        *tokenizer.Tokenizer
	maxLength int
	// VocabFile is the vocabulary it was built from, if any (to save it
	// beside a model: sugarme's Tokenizer.Save is not implemented).
	VocabFile string
	// uncased tokenizers lower-case and strip accents before sugarme sees
	// the text: sugarme's BertNormalizer leaves accented letters intact, so
	// "café" became [UNK] where BERT reads "cafe".
	uncased bool
}

// NewWordPieceFromVocab builds an uncased BERT tokenizer from a vocab.txt,
// truncating encodings to maxLength tokens (0: no truncation).
func NewWordPieceFromVocab(vocabFile string, maxLength int) (*WordPiece, error) {
	if _, err := os.Stat(vocabFile); err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", vocabFile, err)
	}
	model, err := wordpiece.NewWordPieceFromFile(vocabFile, "[UNK]")
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", vocabFile, err)
	}
	tk := tokenizer.NewTokenizer(model)
	tk.WithNormalizer(normalizer.NewBertNormalizer(true, true, true, true))
	tk.WithPreTokenizer(pretokenizer.NewBertPreTokenizer())
	var post [2]processor.PostToken
	for i, tok := range []string{"[SEP]", "[CLS]"} {
		id, ok := tk.TokenToId(tok)
		if !ok {
			return nil, fmt.Errorf("vocabulary %s: no %s token", vocabFile, tok)
		}
		post[i] = processor.PostToken{Id: id, Value: tok}
	}
	tk.WithPostProcessor(processor.NewBertProcessing(post[0], post[1]))
	for _, tok := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		tk.AddSpecialTokens([]tokenizer.AddedToken{tokenizer.NewAddedToken(tok, true)})
	}
	w := newWordPiece(tk, maxLength, vocabFile)
	w.uncased = true
	return w, nil
}

// NewWordPieceFromJSON builds a tokenizer from a HuggingFace tokenizer.json.
func NewWordPieceFromJSON(path string, maxLength int) (*WordPiece, error) {
	tk, err := pretrained.FromFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	var cfg struct {
		Normalizer struct {
			Type         string `json:"type"`
			Lowercase    bool   `json:"lowercase"`
			StripAccents *bool  `json:"strip_accents"`
		} `json:"normalizer"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	w := newWordPiece(tk, maxLength, "")
	n := cfg.Normalizer
	// BERT strips accents when strip_accents is true, or unset and lowercasing.
	w.uncased = n.Type == "BertNormalizer" && n.Lowercase && (n.StripAccents == nil || *n.StripAccents)
	return w, nil
}

// lowerStripAccents is BERT's uncased normalisation: lower case, then
// canonical decomposition without the combining marks (category Mn).
func lowerStripAccents(s string) string {
	s = norm.NFD.String(strings.ToLower(s))
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

func newWordPiece(tk *tokenizer.Tokenizer, maxLength int, vocab string) *WordPiece {
	if maxLength > 0 {
		tk.WithTruncation(&tokenizer.TruncationParams{MaxLength: maxLength, Strategy: tokenizer.LongestFirst})
	} else {
		tk.WithTruncation(nil)
	}
	tk.WithPadding(nil)
	return &WordPiece{tk: tk, maxLength: maxLength, VocabFile: vocab}
}

// Encode tokenizes text, or the pair (text, pair) when isPair is set.
func (w *WordPiece) Encode(text, pair string, isPair bool) (models.Encoding, error) {
	if w.uncased {
		text, pair = lowerStripAccents(text), lowerStripAccents(pair)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var enc *tokenizer.Encoding
	var err error
	if isPair {
		enc, err = w.tk.EncodePair(text, pair, true)
	} else {
		enc, err = w.tk.EncodeSingle(text, true)
	}
	if err != nil {
		return models.Encoding{}, fmt.Errorf("tokenize %q: %w", text, err)
	}
	return models.Encoding{IDs: append([]int(nil), enc.Ids...), TypeIDs: append([]int(nil), enc.TypeIds...)}, nil
}

// VocabSize is the number of token ids, special tokens included.
func (w *WordPiece) VocabSize() int { return w.tk.GetVocabSize(true) }
