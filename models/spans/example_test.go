package spans_test

import (
	"fmt"
	"os"
	"unicode"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models/spans"
)

// words is a stand-in tokenizer: one token per word, id 1000 + its length.
type words struct{}

func (words) TokenizeOffsets(text string) ([]spans.Token, error) {
	var out []spans.Token
	rs := []rune(text)
	for i := 0; i < len(rs); {
		if unicode.IsSpace(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && !unicode.IsSpace(rs[j]) {
			j++
		}
		out = append(out, spans.Token{ID: 1000 + j - i, Start: i, End: j})
		i = j
	}
	return out, nil
}

func ExampleFeatures() {
	cfg := spans.BeLUGA()
	cfg.MaxLength, cfg.Stride = 10, 2 // tiny windows to show the overflow
	ex := spans.SuiteExample("1", "aaaa bbb cc dddddd ee ffff g hh", "qq q", "ffff g")
	fs, _ := spans.Features(words{}, []datasets.QAExample{ex}, cfg)
	for _, f := range fs {
		fmt.Println(f.IDs, f.Start, f.End)
	}
	// Output:
	// [101 1002 1001 102 1004 1003 1002 1006 1002 102] 0 0
	// [101 1002 1001 102 1006 1002 1004 1001 1002 102] 6 7
}

func ExampleAnswers() {
	cfg := spans.BeLUGA()
	exs := []datasets.QAExample{{ID: "1", Context: "Mary is taller than John", Question: "Who is taller?"}}
	fs, _ := spans.Features(words{}, exs, cfg)
	start, end := make([]float32, cfg.MaxLength), make([]float32, cfg.MaxLength)
	start[5], end[5] = 3, 2 // "Mary": the first context token, after [CLS] who is taller? [SEP]
	answers, _ := spans.Answers(exs, fs, [][]float32{start}, [][]float32{end}, cfg)
	spans.WritePredOnly(os.Stdout, answers)
	// Output: Mary
}
