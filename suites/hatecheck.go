package suites

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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

// ImportHateCheck reads HateCheck's test_suite_cases.csv. Every functionality
// is an MFT; cases keep their case_id; functionalities are grouped into the
// paper's classes by the prefix of their names.
func ImportHateCheck(path string) (*Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hatecheck %s: %w", path, err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, &LineError{File: path, Line: 1, Err: fmt.Errorf("no header: %w", err)}
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, need := range []string{"functionality", "case_id", "test_case", "label_gold"} {
		if _, ok := col[need]; !ok {
			return nil, &LineError{File: path, Line: 1, Field: need, Err: errors.New("missing column")}
		}
	}
	s := &Suite{Name: "hatecheck", Task: "hatecheck", Labels: hateCheckLabels}
	byName := map[string]*Functionality{}
	seen := map[int]bool{}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &LineError{File: path, Line: line, Err: err}
		}
		name := rec[col["functionality"]]
		class := ""
		for _, c := range hateCheckClasses {
			if strings.HasPrefix(name, c.prefix) {
				class = c.class
				break
			}
		}
		if class == "" {
			return nil, &LineError{File: path, Line: line, Field: "functionality", Err: fmt.Errorf("unknown HateCheck functionality %q", name)}
		}
		id, err := strconv.Atoi(rec[col["case_id"]])
		if err != nil || id < 0 {
			return nil, &LineError{File: path, Line: line, Field: "case_id", Err: fmt.Errorf("%q is not a case id", rec[col["case_id"]])}
		}
		if seen[id] {
			return nil, &LineError{File: path, Line: line, Field: "case_id", Err: fmt.Errorf("duplicate case id %d", id)}
		}
		seen[id] = true
		label := -1
		for i, l := range hateCheckLabels {
			if rec[col["label_gold"]] == l {
				label = i
			}
		}
		if label < 0 {
			return nil, &LineError{File: path, Line: line, Field: "label_gold", Err: fmt.Errorf("label %q (want hateful or non-hateful)", rec[col["label_gold"]])}
		}
		fn := byName[name]
		if fn == nil {
			fn = &Functionality{Name: name, Class: class, Type: MFT, Expect: DefaultExpectation(MFT)}
			byName[name] = fn
			s.Functionalities = append(s.Functionalities, fn)
		}
		fn.Cases = append(fn.Cases, &Case{
			ID:     id,
			Inputs: []Input{{Text: rec[col["test_case"]]}},
			Labels: []Label{ClassLabel(label)},
		})
	}
	return s, nil
}
