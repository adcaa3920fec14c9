package corpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

func TestSources(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csvPath := write("a.csv", "id,text\n1,\"hello, world\"\n2,\n3,bye\n")
	tsvPath := write("b.tsv", "sentence\tlabel\nit 's good \t1\n")
	jsonPath := write("c.jsonl", `{"text": "one"}`+"\n\n"+`{"text": "two"}`+"\n")
	got, _, err := Sources([]string{csvPath + ":text", tsvPath + ":sentence", jsonPath + ":text"}, datasets.Dialect{}, nil, suites.SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"hello, world", "bye", "it 's good ", "one", "two"}; !reflect.DeepEqual(got, want) {
		t.Errorf("texts %q, want %q", got, want)
	}
	tests := []struct {
		files []string
		want  string
	}{
		{[]string{csvPath + ":tweet"}, `a.csv line 1 field "tweet": missing column`},
		{[]string{csvPath}, "FILE:COLUMN"},
		{[]string{jsonPath + ":label"}, `c.jsonl line 1 field "label": missing column`},
		{[]string{write("d.txt", "x") + ":text"}, "cannot tell the format"},
	}
	for _, tc := range tests {
		if _, _, err := Sources(tc.files, datasets.Dialect{}, nil, suites.SplitTrain); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.files, err, tc.want)
		}
	}
	if _, err := Suite("whatever.jsonl", suites.SplitTest, ""); err == nil || !strings.Contains(err.Error(), "held out") {
		t.Errorf("test split: %v", err)
	}
}

// A task whose runs split its suite stratified by a metadata column trains
// its tokenizer on that split's training cases, never on one the
// stratified split tests on (BeLUGA's split would put some there).
func TestSuiteSplitsAsTheRunsDo(t *testing.T) {
	s := &suites.Suite{Name: "s", Task: "s", Labels: []string{"a", "b"}}
	f := &suites.Functionality{Name: "f", Class: "c", Type: suites.MFT, Expect: suites.DefaultExpectation(suites.MFT)}
	for i := range 40 {
		meta := json.RawMessage(fmt.Sprintf(`{"ident": "v%d"}`, i%4))
		f.Cases = append(f.Cases, &suites.Case{ID: i, Inputs: []suites.Input{{Text: fmt.Sprint("text ", i)}}, Labels: []suites.Label{suites.ClassLabel(0)}, Meta: meta})
	}
	s.Functionalities = []*suites.Functionality{f}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := suites.Save(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := Suite(path, suites.SplitTrain, "ident")
	if err != nil {
		t.Fatal(err)
	}
	splits.AssignStratified(s, splits.BeLUGASeed, "ident")
	var want []string
	for _, c := range f.Cases {
		if c.Split == suites.SplitTrain {
			want = append(want, c.Inputs[0].Text)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("texts %q, want the stratified split's training cases %q", got, want)
	}
}
