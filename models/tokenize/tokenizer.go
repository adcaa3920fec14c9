package tokenize

import "github.com/beluga-nlp/beluga/models"

// Tokenizer is what every subword tokenizer of this package provides:
// WordPiece (vocab.txt or a BERT tokenizer.json), HF (any tokenizer.json)
// and SentencePiece (spm.model, wrapped as DeBERTa-v2 or XLM-R wrap it).
type Tokenizer interface {
	// Encode tokenizes text, or the pair (text, pair) when isPair is
	// set, special tokens included, truncated longest-first to MaxLength.
	Encode(text, pair string, isPair bool) (models.Encoding, error)
	// EncodeOffsets is Encode with each token's offsets and sequence.
	EncodeOffsets(text, pair string, isPair bool) (Encoded, error)
	// Fingerprint identifies the tokenizer's behaviour: two tokenizers
	// with the same fingerprint encode every input alike.
	Fingerprint() string
	VocabSize() int // number of token ids, special tokens included
	MaxLength() int // truncation length, 0 for none
	UnknownID() int // the unknown token's id, -1 if none can be produced
	Specials() Specials
}

// Encoded is an encoding with, per token, its byte range in its own text
// (the pair's for tokens of the pair; {0, 0} for special tokens) and its
// sequence: 0 the text, 1 the pair, -1 a special token. Type ids cannot
// tell the two texts apart where a model uses none (RoBERTa, ModernBERT).
type Encoded struct {
	models.Encoding
	Offsets []Offset
	Seq     []int
}

var (
	_ Tokenizer = (*WordPiece)(nil)
	_ Tokenizer = (*HF)(nil)
)
