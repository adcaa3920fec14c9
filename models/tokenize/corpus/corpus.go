// Package corpus gathers the texts a tokenizer is trained on or measured
// with: a column of CSV, TSV or JSON-lines files (read as beluga run reads
// them: datasets.ReadTable), and the inputs of a
// suite's cases of one split (BeLUGA's split assigned where the suite has
// none). A tokenizer for a task is trained on its i.i.d. training data and
// the suite's training part, never its test part.
package corpus

import (
	"errors"
	"fmt"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// Account says what File read of one file: its lines (datasets.RowCount)
// and the rows whose text was empty, which are left out.
type Account struct {
	Path  string
	Count datasets.RowCount
	Empty int
}

func (a Account) String() string {
	return fmt.Sprintf("%s: %s; %d texts, %d empty left out", a.Path, a.Count, a.Count.Rows-a.Empty, a.Empty)
}

// File reads column from a CSV, TSV or JSON-lines file (".gz" decompressed)
// with datasets.ReadTable under the dialect d, so that it reads the rows
// beluga run reads. Empty values are left out, and counted.
func File(path, column string, d datasets.Dialect) ([]string, Account, error) {
	acc := Account{Path: path}
	if column == "" {
		return nil, acc, fmt.Errorf("%s: no column named (FILE:COLUMN)", path)
	}
	t, err := datasets.ReadTable(path, d)
	if err != nil {
		return nil, acc, err
	}
	k, err := t.Column(column)
	if err != nil {
		return nil, acc, err
	}
	acc.Count = t.Count
	var out []string
	for _, r := range t.Rows {
		s, kind := r.Cell(k)
		if kind == "absent" {
			return nil, acc, &datasets.RowError{File: path, Line: r.Line, Field: column, Err: errors.New("missing")}
		}
		if kind != "" {
			return nil, acc, &datasets.RowError{File: path, Line: r.Line, Field: column, Err: fmt.Errorf("%s, not a text", kind)}
		}
		if strings.TrimSpace(s) == "" {
			acc.Empty++
			continue
		}
		out = append(out, s)
	}
	return out, acc, nil
}

// Suite reads the texts (and pair texts) of the cases of one split of a
// suite file (any format suites.Open reads), split as a run splits it
// (splits.AssignFor: stratified by the metadata column stratify when set,
// as a task's split: {stratify: COLUMN} says). The test split is refused:
// a tokenizer must not see what the model is tested on.
func Suite(path string, split suites.Split, stratify string) ([]string, error) {
	if split == suites.SplitTest {
		return nil, fmt.Errorf("suite %s: the test split is held out; train on %s (or %s)", path, suites.SplitTrain, suites.SplitValidation)
	}
	if split != suites.SplitTrain && split != suites.SplitValidation {
		return nil, fmt.Errorf("suite %s: split %q, want %s or %s", path, split, suites.SplitTrain, suites.SplitValidation)
	}
	s, err := suites.Open(path)
	if err != nil {
		return nil, err
	}
	if err := splits.AssignFor(s, stratify); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range s.CasesIn(split) {
		for _, in := range c.Inputs {
			out = append(out, in.Text)
			if in.IsPair {
				out = append(out, in.Pair)
			}
		}
	}
	return out, nil
}

// Sources reads FILE:COLUMN specs (the column after the last colon; CSV
// and TSV files under the dialect d) and suite files' split, in order,
// with what was read of each file.
func Sources(files []string, d datasets.Dialect, suiteFiles []string, split suites.Split) ([]string, []Account, error) {
	var out []string
	var accs []Account
	for _, spec := range files {
		i := strings.LastIndex(spec, ":")
		if i < 0 {
			return nil, nil, fmt.Errorf("input %q: want FILE:COLUMN", spec)
		}
		t, acc, err := File(spec[:i], spec[i+1:], d)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, t...)
		accs = append(accs, acc)
	}
	for _, p := range suiteFiles {
		t, err := Suite(p, split, "")
		if err != nil {
			return nil, nil, err
		}
		out = append(out, t...)
	}
	return out, accs, nil
}
