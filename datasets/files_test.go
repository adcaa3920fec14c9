package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/internal/yamlpath"
)

func TestFileSpecRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, ".gz") {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write([]byte(text))
			zw.Close()
			os.WriteFile(p, b.Bytes(), 0o644)
			return p
		}
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	three := LabelNames("neg", "neu", "pos")
	single := func(text string, label int) Example { return Example{Text: text, Label: label} }
	tests := []struct {
		name string
		spec FileSpec
		want []Example
	}{
		{"tsv with names", FileSpec{Path: write("a.tsv", "id\tsentence\tgold\n1\tgood\tpos\n2\tmeh\tneu\r\n\n3\tbad\tneg\n"),
			TextColumn: "sentence", LabelColumn: "gold", Labels: three},
			[]Example{single("good", 2), single("meh", 1), single("bad", 0)}},
		{"tsv with indices", FileSpec{Path: write("b.tsv", "text\tlabel\ngood\t2\nbad\t0\n"), Labels: three},
			[]Example{single("good", 2), single("bad", 0)}},
		{"csv with quotes and pairs", FileSpec{Path: write("c.csv", "\ufeffq1,q2,dup\n\"How old, really?\",\"What \"\"age\"\"?\",1\nA,B,0\n"),
			TextColumn: "q1", PairColumn: "q2", LabelColumn: "dup", Labels: LabelNames("different", "duplicate")},
			[]Example{{Text: "How old, really?", Pair: `What "age"?`, IsPair: true, Label: 1}, {Text: "A", Pair: "B", IsPair: true}}},
		{"jsonl with string and number labels", FileSpec{Path: write("d.jsonl", `{"text": "good", "label": "pos"}`+"\n\n"+`{"text": "bad", "label": 0, "extra": [1]}`+"\n"), Labels: three},
			[]Example{single("good", 2), single("bad", 0)}},
		{"names win over indices", FileSpec{Path: write("e.csv", "text,label\nfine,1\ngreat,2\n"), Labels: LabelNames("1", "2")},
			[]Example{single("fine", 0), single("great", 1)}},
		{"gzip and explicit format", FileSpec{Path: write("f.data.gz", "text\tlabel\nok\tneu\n"), Dialect: Dialect{Format: TSV}, Labels: three},
			[]Example{single("ok", 1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.spec.Read()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFileSpecErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	two := LabelNames("no", "yes")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	fmt.Fprint(zw, "text\tlabel\n"+strings.Repeat("a fine line of text\tyes\n", 200))
	zw.Close()
	truncated := write("t.tsv.gz", gz.String()[:gz.Len()/2])
	tests := []struct {
		name string
		spec FileSpec
		want string
	}{
		{"header only", FileSpec{Path: write("h.tsv", "text\tlabel\n"), Labels: two}, "h.tsv line 1: no data rows"},
		{"empty", FileSpec{Path: write("e.csv", ""), Labels: two}, "e.csv line 1: empty file"},
		{"unknown label", FileSpec{Path: write("l.tsv", "text\tlabel\na\tyes\nb\tmaybe\n"), Labels: two}, `l.tsv line 3 field "label": label "maybe" is none of`},
		{"index out of range", FileSpec{Path: write("i.csv", "text,label\na,2\n"), Labels: two}, `i.csv line 2 field "label"`},
		{"missing column", FileSpec{Path: write("m.csv", "sentence,label\na,1\n"), Labels: two}, `m.csv line 1 field "text": missing column`},
		{"missing pair column", FileSpec{Path: write("p.tsv", "text\tlabel\na\t1\n"), PairColumn: "text_b", Labels: two}, `field "text_b": missing column`},
		{"short tsv row", FileSpec{Path: write("s.tsv", "text\tlabel\na\t1\nb\n"), Labels: two}, "s.tsv line 3: 1 columns, header has 2"},
		{"csv quote error", FileSpec{Path: write("q.csv", "text,label\na,1\n\"b\"x,1\n"), Labels: two}, "q.csv line 3 column 3"},
		{"csv short row", FileSpec{Path: write("r.csv", "text,label\na,1\nb\n"), Labels: two}, "r.csv line 3"},
		{"jsonl syntax", FileSpec{Path: write("j.jsonl", `{"text": "a", "label": 1}`+"\n"+`{"text": "b", "label": }`+"\n"), Labels: two}, "j.jsonl line 2 column"},
		{"jsonl missing text", FileSpec{Path: write("k.jsonl", `{"label": 1}`+"\n"), Labels: two}, `k.jsonl line 1 field "text": missing`},
		{"jsonl text not a string", FileSpec{Path: write("n.jsonl", `{"text": ["a"], "label": 1}`+"\n"), Labels: two}, `n.jsonl line 1 field "text"`},
		{"one label", FileSpec{Path: write("o.tsv", "text\tlabel\na\t0\n"), Labels: LabelNames("only")}, "at least two label names"},
		{"unknown extension", FileSpec{Path: write("u.txt", "x"), Labels: two}, "set format"},
		{"unknown format", FileSpec{Path: write("v.tsv", "x"), Dialect: Dialect{Format: "xml"}, Labels: two}, `format "xml"`},
		{"missing file", FileSpec{Path: filepath.Join(dir, "absent.tsv"), Labels: two}, "file not found"},
		{"truncated gzip", FileSpec{Path: truncated, Labels: two}, "line 2: the gzip stream is truncated: it breaks off in this line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.spec.Read()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestHeaderOnlySST2IsAnError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dev.tsv")
	os.WriteFile(p, []byte("sentence\tlabel\n"), 0o644)
	if _, err := ReadSST2(p); err == nil || !strings.Contains(err.Error(), "no data rows") {
		t.Errorf("header-only dev.tsv: %v, want a no-data-rows error", err)
	}
}

func TestFileSpecHalves(t *testing.T) {
	spec := FileSpec{Path: "testdata/intent.csv", TextColumn: "utterance", LabelColumn: "intent",
		Labels: LabelNames("greeting", "question", "complaint")}
	if _, _, err := spec.Halves(); err == nil {
		t.Error("Halves of a spec without halve: true succeeded")
	}
	all, err := spec.Read()
	if err != nil {
		t.Fatal(err)
	}
	spec.Halve = true
	val, test, err := spec.Halves()
	if err != nil {
		t.Fatal(err)
	}
	vi, ti := Halve(len(all), BeLUGAHalvingSeed)
	if len(test) != 5 || len(val) != 5 || !reflect.DeepEqual(val, Pick(all, vi)) || !reflect.DeepEqual(test, Pick(all, ti)) {
		t.Errorf("halves %d / %d do not follow Halve", len(val), len(test))
	}
}

func ExampleFileSpec_Read() {
	spec := FileSpec{
		Path:        "testdata/intent.csv",
		TextColumn:  "utterance",
		LabelColumn: "intent",
		Labels:      LabelNames("greeting", "question", "complaint"),
	}
	examples, err := spec.Read()
	if err != nil {
		fmt.Println(err)
		return
	}
	counts := make([]int, len(spec.Labels.Names))
	for _, e := range examples {
		counts[e.Label]++
	}
	fmt.Println(len(examples), "examples:", counts)
	fmt.Printf("%q → %s\n", examples[0].Text, spec.Labels.Names[examples[0].Label])
	// Output:
	// 10 examples: [4 3 3]
	// "hello there, how are you" → greeting
}

// sst2Spec reads GLUE's SST-2 through the generic reader.
func sst2Spec(path string) FileSpec {
	return FileSpec{Path: path, TextColumn: "sentence", Labels: LabelNames("negative", "positive")}
}

func TestFileSpecAgreesWithReadSST2(t *testing.T) {
	path := shareddata.Path(t, "data/sst2/dev.tsv")
	want, err := ReadSST2(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sst2Spec(path).Read()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FileSpec read %d examples differently from ReadSST2's %d", len(got), len(want))
	}
}

func BenchmarkFileSpecReadSST2Train(b *testing.B) {
	spec := sst2Spec(shareddata.Path(b, "data/sst2/train.tsv"))
	for b.Loop() {
		if _, err := spec.Read(); err != nil {
			b.Fatal(err)
		}
	}
}

// A three-way NLI file read by a two-way task: neutral and contradiction
// map onto non-entailment, rows without a gold label ("-") are left out
// and counted, and a label neither mapped nor dropped is refused with its
// line and the ways out.
func TestLabelMapThreeToTwo(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nli.jsonl")
	os.WriteFile(path, []byte(`{"premise": "A man sleeps.", "hypothesis": "A man rests.", "gold": "entailment"}
{"premise": "A man sleeps.", "hypothesis": "A man dreams.", "gold": "neutral"}
{"premise": "A man sleeps.", "hypothesis": "A man runs.", "gold": "contradiction"}
{"premise": "A dog barks.", "hypothesis": "An animal is loud.", "gold": "-"}
{"premise": "A dog barks.", "hypothesis": "A dog is quiet.", "gold": "contradiction"}
`), 0o644)
	spec := FileSpec{Path: path, TextColumn: "premise", PairColumn: "hypothesis", LabelColumn: "gold",
		Labels:     Labels{Names: []string{"entailment", "non-entailment"}, Map: LabelMap{"neutral": Name("non-entailment"), "contradiction": Name("non-entailment")}},
		DropLabels: []string{"-"}}
	rows, err := spec.ReadRows()
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, x := range rows.Examples {
		got = append(got, x.Label)
	}
	if !slices.Equal(got, []int{0, 1, 1, 1}) || !slices.Equal(rows.Lines, []int{1, 2, 3, 5}) || rows.Dropped != 1 {
		t.Errorf("labels %v at lines %v, %d dropped; want [0 1 1 1] at [1 2 3 5], 1 dropped", got, rows.Lines, rows.Dropped)
	}
	want := []LabelCount{{"-", 1}, {"contradiction", 2}, {"entailment", 1}, {"neutral", 1}}
	if !reflect.DeepEqual(rows.FileLabels, want) {
		t.Errorf("file labels %v, want %v", rows.FileLabels, want)
	}
	// Without the drop list, "-" is refused at its line, naming both ways.
	spec.DropLabels = nil
	_, err = spec.ReadRows()
	if err == nil || !strings.Contains(err.Error(), `line 4 field "gold": label "-" is none of`) || !strings.Contains(err.Error(), "drop_labels: [-]") {
		t.Errorf("unmapped label: %v", err)
	}
	// A map onto a label the task does not have, a label both mapped and
	// dropped, a task label dropped: refused before any row is read.
	for _, bad := range []FileSpec{
		{Path: path, Labels: Labels{Names: []string{"entailment", "non-entailment"}, Map: LabelMapOf(map[string]string{"neutral": "neutral"})}},
		{Path: path, Labels: Labels{Names: []string{"entailment", "non-entailment"}, Map: LabelMapOf(map[string]string{"neutral": "non-entailment"})}, DropLabels: []string{"neutral"}},
		{Path: path, Labels: LabelNames("entailment", "non-entailment"), DropLabels: []string{"entailment"}},
	} {
		if _, err := bad.ReadRows(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// labels: reads as a list of names or a mapping, in YAML (strictly, with
// the line of a value that is neither) and in JSON, and writes back the
// shape it was given: a spec without a map keeps its recorded form.
func TestLabelsYAMLAndJSON(t *testing.T) {
	var f FileSpec
	if err := yamlpath.Decode([]byte("path: a.jsonl\nlabels: {neutral: non-entailment, contradiction: non-entailment}\ndrop_labels: ['-']\n"), &f); err != nil {
		t.Fatal(err)
	}
	if f.Labels.Map["neutral"].Name != "non-entailment" || len(f.Labels.Names) != 0 || !slices.Equal(f.DropLabels, []string{"-"}) {
		t.Errorf("mapping decoded as %+v", f)
	}
	b, _ := json.Marshal(f)
	if !strings.Contains(string(b), `"labels":{"contradiction":"non-entailment","neutral":"non-entailment"},"drop_labels":["-"]`) {
		t.Errorf("JSON %s", b)
	}
	var back FileSpec
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Labels, f.Labels) {
		t.Errorf("JSON round trip: %+v, %v", back.Labels, err)
	}
	var list FileSpec
	if err := yamlpath.Decode([]byte("path: a.csv\nlabels: [neg, pos]\n"), &list); err != nil || !slices.Equal(list.Labels.Names, []string{"neg", "pos"}) {
		t.Fatalf("list: %+v, %v", list.Labels, err)
	}
	if b, _ := json.Marshal(list); !strings.Contains(string(b), `"labels":["neg","pos"]`) {
		t.Errorf("list JSON %s", b)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"path: a\nlabels: {neutral: [x]}\n", "line 2: field labels: neutral: want the task label"},
		{"path: a\nlabels: {neutral: ~}\n", "line 2: field labels: neutral: want the task label"},
		{"path: a\nlabels: oops\n", "line 2: field labels: want a list of the task's label names, or a mapping"},
	} {
		var g FileSpec
		if err := yamlpath.Decode([]byte(bad.yaml), &g); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.yaml, err, bad.want)
		}
	}
}
