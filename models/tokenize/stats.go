package tokenize

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/beluga-nlp/beluga/internal/textstat"
)

// Stats describe how a tokenizer cuts a list of texts.
type Stats struct {
	Texts        int
	Tokens       int     // tokens, special ones excluded
	Unknown      int     // unknown tokens among them
	MeanTokens   float64 // tokens per text
	MedianTokens float64
	// Text is what the texts are made of: characters, UAX #29 words,
	// white-space words and scripts (package textstat).
	Text textstat.Counts
	// Tokens per character (grapheme cluster, white space left out), per
	// UAX #29 word and per white-space word: the last is per sentence in
	// a script written without spaces (Chinese, Japanese, Thai).
	TokensPerChar, TokensPerWord, TokensPerSpaceWord float64
	UnknownRate                                      float64   // Unknown / Tokens
	TruncatedAt                                      []int     // maximum lengths, special tokens included
	TruncationRate                                   []float64 // share of texts longer than each
}

// ComputeStats tokenizes every text with tk, which must not truncate, and
// sums up: tokens (special ones excluded) per text, per character and per
// word, unknown tokens, the texts' scripts, and the share of texts whose
// encoding (special tokens included) is longer than each of maxLengths.
// Cancelling ctx (SIGTERM, Ctrl-C) stops it before the next text.
func ComputeStats(ctx context.Context, tk Tokenizer, texts []string, maxLengths []int) (Stats, error) {
	if tk.MaxLength() != 0 {
		return Stats{}, fmt.Errorf("statistics need a tokenizer that does not truncate (it truncates to %d)", tk.MaxLength())
	}
	s := Stats{Texts: len(texts), TruncatedAt: maxLengths, TruncationRate: make([]float64, len(maxLengths))}
	unk := tk.UnknownID()
	lens := make([]int, 0, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return Stats{}, fmt.Errorf("tokenizer statistics stopped after %d of %d texts: %w", i, len(texts), err)
		}
		e, err := tk.EncodeOffsets(t, "", false)
		if err != nil {
			return Stats{}, fmt.Errorf("text %d: %w", i+1, err)
		}
		n := 0
		for i, id := range e.IDs {
			if e.Seq[i] < 0 {
				continue
			}
			n++
			if id == unk {
				s.Unknown++
			}
		}
		s.Tokens += n
		s.Text.Add(textstat.Count(t))
		lens = append(lens, n)
		for k, l := range maxLengths {
			if len(e.IDs) > l {
				s.TruncationRate[k]++
			}
		}
	}
	if len(texts) == 0 {
		return s, nil
	}
	sort.Ints(lens)
	s.MeanTokens = float64(s.Tokens) / float64(len(texts))
	s.MedianTokens = float64(lens[len(lens)/2])
	if len(lens)%2 == 0 {
		s.MedianTokens = float64(lens[len(lens)/2-1]+lens[len(lens)/2]) / 2
	}
	per := func(n int) float64 {
		if n == 0 {
			return 0
		}
		return float64(s.Tokens) / float64(n)
	}
	s.TokensPerChar, s.TokensPerWord, s.TokensPerSpaceWord = per(s.Text.Chars), per(s.Text.Words), per(s.Text.SpaceWords)
	if s.Tokens > 0 {
		s.UnknownRate = float64(s.Unknown) / float64(s.Tokens)
	}
	for k := range s.TruncationRate {
		s.TruncationRate[k] /= float64(len(texts))
	}
	return s, nil
}

// Print writes the statistics as a few aligned lines. For texts mostly in a
// script written without spaces, the per-word figures say what they count.
func (s Stats) Print(w io.Writer) {
	fmt.Fprintf(w, "texts                %d\n", s.Texts)
	fmt.Fprintf(w, "scripts              %s\n", s.Text.DescribeScripts())
	fmt.Fprintf(w, "tokens per text      %.2f mean, %.1f median\n", s.MeanTokens, s.MedianTokens)
	fmt.Fprintf(w, "tokens per character %.3f\n", s.TokensPerChar)
	if sc := s.Text.Main(); textstat.Spaceless(sc) {
		fmt.Fprintf(w, "tokens per word      %.3f (UAX #29 cuts %s at every character: read tokens per character)\n", s.TokensPerWord, sc)
		fmt.Fprintf(w, "  white-space word   %.3f (%s is written without spaces: a white-space word is a phrase or sentence)\n", s.TokensPerSpaceWord, sc)
	} else {
		fmt.Fprintf(w, "tokens per word      %.3f (UAX #29 words)\n", s.TokensPerWord)
		fmt.Fprintf(w, "  white-space word   %.3f\n", s.TokensPerSpaceWord)
	}
	fmt.Fprintf(w, "unknown tokens       %d of %d (%.2f%%)\n", s.Unknown, s.Tokens, 100*s.UnknownRate)
	for k, l := range s.TruncatedAt {
		fmt.Fprintf(w, "truncated at %-4d     %.1f%%\n", l, 100*s.TruncationRate[k])
	}
}

// Open builds the tokenizer at path: a model directory (Load), a
// tokenizer.json, a vocab.txt, or a SentencePiece model (spm.model wrapped
// as DeBERTa-v2, any other .model as XLM-R).
func Open(path string, maxLength int) (Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if st.IsDir() {
		return Load(path, maxLength)
	}
	base := filepath.Base(path)
	switch {
	case strings.HasSuffix(base, ".json"):
		if ok, err := bertShaped(path); err != nil {
			return nil, err
		} else if ok {
			return NewWordPieceFromJSON(path, maxLength)
		}
		return NewHF(path, maxLength)
	case strings.HasSuffix(base, ".txt"):
		return NewWordPieceFromVocab(path, maxLength)
	case base == "spm.model":
		return NewSentencePiece(path, WrapDeBERTa, maxLength)
	case strings.HasSuffix(base, ".model"):
		return NewSentencePiece(path, WrapXLMR, maxLength)
	}
	return nil, fmt.Errorf("tokenizer %s: not a directory, tokenizer.json, vocab.txt or SentencePiece .model", path)
}
