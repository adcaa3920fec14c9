package splits

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

func TestCaseMeta(t *testing.T) {
	for _, tc := range []struct {
		meta string
		want string
		ok   bool
	}{
		{`{"target_ident": "women", "templ_id": "1"}`, "women", true},
		{`{"target_ident": 3}`, "3", true},
		{`{"target_ident": null}`, "", false},
		{`{"target_ident": ""}`, "", false},
		{`{"other": "x"}`, "", false},
		{`[{}, ["old", "new"]]`, "", false},
		{``, "", false},
	} {
		got, ok := CaseMeta(&suites.Case{Meta: json.RawMessage(tc.meta)}, "target_ident")
		if got != tc.want || ok != tc.ok {
			t.Errorf("CaseMeta(%s) = %q, %v; want %q, %v", tc.meta, got, ok, tc.want, tc.ok)
		}
	}
}

// A metadata partition has one fold per value, in order of first
// appearance; each fold removes and scores the functionalities with a
// case of its value, and holds out exactly those cases.
func TestMetaFolds(t *testing.T) {
	mk := func(name string, idents ...string) *suites.Functionality {
		f := &suites.Functionality{Name: name, Class: "C", Type: suites.MFT}
		for i, id := range idents {
			c := &suites.Case{ID: i}
			if id != "" {
				c.Meta = json.RawMessage(`{"target_ident": "` + id + `"}`)
			}
			f.Cases = append(f.Cases, c)
		}
		return f
	}
	s := &suites.Suite{Functionalities: []*suites.Functionality{
		mk("a", "women", "gay people", "women"),
		mk("b", "", "muslims"),
		mk("c", "gay people"),
	}}
	kind := ByMeta("target_ident")
	if col, ok := kind.MetaColumn(); !ok || col != "target_ident" {
		t.Fatalf("MetaColumn = %q, %v", col, ok)
	}
	if _, ok := ByClass.MetaColumn(); ok {
		t.Error("class is not a metadata partition")
	}
	folds := Folds(s, kind, DefaultFoldOptions)
	var names []string
	for _, f := range folds {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"women", "gay people", "muslims"}) {
		t.Fatalf("folds %v", names)
	}
	want := map[string][]string{"women": {"a"}, "gay people": {"a", "c"}, "muslims": {"b"}}
	for _, fd := range folds {
		if !slices.Equal(fd.Removed, want[fd.Name]) || !slices.Equal(fd.Scored, want[fd.Name]) {
			t.Errorf("fold %s: removed %v scored %v, want %v", fd.Name, fd.Removed, fd.Scored, want[fd.Name])
		}
		for _, f := range s.Functionalities {
			for _, c := range f.Cases {
				v, _ := CaseMeta(c, "target_ident")
				if got := fd.HoldsOut(f, c); got != (v == fd.Name) {
					t.Errorf("fold %s: HoldsOut(%s case %d, %q) = %v", fd.Name, f.Name, c.ID, v, got)
				}
			}
		}
	}
	// A functionality fold holds out every case of its functionality.
	fd := Folds(s, ByFunctionality, DefaultFoldOptions)[1]
	if !fd.HoldsOut(s.Functionalities[1], s.Functionalities[1].Cases[0]) || fd.HoldsOut(s.Functionalities[0], s.Functionalities[0].Cases[0]) {
		t.Error("functionality fold b: wrong cases held out")
	}
}
