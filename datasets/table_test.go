package datasets

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// cellsOf returns every row's cells.
func cellsOf(t *Table) [][]string {
	var out [][]string
	for _, r := range t.Rows {
		out = append(out, r.Cells)
	}
	return out
}

// A TSV is read verbatim: texts that begin with a quote (tweets do) stay
// one row a line, as beluga run reads them; before one reader, the
// tokenizer's reader took them for RFC 4180 quotes and merged lines.
func TestReadTableQuoteInitialTSV(t *testing.T) {
	tab, err := ReadTable("testdata/quote_initial.tsv", Dialect{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{`"Quoted start, no end`, "OFFENSE", "f1"},
		{"plain text here", "OTHER", "f1"},
		{`"fully quoted"`, "OTHER", "f2"},
		{`another "inner" quote`, "OFFENSE", "f2"},
		{`"`, "OTHER", "f1"},
		{`@user said "so what`, "OFFENSE", "f2"},
		{`last line, at last"`, "OTHER", "f1"},
	}
	if got := cellsOf(tab); !reflect.DeepEqual(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	if want := (RowCount{Lines: 8, Header: 1, Rows: 7}); tab.Count != want {
		t.Errorf("count %v, want %v", tab.Count, want)
	}
	if tab.Rows[1].Line != 3 {
		t.Errorf("second row on line %d, want 3", tab.Rows[1].Line)
	}
	// Declared quoted, the same file merges lines: refused with the line
	// the quote opens on.
	_, err = ReadTable("testdata/quote_initial.tsv", Dialect{Quoted: true})
	var re *RowError
	if !errors.As(err, &re) || re.Line != 2 || !strings.Contains(err.Error(), "quote_initial.tsv line 2") {
		t.Errorf("quoted: error %v, want it refused at line 2", err)
	}
}

// A headerless file is read by position: the declared columns name them.
func TestReadTableHeaderless(t *testing.T) {
	tab, err := ReadTable("testdata/headerless.tsv", Dialect{Columns: []string{"text", "label", "-"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 4 || tab.Rows[0].Line != 1 || tab.Count != (RowCount{Lines: 4, Rows: 4}) {
		t.Fatalf("rows %q count %v, want 4 rows from line 1", cellsOf(tab), tab.Count)
	}
	if i, err := tab.Column("label"); err != nil || i != 1 {
		t.Errorf("label at %d (%v), want 1", i, err)
	}
	if _, err := tab.Column("-"); err == nil {
		t.Error(`column "-" found: it names no column`)
	}
	xs, err := FileSpec{Path: "testdata/headerless.tsv", Dialect: Dialect{Columns: []string{"text", "label", "-"}},
		Labels: LabelNames("OTHER", "OFFENSE")}.Read()
	want := []Example{{Text: `"Quoted start, no end`, Label: 1}, {Text: "plain text here"}, {Text: `"fully quoted"`}, {Text: `another "inner" quote`, Label: 1}}
	if err != nil || !reflect.DeepEqual(xs, want) {
		t.Errorf("FileSpec read %v (%v), want %v", xs, err, want)
	}
	// Without the columns the first line is taken for a header.
	_, err = FileSpec{Path: "testdata/headerless.tsv", Labels: LabelNames("OTHER", "OFFENSE")}.Read()
	if err == nil || !strings.Contains(err.Error(), `line 1 field "text": missing column`) || !strings.Contains(err.Error(), "columns: [text, label]") {
		t.Errorf("headerless without columns: %v, want the missing column and how to declare them", err)
	}
}

func TestReadTableDialect(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		path    string
		d       Dialect
		rows    [][]string
		count   RowCount
		wantErr string
	}{
		{"BOM, CRLF and a blank line", write("a.tsv", "\ufefftext\tlabel\r\na\t1\r\n\r\nb\t0\r\n"), Dialect{},
			[][]string{{"a", "1"}, {"b", "0"}}, RowCount{Lines: 4, Header: 1, Blank: 1, Rows: 2}, ""},
		{"CSV quotes and CRLF", write("b.csv", "text,label\r\n\"a, \"\"b\"\"\",1\r\n\r\nc,0\r\n"), Dialect{},
			[][]string{{`a, "b"`, "1"}, {"c", "0"}}, RowCount{Lines: 4, Header: 1, Blank: 1, Rows: 2}, ""},
		{"a quoted cell over lines merges rows", write("c.csv", "text,label\n\"a\nb\",1\nc,0\n"), Dialect{},
			nil, RowCount{}, `c.csv line 2 field "text": a quoted cell runs over 2 lines, to line 3`},
		{"declared multiline", write("d.csv", "text,label\n\"a\nb\",1\nc,0\n"), Dialect{Multiline: true},
			[][]string{{"a\nb", "1"}, {"c", "0"}}, RowCount{Lines: 4, Header: 1, Rows: 2}, ""},
		{"an unclosed quote", write("e.csv", "text,label\nok,1\n\"open,1\nc,0\n"), Dialect{},
			nil, RowCount{}, `e.csv line 3: the row's quoted cell runs on to line 4, where at column 5: extraneous or missing "`},
		{"a bare quote", write("f.csv", "text,label\nsaid \"hi\",1\n"), Dialect{},
			nil, RowCount{}, `f.csv line 2 column 6: bare " in non-quoted-field`},
		{"a duplicate header column", write("g.tsv", "text\tlabel\ttext\nA\t1\tB\n"), Dialect{},
			nil, RowCount{}, `g.tsv line 1 field "text": the header names the column twice (positions 1 and 3)`},
		{"a duplicate declared column", write("h.tsv", "A\t1\tB\n"), Dialect{Columns: []string{"text", "label", "text"}},
			nil, RowCount{}, `h.tsv line 1 field "text": columns names the column twice`},
		{"a short row", write("i.tsv", "text\tlabel\na\t1\nb\n"), Dialect{},
			nil, RowCount{}, "i.tsv line 3: 1 columns, header has 2"},
		{"a short headerless row", write("j.tsv", "a\t1\nb\n"), Dialect{Columns: []string{"text", "label"}},
			nil, RowCount{}, "j.tsv line 2: 1 columns, columns: names 2"},
		{"columns of a JSONL file", write("k.jsonl", `{"text":"a"}`+"\n"), Dialect{Columns: []string{"text"}},
			nil, RowCount{}, "names its fields itself"},
		{"two objects on a line", write("l.jsonl", `{"text":"a"} {"text":"b"}`+"\n"), Dialect{},
			nil, RowCount{}, "l.jsonl line 1: not a JSON object: more than one value"},
		{"empty", write("m.csv", "\n\n"), Dialect{},
			nil, RowCount{}, "m.csv line 1: empty file, want a header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := ReadTable(tc.path, tc.d)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cellsOf(tab); !reflect.DeepEqual(got, tc.rows) || tab.Count != tc.count {
				t.Errorf("rows %q count %+v, want %q %+v", got, tab.Count, tc.rows, tc.count)
			}
		})
	}
}

// An i.i.d. file's empty texts and NUL bytes are kept and warned of with
// their line and field, as suite import warns; a column named twice is
// refused (see TestReadTableDialect), as it is for a suite table.
func TestFileSpecWarnsOfTextsLikeTheSuiteImporter(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.tsv")
	os.WriteFile(p, []byte("text\tlabel\nfine\t0\n \t1\nnul\x00here\t0\n"), 0o644)
	rows, err := FileSpec{Path: p, Labels: LabelNames("a", "b")}.ReadRows()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range rows.Warnings {
		got = append(got, fmt.Sprintf("%d %s %s", w.Line, w.Field, w.Err))
	}
	want := []string{"3 text empty text", `4 text control character U+0000 at byte 3 ("nul\x00here")`}
	if !reflect.DeepEqual(got, want) || len(rows.Examples) != 3 {
		t.Errorf("warnings %q, want %q; %d rows, want all 3 kept", got, want, len(rows.Examples))
	}
}

// One label map for i.i.d. files, suite import and beluga test: FROM=TO
// pairs, each target checked against the names it maps onto.
func TestLabelMap(t *testing.T) {
	m, err := ParseLabelMap("--label-map", []string{"OFFENSE=hateful", " OTHER = non-hateful "})
	if err != nil || m["OFFENSE"].Name != "hateful" || m["OTHER"].Name != "non-hateful" {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range [][]string{{"OFFENSE"}, {"=x"}, {"a=1", "a=2"}} {
		if _, err := ParseLabelMap("--label-map", bad); err == nil || !strings.Contains(err.Error(), "--label-map") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if err := m.Check([]string{"non-hateful", "hateful"}, "the suite"); err != nil {
		t.Error(err)
	}
	if err := m.Check([]string{"no", "yes"}, "the suite"); err == nil || err.Error() != `labels.OFFENSE: "hateful" is not a label of the suite (no, yes)` {
		t.Errorf("check: %v", err)
	}
}

// A task's suite_labels is the same map with soft targets: a name reads as
// its one-hot, a list as its probabilities; the written form of a map of
// names is unchanged (run ids hash it), and only Targets takes a soft one.
func TestLabelMapSoftTargets(t *testing.T) {
	var m LabelMap
	if err := yaml.Unmarshal([]byte("polite: greeting\nnot_0: [0.25, 0.75]\n"), &m); err != nil {
		t.Fatal(err)
	}
	got, err := m.Targets([]string{"question", "greeting"}, "the task")
	want := map[string][]float64{"polite": {0, 1}, "not_0": {0.25, 0.75}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("targets %v %v, want %v", got, err, want)
	}
	if err := m.Check([]string{"question", "greeting"}, "the suite"); err == nil || !strings.Contains(err.Error(), "labels.not_0: [0.25 0.75]: a label here is read as one label of the suite") {
		t.Errorf("check of a soft target: %v", err)
	}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"a", "greeting", "b"}, "labels.not_0: 2 probabilities for 3 labels"},
		{[]string{"question", "hello"}, `labels.polite: "greeting" is not a label of the task`},
	} {
		var le *LabelError
		if _, err := m.Targets(tc.names, "the task"); !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a LabelError %q", tc.names, err, tc.want)
		}
	}
	b, err := json.Marshal(m)
	if err != nil || string(b) != `{"not_0":[0.25,0.75],"polite":"greeting"}` {
		t.Errorf("json %s %v", b, err)
	}
	var back LabelMap
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, m) {
		t.Errorf("json round trip %v %v", back, err)
	}
}
