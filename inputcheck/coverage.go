package inputcheck

import (
	"fmt"
	"strings"

	"github.com/beluga-nlp/beluga/models"
)

// The thresholds of the coverage checks, one place for each.
const (
	// UnknownWarning is the share of a data set's tokens that may be the
	// unknown token before Coverage warns.
	UnknownWarning = 0.05
	// TruncationWarning is the share of rows that may fill the model's
	// length before Coverage warns.
	TruncationWarning = 0.10
	// MinVectorCoverage is the least share of a data set's words that a
	// word-vector model must have vectors for.
	MinVectorCoverage = 0.5
)

// Encoder is a tokenizer as the checks use it.
type Encoder interface {
	Encode(text, pair string, isPair bool) (models.Encoding, error)
}

// Coverage is how a tokenizer sees one data set.
type Coverage struct {
	Data string `json:"data"`
	Rows int    `json:"rows"`
	// Words counts white-space separated words; Tokens the tokens without
	// the special tokens every row gets ([CLS], [SEP]).
	Words  int `json:"words"`
	Tokens int `json:"tokens"`
	// Unknown counts the tokens that are the unknown token; UnknownRate is
	// Unknown/Tokens, or -1 when the tokenizer has no unknown token.
	Unknown     int     `json:"unknown"`
	UnknownRate float64 `json:"unknown_rate"`
	// Truncated counts rows whose encoding fills MaxLength (truncated, or
	// exactly at the limit); TruncatedRate is Truncated/Rows.
	Truncated     int     `json:"truncated"`
	TruncatedRate float64 `json:"truncated_rate"`
	MaxLength     int     `json:"max_length"`
	TokensPerWord float64 `json:"tokens_per_word"`
}

// String prints the figures of the data set in one line.
func (c Coverage) String() string {
	unk := "no unknown token"
	if c.UnknownRate >= 0 {
		unk = fmt.Sprintf("[UNK] %.1f%% of %d tokens", 100*c.UnknownRate, c.Tokens)
	}
	return fmt.Sprintf("%s: %d rows, %s, %.1f%% of rows at max_length %d, %.2f tokens per word", c.Data, c.Rows, unk, 100*c.TruncatedRate, c.MaxLength, c.TokensPerWord)
}

// MeasureCoverage encodes every row of a data set with tk, whose encodings
// are at most maxLength tokens long.
func MeasureCoverage(data string, rows []Row, tk Encoder, maxLength int, pairs bool) (Coverage, error) {
	c := Coverage{Data: data, Rows: len(rows), MaxLength: maxLength, UnknownRate: -1}
	empty, err := tk.Encode("", "", pairs)
	if err != nil {
		return c, fmt.Errorf("coverage of %s: %w", data, err)
	}
	// The special tokens every row gets are those of the empty text, less
	// the unknown token a word-level tokenizer gives an empty text.
	unk, hasUnk := tk.(interface{ UnknownID() int })
	special := 0
	for _, id := range empty.IDs {
		if !hasUnk || id != unk.UnknownID() {
			special++
		}
	}
	for _, r := range rows {
		enc, err := tk.Encode(r.Text, r.Pair, pairs)
		if err != nil {
			return c, fmt.Errorf("coverage of %s: %s: %w", data, r.Where, err)
		}
		c.Words += len(strings.Fields(r.Text)) + len(strings.Fields(r.Pair))
		c.Tokens += max(len(enc.IDs)-special, 0)
		if maxLength > 0 && len(enc.IDs) >= maxLength {
			c.Truncated++
		}
		if hasUnk {
			for _, id := range enc.IDs {
				if id == unk.UnknownID() {
					c.Unknown++
				}
			}
		}
	}
	if hasUnk && c.Tokens > 0 {
		c.UnknownRate = float64(c.Unknown) / float64(c.Tokens)
	}
	if c.Rows > 0 {
		c.TruncatedRate = float64(c.Truncated) / float64(c.Rows)
	}
	if c.Words > 0 {
		c.TokensPerWord = float64(c.Tokens) / float64(c.Words)
	}
	return c, nil
}
