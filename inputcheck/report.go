package inputcheck

import (
	"errors"
	"fmt"
	"io"
)

// Level says whether a finding stops the run.
type Level string

// The levels of a finding.
const (
	Warning Level = "warning"
	Error   Level = "error"
)

// Finding is one problem a check found.
type Finding struct {
	Check   string `json:"check"` // overlap, same_file, unknown_tokens, truncation, vector_coverage
	Level   Level  `json:"level"`
	Message string `json:"message"`
}

// Report gathers the checks of one run or sweep: what was measured and
// what was found. It is stored beside a run's results (input_checks.json).
type Report struct {
	Overlaps []Overlap  `json:"overlaps"`
	Coverage []Coverage `json:"coverage"`
	Findings []Finding  `json:"findings"`
}

// AddOverlaps records the overlaps of parts, each a warning.
func (r *Report) AddOverlaps(parts []Part) {
	for _, o := range Overlaps(parts) {
		r.Overlaps = append(r.Overlaps, o)
		r.Findings = append(r.Findings, Finding{Check: "overlap", Level: Warning, Message: o.String()})
	}
}

// AddCoverage records a data set's coverage and warns (or, for a
// word-vector model, refuses) past the thresholds.
func (r *Report) AddCoverage(c Coverage, wordVectors bool) {
	r.Coverage = append(r.Coverage, c)
	switch {
	case wordVectors && c.UnknownRate >= 0 && 1-c.UnknownRate < MinVectorCoverage:
		r.Findings = append(r.Findings, Finding{Check: "vector_coverage", Level: Error, Message: fmt.Sprintf(
			"%s: the word vectors cover %.1f%% of its %d word tokens (at least %.0f%% needed): vectors for another language or domain? (set glove: to vectors that cover the data)",
			c.Data, 100*(1-c.UnknownRate), c.Tokens, 100*MinVectorCoverage)})
	case c.UnknownRate > UnknownWarning:
		r.Findings = append(r.Findings, Finding{Check: "unknown_tokens", Level: Warning, Message: fmt.Sprintf(
			"%s: %.1f%% of its %d tokens are the unknown token (over %.0f%%): the vocabulary does not cover the data's language or script, and a model trained on it may learn nothing",
			c.Data, 100*c.UnknownRate, c.Tokens, 100*UnknownWarning)})
	}
	if c.TruncatedRate > TruncationWarning {
		r.Findings = append(r.Findings, Finding{Check: "truncation", Level: Warning, Message: fmt.Sprintf(
			"%s: %.1f%% of its %d rows fill max_length %d (over %.0f%%): raise max_length or expect truncated inputs",
			c.Data, 100*c.TruncatedRate, c.Rows, c.MaxLength, 100*TruncationWarning)})
	}
}

// Err returns the report's errors joined, nil when it has none.
func (r *Report) Err() error {
	var errs []error
	for _, f := range r.Findings {
		if f.Level == Error {
			errs = append(errs, errors.New(f.Message))
		}
	}
	return errors.Join(errs...)
}

// Print writes the coverage figures and the findings, one a line.
func (r *Report) Print(w io.Writer) {
	for _, c := range r.Coverage {
		fmt.Fprintf(w, "coverage: %s\n", c)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "%s: %s\n", f.Level, f.Message)
	}
}
