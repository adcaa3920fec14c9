package suites

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/shareddata"
)

const mhcTiny = "testdata/mhc_tiny.csv"

func mhcMapping() TableMapping {
	return TableMapping{Name: "mhc", Text: "test_case", Label: "label_gold", Functionality: "functionality", CaseID: "mhc_case_id", Labels: []string{"non-hateful", "hateful"}}
}

func mustRule(t *testing.T, s string) Rule {
	t.Helper()
	r, err := ParseRule(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestImportTable(t *testing.T) {
	mapFile := filepath.Join(t.TempDir(), "classes.csv")
	os.WriteFile(mapFile, []byte("class,functionality\nHate,derog_neg_emote_h\nSpelling,spell_char_repeat_h\nSpelling,spell_sent_arabazi_h\nCounter,counter_quote_nh\nIdentity,ident_neutral_nh\n"), 0o644)
	classMap, err := ReadClassMap(mapFile)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		edit    func(*TableMapping)
		classes []string
		types   string // type of each functionality, in order
		cases   int
		filt    int
		unlink  int
	}{
		{"one class per functionality", func(m *TableMapping) {}, []string{"derog_neg_emote_h", "spell_char_repeat_h", "counter_quote_nh", "ident_neutral_nh", "spell_sent_arabazi_h"}, "MFT MFT MFT MFT MFT", 7, 0, 0},
		{"prefix and regexp rules", func(m *TableMapping) {
			m.ClassRules = []Rule{mustRule(t, "spell_=Spelling"), mustRule(t, "/_nh$/=Non-hateful"), mustRule(t, "/./=Other")}
		}, []string{"Other", "Spelling", "Non-hateful"}, "MFT MFT MFT MFT MFT", 7, 0, 0},
		{"map file and a filter", func(m *TableMapping) {
			m.ClassMap = classMap
			m.Where = []Filter{{Column: "disagreement_in_template", Value: "False"}}
		}, []string{"Hate", "Spelling", "Counter", "Identity"}, "MFT MFT MFT MFT MFT", 6, 1, 0},
		{"links", func(m *TableMapping) {
			m.Link = "ref_case_id"
			m.LinkRules = []Rule{mustRule(t, "spell_=INV"), mustRule(t, "counter_=DIR")}
		}, nil, "MFT INV DIR MFT INV", 6, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mhcMapping()
			c.edit(&m)
			res, err := ImportTable(mhcTiny, m)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Suite
			if c.classes != nil && strings.Join(s.Classes(), "|") != strings.Join(c.classes, "|") {
				t.Errorf("classes %q, want %q", s.Classes(), c.classes)
			}
			var types []string
			for _, f := range s.Functionalities {
				types = append(types, string(f.Type))
			}
			if strings.Join(types, " ") != c.types {
				t.Errorf("types %v, want %s", types, c.types)
			}
			if s.NumCases() != c.cases || res.Filtered != c.filt || res.Unlinked != c.unlink || res.Rows != 7 {
				t.Errorf("%d cases, %d filtered, %d unlinked of %d rows; want %d, %d, %d of 7", s.NumCases(), res.Filtered, res.Unlinked, res.Rows, c.cases, c.filt, c.unlink)
			}
			// The suite survives the native format: text, metadata, pairs.
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := Save(path, s); err != nil {
				t.Fatal(err)
			}
			back, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			first := back.Functionalities[0].Cases[0]
			var meta map[string]string
			// The unmapped columns, and the case id as written (arabic-1):
			// the native format numbers its cases.
			if err := json.Unmarshal(first.Meta, &meta); err != nil || meta["target_ident"] != "women" || meta["ref_case_id"] != "" || meta["mhc_case_id"] != "arabic-1" || len(meta) != 4 {
				t.Errorf("meta %s (%v): want the 3 unmapped columns and the id as written", first.Meta, err)
			}
			if first.ID != 1 || first.Inputs[0].Text != "انا بكره الجيران." {
				t.Errorf("first case %d %q", first.ID, first.Inputs[0].Text)
			}
			if c.name == "links" {
				inv := back.Functionality("spell_sent_arabazi_h").Cases[0]
				if len(inv.Inputs) != 2 || inv.Inputs[0].Text != "انا بكره الجيران." || inv.Inputs[1].Text != "ana bakrah el jiran." || inv.ID != 7 {
					t.Errorf("linked case %+v: want the linked case's text, then the row's", inv)
				}
				for _, f := range back.Functionalities {
					for _, c := range f.Cases {
						want := "arabic-1"
						if c.ID == 2 || c.ID == 4 || c.ID == 6 {
							want = ""
						}
						if c.Group != want {
							t.Errorf("%s case %d: group %q, want %q", f.Name, c.ID, c.Group, want)
						}
					}
				}
				dir := back.Functionality("counter_quote_nh")
				if l0, _ := dir.Cases[0].LabelFor(0); l0.Class != 1 || dir.Expect.Kind != ExpectMonotonic || dir.Train.Direction != "not_more_conf" {
					t.Errorf("DIR functionality %+v", dir)
				}
			}
		})
	}
}

func TestImportTableErrorsNameFileLineField(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		return p
	}
	head := "mhc_case_id,functionality,test_case,label_gold,ref_case_id\n"
	cases := []struct {
		name, data string
		edit       func(*TableMapping)
		line       int
		field      string
		want       string
	}{
		{"missing column", "mhc_case_id,functionality,text,label_gold\n", nil, 1, "test_case", "missing column"},
		{"bad label", head + "a-1,f_h,x,hateful,\na-2,f_h,y,hate,\n", nil, 3, "label_gold", `label "hate"`},
		{"fraction id", head + "a-1,f_h,x,hateful,\n1.5,f_h,y,hateful,\n", nil, 3, "mhc_case_id", `"1.5" is not a case id: a number with a fraction`},
		{"duplicate id", head + "a-1,f_h,x,hateful,\na-1,f_h,y,hateful,\n", nil, 3, "mhc_case_id", `case id "a-1" again (line 2)`},
		{"duplicate number", "id,functionality,test_case,label_gold\n3,f_h,x,hateful\n3.0,f_h,y,hateful\n", func(m *TableMapping) { m.CaseID = "id" }, 3, "id", "case id 3 again (line 2)"},
		{"empty id", head + "a-1,f_h,x,hateful,\n ,f_h,y,hateful,\n", nil, 3, "mhc_case_id", "empty case id"},
		{"no class", head + "a-1,f_h,x,hateful,\n", func(m *TableMapping) { m.ClassRules = []Rule{{Prefix: "g_", Value: "G"}} }, 2, "functionality", "no class"},
		{"dangling link", head + "a-1,s_h,x,hateful,9.0\n", func(m *TableMapping) { m.Link, m.LinkRules = "ref_case_id", []Rule{{Prefix: "s_", Value: "INV"}} }, 2, "ref_case_id", "links no case"},
		{"cp1256", head + "a-1,f_h,x,hateful,\na-2,f_h,\xc7\xe1\xd1\xcc\xe1,hateful,\n", nil, 3, "", "not UTF-8"},
		{"filter column", head + "a-1,f_h,x,hateful,\n", func(m *TableMapping) { m.Where = []Filter{{Column: "nope", Value: "1"}} }, 1, "nope", "missing column"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := write(strings.ReplaceAll(c.name, " ", "_")+".csv", c.data)
			m := mhcMapping()
			if c.edit != nil {
				c.edit(&m)
			}
			_, err := ImportTable(path, m)
			var le *LineError
			if !errors.As(err, &le) || le.File != path || le.Line != c.line || le.Field != c.field || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %s line %d field %q saying %q", err, path, c.line, c.field, c.want)
			}
		})
	}
}

func TestParseRuleAndFilter(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"derog_=Derogation", "derog_=Derogation"}, {"/^spell_.*_h$/=Spelling variations", "/^spell_.*_h$/=Spelling variations"}} {
		r, err := ParseRule(c.in)
		if err != nil || r.String() != c.want {
			t.Errorf("ParseRule(%q) = %v, %v", c.in, r, err)
		}
	}
	for _, bad := range []string{"noequals", "=x", "x=", "/[/=x"} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) accepted", bad)
		}
	}
	f, err := ParseFilter("a!=b")
	if err != nil || !f.Not || f.Column != "a" || f.Value != "b" {
		t.Errorf("ParseFilter(a!=b) = %+v, %v", f, err)
	}
	if _, err := ParseFilter("ab"); err == nil {
		t.Error("ParseFilter(ab) accepted")
	}
}

// The HateCheck importer reads Multilingual HateCheck (mhc_case_id).
func TestImportHateCheckReadsMHC(t *testing.T) {
	res, err := ImportHateCheck(mhcTiny)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Suite
	if s.NumCases() != 7 || len(s.Classes()) != 4 || s.Functionalities[0].Cases[0].ID != 1 {
		t.Errorf("%d cases, classes %q", s.NumCases(), s.Classes())
	}
	res, err = ImportHateCheck(mhcTiny, Filter{Column: "disagreement_in_template", Value: "True", Not: true})
	if err != nil || res.Suite.NumCases() != 6 {
		t.Errorf("filtered: %v, %v", res, err)
	}
}

// The real Arabic MHC file: the counts of its PROVENANCE.
func TestImportHateCheckMHCArabic(t *testing.T) {
	path := shareddata.Path(t, "data/mhc-arabic/mhc_arabic_cases.csv")
	res, err := ImportHateCheck(path)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Suite
	st := Summarise(s)
	if len(st.Functionalities) != 27 || st.Classes != 11 || st.Cases != 3570 || st.Types[MFT] != 27 {
		t.Errorf("%d functionalities, %d classes, %d cases, types %v; want 27, 11, 3570, all MFT", len(st.Functionalities), st.Classes, st.Cases, st.Types)
	}
	if st.LabelCounts[0] != 1076 || st.LabelCounts[1] != 2494 {
		t.Errorf("labels %v %v, want non-hateful 1076, hateful 2494", st.Labels, st.LabelCounts)
	}
	arabizi := s.Functionality("spell_sent_arabazi_h")
	if arabizi == nil || len(arabizi.Cases) != 133 {
		t.Fatalf("spell_sent_arabazi_h: %+v", arabizi)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %v", res.Warnings)
	}
	res, err = ImportHateCheck(path, Filter{Column: "disagreement_in_template", Value: "False"})
	if err != nil || res.Suite.NumCases() != 3570-486 {
		t.Errorf("without disagreeing templates: %v, %v; want %d cases", res, err, 3570-486)
	}
}

func TestNativeSuiteNotUTF8IsRefusedWithItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte("\ufeff{\"suite\":\"s\",\"labels\":[\"a\",\"b\"]}\n{\"class\":\"C\",\"functionality\":\"f\",\"type\":\"MFT\",\"id\":0,\"inputs\":[\"ok\"],\"label\":0}\n{\"class\":\"C\",\"functionality\":\"f\",\"type\":\"MFT\",\"id\":1,\"inputs\":[\"\xc7\xe1\"],\"label\":0}\n"), 0o644)
	_, err := Open(path)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 3 || !strings.Contains(err.Error(), "not UTF-8") {
		t.Errorf("error %v, want line 3 not UTF-8", err)
	}
}

// TSV and JSON lines read as CSV does; JSON numbers and booleans become
// their text, so that ids, labels and filters work on them.
func TestImportTableFormats(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"t.tsv":   "id\tf\ttext\tlabel\tok\n1\tf_h\tone\t1\ttrue\n2\tf_h\ttwo\t0\tfalse\n",
		"t.jsonl": "{\"id\": 1, \"f\": \"f_h\", \"text\": \"one\", \"label\": 1, \"ok\": true}\n\n{\"id\": 2, \"f\": \"f_h\", \"text\": \"two\", \"label\": 0, \"ok\": false}\n",
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			os.WriteFile(path, []byte(data), 0o644)
			res, err := ImportTable(path, TableMapping{Text: "text", Label: "label", Functionality: "f", CaseID: "id", Where: []Filter{{Column: "ok", Value: "true"}}})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Suite
			c := s.Functionalities[0].Cases[0]
			if s.NumCases() != 1 || c.ID != 1 || c.Inputs[0].Text != "one" || s.Labels[c.Labels[0].Class] != "1" || string(c.Meta) != `{"ok":"true"}` || s.Name != "t" {
				t.Errorf("suite %s %q: case %+v meta %s", s.Name, s.Labels, c, c.Meta)
			}
		})
	}
}

// Case ids are read as given: a HANS pairID "ex7" numbers its case 7 and
// stays in the case's meta; "1.5" is refused (TestImportTableErrors...),
// never read as 5; names without distinct trailing numbers number their
// cases by row and stay in meta; whole numbers are the ids themselves.
func TestImportTableReadsCaseIDsAsGiven(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, ids string
		want      []int
		meta      []string // the id kept in meta, "" for none
	}{
		{"hans", "ex0 ex7 ex12", []int{0, 7, 12}, []string{"ex0", "ex7", "ex12"}},
		{"names", "a-1 b-1 c", []int{0, 1, 2}, []string{"a-1", "b-1", "c"}},
		{"numbers", "3 12.0 7", []int{3, 12, 7}, []string{"", "", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("pairID\tsubcase\tsentence1\tsentence2\tgold_label\n")
			for i, id := range strings.Fields(c.ids) {
				fmt.Fprintf(&b, "%s\tsn_NP/S\tThe judge saw the doctor %d.\tThe judge saw.\tnon-entailment\n", id, i)
			}
			path := filepath.Join(dir, c.name+".tsv")
			os.WriteFile(path, []byte(b.String()), 0o644)
			res, err := ImportTable(path, TableMapping{Text: "sentence1", Pair: "sentence2", Label: "gold_label", Functionality: "subcase",
				CaseID: "pairID", Labels: []string{"entailment", "non-entailment"}})
			if err != nil {
				t.Fatal(err)
			}
			for i, cs := range res.Suite.Functionalities[0].Cases {
				var meta map[string]string
				json.Unmarshal(cs.Meta, &meta)
				if cs.ID != c.want[i] || meta["pairID"] != c.meta[i] {
					t.Errorf("row %d: id %d, meta %s; want %d and pairID %q", i, cs.ID, cs.Meta, c.want[i], c.meta[i])
				}
			}
		})
	}
	// The HANS-like fixture: 60 pairs, pairID ex0 … ex59.
	res, err := ImportTable("../train/testdata/nli_hans_like.tsv", TableMapping{Text: "sentence1", Pair: "sentence2", Label: "gold_label",
		Functionality: "subcase", Class: "heuristic", CaseID: "pairID", Labels: []string{"entailment", "non-entailment"}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Suite.Functionality("ln_subject/object_swap").Cases[7]
	if c.ID != 7 || !strings.Contains(string(c.Meta), `"pairID":"ex7"`) || !strings.Contains(string(c.Meta), `"template":"temp1"`) || len(res.Suite.Classes()) != 3 {
		t.Errorf("HANS case 7: id %d meta %s; classes %q", c.ID, c.Meta, res.Suite.Classes())
	}
}

// A text must be a text: a JSON list or number in the text column is
// refused with its line; an empty text and one with a NUL byte are kept and
// warned about with theirs.
func TestImportTableTexts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		return p
	}
	m := TableMapping{Text: "text", Label: "label", Functionality: "f", Labels: []string{"a", "b"}}
	for _, bad := range []struct{ data, want string }{
		{`{"text": "ok", "label": "a", "f": "x"}` + "\n" + `{"text": ["b"], "label": "a", "f": "x"}` + "\n", `line 2 field "text": a list or an object, not a text (["b"])`},
		{`{"text": 7, "label": "a", "f": "x"}` + "\n", `line 1 field "text": a number, not a text (7)`},
	} {
		_, err := ImportTable(write("bad.jsonl", bad.data), m)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("error %v, want %q", err, bad.want)
		}
	}
	res, err := ImportTable(write("warn.csv", "text,label,f\nfine,a,x\n,b,x\n\"nul\x00here\",a,x\n   ,a,x\n"), m)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range res.Warnings {
		got = append(got, fmt.Sprintf("%d %s", w.Line, w.Err))
	}
	want := []string{"3 empty text", `4 control character U+0000 at byte 3 ("nul\x00here")`, "5 empty text"}
	if !slices.Equal(got, want) || res.Suite.NumCases() != 4 {
		t.Errorf("warnings %q, want %q; %d cases, want all 4 kept", got, want, res.Suite.NumCases())
	}
}

// A truncated .gz names the line it broke off in.
func TestImportTableTruncatedGzipNamesItsLine(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	fmt.Fprint(zw, "text,label,f\n")
	for i := range 3000 {
		fmt.Fprintf(zw, "text number %d with some words,a,f%d\n", i, i%7)
	}
	zw.Close()
	path := filepath.Join(t.TempDir(), "t.csv.gz")
	os.WriteFile(path, gz.Bytes()[:gz.Len()/2], 0o644)
	_, err := ImportTable(path, TableMapping{Text: "text", Label: "label", Functionality: "f"})
	var le *LineError
	if !errors.As(err, &le) || le.Line < 2 || !strings.Contains(err.Error(), "breaks off in this line") {
		t.Errorf("error %v, want the line the stream broke off in", err)
	}
}

// A table that names a column twice is refused, as an i.i.d. file is: which
// of the two cells a case took was an accident (the last, before).
func TestImportTableRefusesAColumnNamedTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dup.csv")
	os.WriteFile(path, []byte("text,label,functionality,text\na,x,f,b\nc,y,f,d\n"), 0o644)
	_, err := ImportTable(path, TableMapping{Text: "text", Label: "label", Functionality: "functionality"})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 1 || le.Field != "text" || !strings.Contains(err.Error(), "twice") {
		t.Errorf("error %v, want line 1 field text named twice", err)
	}
}

// A table's labels are mapped onto the suite's with the one label map
// (datasets.LabelMap); a map onto a label the suite lacks is refused.
func TestImportTableMapsLabels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.tsv")
	os.WriteFile(path, []byte("text\tlabel\tfunctionality\na\tOFFENSE\tf\nb\tOTHER\tf\nc\tOFFENSE\tg\n"), 0o644)
	m := TableMapping{Text: "text", Label: "label", Functionality: "functionality", Labels: []string{"non-hateful", "hateful"},
		LabelMap: datasets.LabelMapOf(map[string]string{"OFFENSE": "hateful", "OTHER": "non-hateful"})}
	res, err := ImportTable(path, m)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, f := range res.Suite.Functionalities {
		for _, c := range f.Cases {
			got = append(got, c.Labels[0].Class)
		}
	}
	if !slices.Equal(got, []int{1, 0, 1}) {
		t.Errorf("classes %v, want [1 0 1]", got)
	}
	m.LabelMap = datasets.LabelMapOf(map[string]string{"OFFENSE": "offensive"})
	if _, err := ImportTable(path, m); err == nil || !strings.Contains(err.Error(), `labels.OFFENSE: "offensive" is not a label of the suite`) {
		t.Errorf("bad map: %v", err)
	}
}
