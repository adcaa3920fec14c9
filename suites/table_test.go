package suites

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
			if err := json.Unmarshal(first.Meta, &meta); err != nil || meta["target_ident"] != "women" || meta["ref_case_id"] != "" || len(meta) != 3 {
				t.Errorf("meta %s (%v): want the 3 unmapped columns", first.Meta, err)
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
		{"bad id", head + "a-1,f_h,x,hateful,\nx,f_h,y,hateful,\n", nil, 3, "mhc_case_id", "not a case id"},
		{"duplicate id", head + "a-1,f_h,x,hateful,\nb-1,f_h,y,hateful,\n", nil, 3, "mhc_case_id", "again (line 2)"},
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
	s, err := ImportHateCheck(mhcTiny)
	if err != nil {
		t.Fatal(err)
	}
	if s.NumCases() != 7 || len(s.Classes()) != 4 || s.Functionalities[0].Cases[0].ID != 1 {
		t.Errorf("%d cases, classes %q", s.NumCases(), s.Classes())
	}
	s, err = ImportHateCheck(mhcTiny, Filter{Column: "disagreement_in_template", Value: "True", Not: true})
	if err != nil || s.NumCases() != 6 {
		t.Errorf("filtered: %v, %v", s, err)
	}
}

// The real Arabic MHC file: the counts of its PROVENANCE.
func TestImportHateCheckMHCArabic(t *testing.T) {
	path := shareddata.Path(t, "data/mhc-arabic/mhc_arabic_cases.csv")
	s, err := ImportHateCheck(path)
	if err != nil {
		t.Fatal(err)
	}
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
	s, err = ImportHateCheck(path, Filter{Column: "disagreement_in_template", Value: "False"})
	if err != nil || s.NumCases() != 3570-486 {
		t.Errorf("without disagreeing templates: %v cases, %v; want %d", s.NumCases(), err, 3570-486)
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
