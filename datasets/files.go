package datasets

import (
	"errors"
	"fmt"
	"strings"
)

// Format is the layout of a data file.
type Format string

// The formats FileSpec reads.
const (
	TSV   Format = "tsv"   // tab-separated, a header line, no quoting (GLUE's files)
	CSV   Format = "csv"   // RFC 4180 comma-separated with a header line
	JSONL Format = "jsonl" // one JSON object a line
)

// FileSpec declares a labelled data file of a classification task and
// how its columns map onto examples. It is what an experiment spec writes
// for i.i.d. data that is not registered, e.g. in YAML:
//
//	path: data/intent/dev.csv
//	text: utterance
//	label: intent
//	labels: [greeting, question, complaint]
//	halve: true
//
// or, for a three-way NLI file read by a two-way task, split with every
// premise in one part:
//
//	path: mnli_dev.jsonl
//	text: sentence1
//	text_pair: sentence2
//	label: gold_label
//	labels: {neutral: non-entailment, contradiction: non-entailment}
//	drop_labels: ["-"]
//	split: {dev: 0.1, test: 0.2, group: sentence1}
//
// or a headerless TSV (GermEval 2018's: text, coarse label, fine label),
// read by position:
//
//	path: germeval2018.training.txt
//	format: tsv
//	columns: [text, label, -]
//	labels: [OTHER, OFFENSE]
type FileSpec struct {
	// Path of the file; a ".gz" suffix is decompressed.
	Path string `json:"path" yaml:"path"`
	// Dialect: the format (tsv, csv or jsonl; empty means the
	// extension's, .tsv, .csv, .jsonl or .json, before any .gz), whether a
	// TSV is quoted, and, for a headerless file, its columns by position
	// (columns: [id, text, label]; see Dialect).
	Dialect `yaml:",inline"`
	// TextColumn holds the text (default "text").
	TextColumn string `json:"text,omitempty" yaml:"text,omitempty"`
	// PairColumn, when set, holds the second text of a pair.
	PairColumn string `json:"text_pair,omitempty" yaml:"text_pair,omitempty"`
	// LabelColumn holds the label (default "label"): a label Labels.Map
	// maps, one of Labels.Names, or an integer index into them. A name is
	// matched first, so labels named "1" to "5" map to classes 0 to 4.
	LabelColumn string `json:"label,omitempty" yaml:"label,omitempty"`
	// Labels are the task's label names in class order (at least two), and
	// optionally a map from the file's labels onto them (see Labels).
	Labels Labels `json:"labels" yaml:"labels"`
	// DropLabels are file labels whose rows are left out, each counted
	// (Rows.Dropped): MNLI's "-", a pair without a gold label.
	DropLabels []string `json:"drop_labels,omitempty" yaml:"drop_labels,omitempty"`
	// Halve marks an official validation set that BeLUGA splits into its
	// validation and i.i.d. test halves (see Halves).
	Halve bool `json:"halve,omitempty" yaml:"halve,omitempty"`
	// Split, on a training file, splits the one file into train, dev and
	// test parts (see Split); nil keeps the file whole.
	Split *Split `json:"split,omitempty" yaml:"split,omitempty"`
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Read reads every example of the file. A file without data rows is an
// error, as is a row without a text or with a label outside Labels; each
// error names the file, line and column.
func (s FileSpec) Read() ([]Example, error) {
	xs, _, err := s.ReadLines()
	if err != nil {
		return nil, err
	}
	return xs, nil
}

// ReadLines reads every example of the file as Read does, with the line
// each example starts on (1-based, the header is line 1 of a TSV or CSV),
// so that checks can point at the rows they find.
func (s FileSpec) ReadLines() ([]Example, []int, error) {
	r, err := s.ReadRows()
	return r.Examples, r.Lines, err
}

// Rows are the examples read from a file, the line each starts on, and
// what the label declaration did to the file's rows.
type Rows struct {
	Examples []Example
	Lines    []int
	// FileLabels counts the rows per label cell as the file writes it
	// (spaces trimmed), kept or dropped.
	FileLabels []LabelCount
	// Dropped counts the rows DropLabels left out.
	Dropped int
	// Count accounts for the file's lines (ReadTable's).
	Count RowCount
	// Warnings are texts read as they are that are likely wrong (see
	// TextProblem), each with its file, line and field: the suite
	// importer warns of the same.
	Warnings []*RowError
}

// ReadRows reads every example of the file (ReadTable, under the declared
// Dialect), with the line each example starts on (1-based, the header is
// line 1 of a TSV or CSV), so that checks can point at the rows they
// find. A row whose label Labels cannot read is refused with its line;
// an empty text or one with a control character is kept and warned of.
// With a split by group, each example carries its group column's value.
func (s FileSpec) ReadRows() (Rows, error) {
	if err := s.Labels.validate(s.DropLabels); err != nil {
		return Rows{}, fmt.Errorf("data file %s: %w", s.Path, err)
	}
	t, err := ReadTable(s.Path, s.Dialect)
	if err != nil {
		return Rows{}, err
	}
	names := []string{orDefault(s.TextColumn, "text"), s.PairColumn, orDefault(s.LabelColumn, "label"), ""}
	if s.Split != nil {
		names[3] = s.Split.Group
	}
	const text, pair, lab, group = 0, 1, 2, 3
	var idx [4]int
	for k, n := range names {
		if n == "" {
			continue
		}
		if idx[k], err = t.Column(n); err != nil {
			return Rows{}, err
		}
	}
	label := s.Labels.mapper(s.DropLabels)
	out := Rows{Count: t.Count}
	fileLabels := map[string]int{}
	for _, r := range t.Rows {
		get := func(k int, wantText bool) (string, error) {
			v, kind := r.Cell(idx[k])
			switch {
			case kind == "absent":
				return "", &RowError{File: s.Path, Line: r.Line, Field: names[k], Err: errors.New("missing")}
			case kind != "" && (wantText || kind != "a number"):
				return "", &RowError{File: s.Path, Line: r.Line, Field: names[k], Err: fmt.Errorf("%s, not a text (%s)", kind, v)}
			}
			if wantText {
				if msg := TextProblem(v); msg != "" {
					out.Warnings = append(out.Warnings, &RowError{File: s.Path, Line: r.Line, Field: names[k], Err: errors.New(msg)})
				}
			}
			return v, nil
		}
		var ex Example
		if ex.Text, err = get(text, true); err != nil {
			return Rows{}, err
		}
		if names[pair] != "" {
			ex.IsPair = true
			if ex.Pair, err = get(pair, true); err != nil {
				return Rows{}, err
			}
		}
		if names[group] != "" {
			if ex.Group, err = get(group, false); err != nil {
				return Rows{}, err
			}
		}
		l, err := get(lab, false)
		if err != nil {
			return Rows{}, err
		}
		fileLabels[strings.TrimSpace(l)]++
		var keep bool
		if ex.Label, keep, err = label(l); err != nil {
			return Rows{}, &RowError{File: s.Path, Line: r.Line, Field: names[lab], Err: err}
		}
		if !keep {
			out.Dropped++
			continue
		}
		out.Examples = append(out.Examples, ex)
		out.Lines = append(out.Lines, r.Line)
	}
	out.FileLabels = sortedCounts(fileLabels)
	if len(out.Examples) == 0 {
		if out.Dropped > 0 {
			return Rows{}, &RowError{File: s.Path, Line: 1, Err: fmt.Errorf("no data rows: drop_labels left out all %d", out.Dropped)}
		}
		return Rows{}, &RowError{File: s.Path, Line: 1, Err: errNoRows}
	}
	return out, nil
}

// errNoRows reports a file with a header (or nothing) and no examples: an
// empty evaluation set would otherwise surface much later as a NaN score.
var errNoRows = errors.New("no data rows: the file has no examples")

// Halves reads the file and returns BeLUGA's halves of it: validation
// and i.i.d. test (see Halve). It refuses a spec without Halve set, so a
// file meant to be used whole is not split by mistake.
func (s FileSpec) Halves() (validation, test []Example, err error) {
	if !s.Halve {
		return nil, nil, fmt.Errorf("data file %s: not declared to be halved (halve: true)", s.Path)
	}
	xs, err := s.Read()
	if err != nil {
		return nil, nil, err
	}
	v, t := Halve(len(xs), BeLUGAHalvingSeed)
	return Pick(xs, v), Pick(xs, t), nil
}
