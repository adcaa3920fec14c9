// Package corpus gathers the texts a tokenizer is trained on or measured
// with: a column of CSV, TSV or JSON-lines files, and the inputs of a
// suite's cases of one split (BeLUGA's split assigned where the suite has
// none). A tokenizer for a task is trained on its i.i.d. training data and
// the suite's training part, never its test part.
package corpus

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// File reads column from a .csv, .tsv, .jsonl or .jsonl.gz file (the first
// row of a CSV or TSV file names its columns). Empty values are skipped.
func File(path, column string) ([]string, error) {
	if column == "" {
		return nil, fmt.Errorf("%s: no column named (FILE:COLUMN)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = gz
	}
	switch {
	case strings.HasSuffix(path, ".csv"), strings.HasSuffix(path, ".tsv"):
		cr := csv.NewReader(r)
		cr.FieldsPerRecord = -1
		if strings.HasSuffix(path, ".tsv") {
			cr.Comma, cr.LazyQuotes = '\t', true
		}
		head, err := cr.Read()
		if err != nil {
			return nil, fmt.Errorf("%s: header: %w", path, err)
		}
		k := -1
		for i, h := range head {
			if strings.TrimSpace(h) == column {
				k = i
			}
		}
		if k < 0 {
			return nil, fmt.Errorf("%s: no column %q (columns: %s)", path, column, strings.Join(head, ", "))
		}
		var out []string
		for line := 2; ; line++ {
			rec, err := cr.Read()
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if k >= len(rec) {
				return nil, fmt.Errorf("%s: record %d has no field %q", path, line, column)
			}
			if s := rec[k]; strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
	case strings.HasSuffix(path, ".jsonl"), strings.HasSuffix(path, ".jsonl.gz"):
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<26)
		var out []string
		for line := 1; sc.Scan(); line++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var row map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			raw, ok := row[column]
			if !ok {
				return nil, fmt.Errorf("%s:%d: no field %q", path, line, column)
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("%s:%d: field %q is not a string", path, line, column)
			}
			if strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: unknown format (want .csv, .tsv, .jsonl or .jsonl.gz)", path)
}

// Suite reads the texts (and pair texts) of the cases of one split of a
// suite file (any format suites.Open reads). The test split is refused:
// a tokenizer must not see what the model is tested on.
func Suite(path string, split suites.Split) ([]string, error) {
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
	if suites.Summarise(s).Splits[suites.SplitTest].Cases == 0 {
		splits.Assign(s, splits.BeLUGASeed)
	}
	var out []string
	for _, f := range s.Functionalities {
		for _, c := range f.Cases {
			if c.Split != split {
				continue
			}
			for _, in := range c.Inputs {
				out = append(out, in.Text)
				if in.IsPair {
					out = append(out, in.Pair)
				}
			}
		}
	}
	return out, nil
}

// Sources reads FILE:COLUMN specs (the column after the last colon) and
// suite files' split, in order.
func Sources(files []string, suiteFiles []string, split suites.Split) ([]string, error) {
	var out []string
	for _, spec := range files {
		i := strings.LastIndex(spec, ":")
		if i < 0 {
			return nil, fmt.Errorf("input %q: want FILE:COLUMN", spec)
		}
		t, err := File(spec[:i], spec[i+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, t...)
	}
	for _, p := range suiteFiles {
		t, err := Suite(p, split)
		if err != nil {
			return nil, err
		}
		out = append(out, t...)
	}
	return out, nil
}
