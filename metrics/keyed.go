package metrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/suites"
)

// CaseTable names the columns of a table of predictions keyed by case:
// what a published system's per-case outputs look like (HateCheck's
// published_predictions.csv: case_id, then one column of labels per
// model), where the model cannot be run again.
type CaseTable struct {
	// Path is a CSV, TSV or JSON-lines file (the format from its
	// extension), read by the project's one reader of labelled tables.
	Path string
	// ID is the column of the suite's case ids (default "case_id"), Pred
	// the column of predictions: a label name of the suite or a class
	// index, as a labelled data file's label column.
	ID, Pred string
}

// ReadCasePredictions reads a table of one predicted class per case and
// lays it out as Score reads predictions: one per scored input, in suite
// order. It serves suites whose scored cases each have one input (MFT
// tables such as HateCheck) and whose case ids are unique across
// functionalities. Every scored case needs a row; a row naming no case of
// the suite is refused with its line, as is a case id given twice. Rows
// of cases another split holds are skipped. The predictions carry no
// probabilities (confidence 1).
func ReadCasePredictions(s *suites.Suite, split suites.Split, t CaseTable) ([]Prediction, error) {
	if t.ID == "" {
		t.ID = "case_id"
	}
	if t.Pred == "" {
		return nil, fmt.Errorf("predictions %s: no prediction column named", t.Path)
	}
	if len(s.Labels) == 0 {
		return nil, fmt.Errorf("predictions %s: suite %s has no labels (an answer-text suite): a table of classes cannot score it", t.Path, s.Name)
	}
	type where struct {
		f     string
		c     *suites.Case
		split bool
	}
	cases := map[int]where{}
	scored := 0
	for _, f := range s.Functionalities {
		for i := range f.Cases {
			c := f.Cases[i]
			in := split == "" || c.Split == split
			if prev, dup := cases[c.ID]; dup {
				return nil, fmt.Errorf("predictions %s: suite %s numbers case %d in both %q and %q: a table keyed by case id cannot tell them apart (give one prediction line per input instead)", t.Path, s.Name, c.ID, prev.f, f.Name)
			}
			if in && len(c.Inputs) != 1 {
				return nil, fmt.Errorf("predictions %s: case %d of %q has %d inputs: a table keyed by case id holds one prediction a case (give one prediction line per input instead)", t.Path, c.ID, f.Name, len(c.Inputs))
			}
			cases[c.ID] = where{f.Name, c, in}
			if in {
				scored++
			}
		}
	}
	rows, err := datasets.FileSpec{Path: t.Path, TextColumn: t.ID, LabelColumn: t.Pred, Labels: datasets.LabelNames(s.Labels...)}.ReadRows()
	if err != nil {
		return nil, fmt.Errorf("predictions: %w", err)
	}
	byCase := make(map[*suites.Case]int, scored)
	line := map[int]int{}
	for i, ex := range rows.Examples {
		id, ok := wholeNumber(ex.Text)
		if !ok {
			return nil, &PredictionError{File: t.Path, Line: rows.Lines[i], Field: t.ID, Msg: fmt.Sprintf("%q is not a case id (a whole number)", ex.Text)}
		}
		w, found := cases[id]
		if !found {
			return nil, &PredictionError{File: t.Path, Line: rows.Lines[i], Field: t.ID, Msg: fmt.Sprintf("suite %s has no case %d", s.Name, id)}
		}
		if prev, dup := line[id]; dup {
			return nil, &PredictionError{File: t.Path, Line: rows.Lines[i], Field: t.ID, Msg: fmt.Sprintf("case %d again (line %d)", id, prev)}
		}
		line[id] = rows.Lines[i]
		if w.split {
			byCase[w.c] = ex.Label
		}
	}
	out := make([]Prediction, 0, scored)
	for f, c := range s.CasesIn(split) {
		class, ok := byCase[c]
		if !ok {
			return nil, &PredictionError{File: t.Path, Field: t.ID, Msg: fmt.Sprintf("no prediction for case %d (%q); every scored case needs one", c.ID, f.Name)}
		}
		out = append(out, Prediction{Class: class, Conf: 1})
	}
	return out, nil
}

// wholeNumber reads a case id as a table writes it: 12, or 12.0 (pandas).
func wholeNumber(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		return n, n >= 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}
