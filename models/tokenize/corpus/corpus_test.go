package corpus

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
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
	if _, err := Suite("whatever.jsonl", suites.SplitTest); err == nil || !strings.Contains(err.Error(), "held out") {
		t.Errorf("test split: %v", err)
	}
}
