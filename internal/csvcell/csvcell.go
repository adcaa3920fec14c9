// Package csvcell writes CSV files that a spreadsheet opens as data, never
// as formulas. Every CSV the project writes goes through its Writer.
//
// Names that reach a CSV come from files users did not write: a task, a
// CheckList functionality, a class, a label, a metadata group. A
// spreadsheet program reads a cell that starts with "=", "+", "-" or "@"
// as a formula, so a functionality named `=cmd|' /C calc'!A0` runs a
// command when the report is opened (CSV injection). OWASP's rule, which
// this package follows, is to prefix every cell that starts with one of
// = + - @ TAB (0x09) or CR (0x0D) with a single quote, which spreadsheets
// read as "this is text" and do not display; encoding/csv then quotes the
// cell if it must.
//
// Numbers are the exception: "-0.25" and "-3" are values a reader wants to
// compute with, and a leading quote would turn them into text. A cell that
// is entirely a decimal number — an optional sign, digits with at most one
// decimal point, an optional exponent (what strconv.FormatFloat and Itoa
// write) — or strconv's "+Inf"/"-Inf" is written unchanged. Nothing else
// that starts with a sign is a number: "-1+cmd|' /C calc'!A0" and "-NaN"
// are neutralised.
package csvcell

import (
	"encoding/csv"
	"io"
)

// Neutralise returns s as a spreadsheet will show it rather than evaluate
// it: s itself when it cannot start a formula or is a number, else s
// behind a single quote (see the package documentation for the rule).
func Neutralise(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if IsNumber(s) {
			return s
		}
		return "'" + s
	}
	return s
}

// IsNumber reports whether s is a decimal number as Go's strconv writes
// one: [+-]digits[.digits][(e|E)[+-]digits], ".5", "5." or ±Inf.
func IsNumber(s string) bool {
	if s == "+Inf" || s == "-Inf" {
		return true
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	mantissa := 0
	for i < len(s) && isDigit(s[i]) {
		i, mantissa = i+1, mantissa+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, mantissa = i+1, mantissa+1
		}
	}
	if mantissa == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && isDigit(s[i]) {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// Writer is an encoding/csv Writer that neutralises every cell it writes.
// It has no way to write a cell unchanged, so a caller cannot forget a
// column.
type Writer struct {
	w   *csv.Writer
	rec []string
}

// NewWriter returns a Writer writing comma-separated records to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: csv.NewWriter(w)} }

// Write writes one record, each cell neutralised; record is not modified.
func (w *Writer) Write(record []string) error {
	w.rec = w.rec[:0]
	for _, c := range record {
		w.rec = append(w.rec, Neutralise(c))
	}
	return w.w.Write(w.rec)
}

// WriteAll writes every record and flushes, as csv.Writer.WriteAll does.
func (w *Writer) WriteAll(records [][]string) error {
	for _, r := range records {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	w.w.Flush()
	return w.w.Error()
}

// Flush writes any buffered data to the underlying io.Writer.
func (w *Writer) Flush() { w.w.Flush() }

// Error reports any error from a previous Write or Flush.
func (w *Writer) Error() error { return w.w.Error() }
