package train

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// A run whose spec stratifies the suite's split by a metadata column
// splits it so, over the split the file holds; a column no case has is
// refused.
func TestRunSplitsTheSuiteStratified(t *testing.T) {
	var idents []string
	for i := range 48 {
		idents = append(idents, []string{"women", "trans people", "gay people", ""}[i%4])
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := suites.Save(path, identSuite(idents...)); err != nil { // every case in train
		t.Fatal(err)
	}
	spec := RunSpec{Suite: path, SuiteStratify: "target_ident"}
	s, _, err := spec.openSuite()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range splits.Balance(s, "target_ident") {
		// Two functionalities of 48 cases, 24 train, 12 validation, 12
		// test; each identity 12 of each: 6, 3 and 3 (BeLUGA's split of
		// the cycle gives them 0 to 8 test cases).
		if g.Train != 12 || g.Validation != 6 || g.Test != 6 {
			t.Errorf("%s: %+v, want 12 train, 6 validation, 6 test cases", g.Value, g)
		}
	}
	spec.SuiteStratify = "templ_id"
	if _, _, err := spec.openSuite(); err == nil || !strings.Contains(err.Error(), `stratified by "templ_id": no case has a value`) {
		t.Errorf("unknown column: %v", err)
	}
}
