package datasets

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/internal/nprand"
)

// Example is one labelled classification example: a text, or a text pair
// (QQP's question1 and question2).
type Example struct {
	Text   string
	Pair   string
	IsPair bool
	Label  int
	// Group is the value of the group column a split keeps together
	// (Split.Group), "" when the file is not split by group.
	Group string
}

// QAExample is one SQuAD question with its gold answers.
type QAExample struct {
	ID           string
	Title        string
	Context      string
	Question     string
	Answers      []string
	AnswerStarts []int
}

// RowError locates a problem in a data file.
type RowError struct {
	File  string
	Line  int
	Field string // the column's name, when the problem is in one cell
	// Column is the 1-based character position of a syntax error.
	Column int
	Err    error
}

func (e *RowError) Error() string {
	s := fmt.Sprintf("%s line %d", e.File, e.Line)
	if e.Column > 0 {
		s += fmt.Sprintf(" column %d", e.Column)
	}
	if e.Field != "" {
		s += fmt.Sprintf(" field %q", e.Field)
	}
	return s + ": " + e.Err.Error()
}

func (e *RowError) Unwrap() error { return e.Err }

// ReadSST2 reads a GLUE SST-2 file with the header "sentence\tlabel"
// (train.tsv, dev.tsv, or the labelled test file; CRLF line ends accepted).
func ReadSST2(path string) ([]Example, error) {
	var out []Example
	err := readTSV(path, []string{"sentence", "label"}, func(line int, f map[string]string) error {
		label, err := binaryLabel(f["label"])
		if err != nil {
			return &RowError{File: path, Line: line, Field: "label", Err: err}
		}
		out = append(out, Example{Text: f["sentence"], Label: label})
		return nil
	})
	return out, err
}

// ReadQQP reads a GLUE QQP file (columns id, qid1, qid2, question1,
// question2, is_duplicate).
func ReadQQP(path string) ([]Example, error) {
	var out []Example
	err := readTSV(path, []string{"question1", "question2", "is_duplicate"}, func(line int, f map[string]string) error {
		label, err := binaryLabel(f["is_duplicate"])
		if err != nil {
			return &RowError{File: path, Line: line, Field: "is_duplicate", Err: err}
		}
		out = append(out, Example{Text: f["question1"], Pair: f["question2"], IsPair: true, Label: label})
		return nil
	})
	return out, err
}

func binaryLabel(s string) (int, error) {
	l, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || (l != 0 && l != 1) {
		return 0, fmt.Errorf("label %q is not 0 or 1", s)
	}
	return l, nil
}

// readTSV reads a tab-separated file (verbatim, as Dialect says) with a
// header naming at least want, calling row for each data line with its
// fields by column name.
func readTSV(path string, want []string, row func(line int, fields map[string]string) error) error {
	t, err := ReadTable(path, Dialect{Format: TSV})
	if err != nil {
		return err
	}
	col := make([]int, len(want))
	for k, w := range want {
		if col[k], err = t.Column(w); err != nil {
			return err
		}
	}
	if len(t.Rows) == 0 {
		return &RowError{File: path, Line: 1, Err: errNoRows}
	}
	fields := map[string]string{}
	for _, r := range t.Rows {
		for k, w := range want {
			fields[w] = r.Cells[col[k]]
		}
		if err := row(r.Line, fields); err != nil {
			return err
		}
	}
	return nil
}

// ReadSQuAD reads a SQuAD v1.1 JSON file.
func ReadSQuAD(path string) ([]QAExample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeSQuAD(f, path)
}

func decodeSQuAD(r io.Reader, path string) ([]QAExample, error) {
	var doc struct {
		Data []struct {
			Title      string `json:"title"`
			Paragraphs []struct {
				Context string `json:"context"`
				QAs     []struct {
					ID       string `json:"id"`
					Question string `json:"question"`
					Answers  []struct {
						Text  string `json:"text"`
						Start int    `json:"answer_start"`
					} `json:"answers"`
				} `json:"qas"`
			} `json:"paragraphs"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("squad %s: %w", path, err)
	}
	var out []QAExample
	for _, art := range doc.Data {
		for _, p := range art.Paragraphs {
			for _, qa := range p.QAs {
				if qa.ID == "" || qa.Question == "" {
					return nil, fmt.Errorf("squad %s: article %q: a question without id or text", path, art.Title)
				}
				ex := QAExample{ID: qa.ID, Title: art.Title, Context: p.Context, Question: qa.Question}
				for _, a := range qa.Answers {
					ex.Answers = append(ex.Answers, a.Text)
					ex.AnswerStarts = append(ex.AnswerStarts, a.Start)
				}
				out = append(out, ex)
			}
		}
	}
	return out, nil
}

// BeLUGAHalvingSeed is the seed BeLUGA passes to train_test_split when it
// halves an official validation set.
const BeLUGAHalvingSeed = 42

// Halve splits n row indices as HuggingFace's train_test_split(test_size=0.5,
// seed=seed) does, returning the validation half (HuggingFace's "train")
// and the i.i.d. test half, each in permutation order.
func Halve(n int, seed uint32) (validation, test []int) {
	perm := nprand.Permutation(nprand.NewGenerator(seed), n)
	nTest := (n + 1) / 2
	return perm[nTest:], perm[:nTest]
}

// Pick returns xs at the given indices.
func Pick[T any](xs []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = xs[j]
	}
	return out
}
