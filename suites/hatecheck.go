package suites

import (
	"fmt"
	"slices"

	"github.com/beluga-nlp/beluga/datasets"
)

// hateCheckClasses maps the prefix of a HateCheck functionality name to the
// functionality class of the HateCheck paper (Röttger et al., ACL 2021, Table 1).
var hateCheckClasses = []struct{ prefix, class string }{
	{"derog_", "Derogation"},
	{"threat_", "Threatening language"},
	{"slur_", "Slur usage"},
	{"profanity_", "Profanity usage"},
	{"ref_", "Pronoun reference"},
	{"negate_", "Negation"},
	{"phrase_", "Phrasing"},
	{"ident_", "Non-hate group identity"},
	{"counter_", "Counter speech"},
	{"target_", "Abuse against non-protected targets"},
	{"spell_", "Spelling variations"},
}

// HateCheck's two labels, in class-index order.
var hateCheckLabels = []string{"non-hateful", "hateful"}

// HateCheckMapping is the table mapping of HateCheck's
// test_suite_cases.csv and of Multilingual HateCheck's per-language files
// (whose case id column is mhc_case_id, e.g. "arabic-12"): every
// functionality an MFT, classes from the prefixes of their names (the
// classes of the HateCheck paper), the labels non-hateful and hateful.
// Every other column (target_ident, templ_id, ref_case_id, MHC's
// disagreement_in_case, ...) is kept as case metadata.
func HateCheckMapping(caseID string) TableMapping {
	m := TableMapping{
		Name: "hatecheck", Task: "hatecheck", Dialect: datasets.Dialect{Format: datasets.CSV},
		Text: "test_case", Label: "label_gold", Functionality: "functionality", CaseID: caseID,
		Labels: hateCheckLabels,
	}
	for _, c := range hateCheckClasses {
		m.ClassRules = append(m.ClassRules, Rule{Prefix: c.prefix, Value: c.class})
	}
	return m
}

// ImportHateCheck reads HateCheck's test_suite_cases.csv, or a language
// file of Multilingual HateCheck, as HateCheckMapping maps them; rows
// can be filtered on any column (where).
func ImportHateCheck(path string, where ...Filter) (*TableImport, error) {
	caseID, err := hateCheckCaseID(path)
	if err != nil {
		return nil, err
	}
	m := HateCheckMapping(caseID)
	m.Where = where
	return ImportTable(path, m)
}

// hateCheckCaseID finds the case id column: HateCheck's case_id or MHC's
// mhc_case_id.
func hateCheckCaseID(path string) (string, error) {
	t, err := readTable(path, datasets.Dialect{Format: datasets.CSV})
	if err != nil {
		return "", err
	}
	for _, c := range []string{"case_id", "mhc_case_id"} {
		if slices.Contains(t.header, c) {
			return c, nil
		}
	}
	return "", &LineError{File: path, Line: 1, Field: "case_id", Err: fmt.Errorf("missing column: HateCheck names it case_id, Multilingual HateCheck mhc_case_id (header %q)", t.header)}
}
