package spans

import (
	"fmt"

	"github.com/beluga-nlp/beluga/models/tokenize"
)

// subword adapts a tokenize.Tokenizer: a text's tokens without the
// special ones, offsets turned into characters.
type subword struct{ tk tokenize.Tokenizer }

// TokenizeOffsets implements Tokenizer.
func (s subword) TokenizeOffsets(text string) ([]Token, error) {
	e, err := s.tk.EncodeOffsets(text, "", false)
	if err != nil {
		return nil, err
	}
	offs := tokenize.RuneOffsets(text, e.Offsets)
	var out []Token
	for i, id := range e.IDs {
		if e.Seq[i] == 0 {
			out = append(out, Token{ID: id, Start: offs[i].Start, End: offs[i].End})
		}
	}
	return out, nil
}

// FromTokenizer adapts any of tokenize's tokenizers (WordPiece, HF,
// SentencePiece) to span features: the Tokenizer, and BeLUGA's Config with
// the tokenizer's layout of a (question, context) pair (read off its own
// encoding of a pair) and its padding id. The tokenizer must not truncate:
// the features cut contexts into windows themselves.
func FromTokenizer(tk tokenize.Tokenizer) (Tokenizer, Config, error) {
	if tk.MaxLength() != 0 {
		return nil, Config{}, fmt.Errorf("span features need a tokenizer that does not truncate (it truncates to %d)", tk.MaxLength())
	}
	e, err := tk.EncodeOffsets("a", "b", true)
	if err != nil {
		return nil, Config{}, err
	}
	var l Layout
	stage := 0 // 0 prefix, 1 question, 2 middle, 3 context, 4 suffix
	for i, id := range e.IDs {
		typ := e.TypeIDs[i]
		switch {
		case e.Seq[i] == 0:
			stage = 1
		case e.Seq[i] == 1:
			stage, l.ContextType = 3, typ
		case stage == 0:
			l.Prefix, l.PrefixTypes = append(l.Prefix, id), append(l.PrefixTypes, typ)
		case stage <= 2:
			stage = 2
			l.Middle, l.MiddleTypes = append(l.Middle, id), append(l.MiddleTypes, typ)
		default:
			stage = 4
			l.Suffix, l.SuffixTypes = append(l.Suffix, id), append(l.SuffixTypes, typ)
		}
	}
	if stage != 4 && stage != 3 {
		return nil, Config{}, fmt.Errorf("cannot read the tokenizer's pair layout from %v", e.IDs)
	}
	if len(l.Prefix) == 0 {
		// The (0, 0) label of a window without the answer points at the
		// first token, which must be a special one.
		return nil, Config{}, fmt.Errorf("the tokenizer puts no special token before the question")
	}
	sp := tk.Specials()
	cfg := BeLUGA()
	cfg.CLS, cfg.SEP, cfg.PAD = sp.CLS, sp.SEP, sp.PAD
	if cfg.PAD < 0 {
		cfg.PAD = 0
	}
	cfg.Layout = &l
	return subword{tk}, cfg, nil
}
