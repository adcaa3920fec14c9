package perturb

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/beluga-nlp/beluga/suites"
)

// ReadTexts reads the texts of a data file: the column named column (default
// "sentence", SST-2's) of a tab-separated file with a header (.tsv), or one
// text a line (any other name). Surrounding spaces are trimmed (SST-2's
// sentences end in one); empty lines are kept as empty texts so that rows
// keep their numbers.
func ReadTexts(path, column string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	var out []string
	tsv := strings.EqualFold(filepath.Ext(path), ".tsv")
	if column == "" {
		column = "sentence"
	}
	col, width := 0, 0
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if !tsv {
			out = append(out, strings.TrimSpace(text))
			continue
		}
		cells := strings.Split(text, "\t")
		if line == 1 {
			col = -1
			for i, h := range cells {
				if h == column {
					col = i
				}
			}
			if col < 0 {
				return nil, fmt.Errorf("%s line 1: no column %q in the header %q", path, column, cells)
			}
			width = len(cells)
			continue
		}
		if text == "" {
			continue
		}
		if len(cells) != width {
			return nil, fmt.Errorf("%s line %d: %d columns, the header has %d", path, line, len(cells), width)
		}
		out = append(out, strings.TrimSpace(cells[col]))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// SuiteSpec describes the functionalities Suite makes from a list of texts.
type SuiteSpec struct {
	Name, Task    string
	Labels        []string
	Perturbations []string // one functionality each
	Options       Options
	Type          suites.TestType // INV or DIR
	Direction     string          // DIR preset (DirExpectation)
	Class         string
	// Functionality names the functionality; with several perturbations
	// it is a prefix ("typos" becomes "<Functionality>: typos"). Empty:
	// the perturbation's name.
	Functionality string
	NSamples      int
	Seed          uint32
}

// Suite perturbs texts with each named perturbation into one INV or DIR
// functionality. A perturbation that applies to none of the texts makes no
// functionality (its Stats say so, Applied 0), the others are kept; Suite
// fails only when none applies to any text. It returns the counts of each
// perturbation so that skipped ones and partial coverage can be reported.
func Suite(texts []string, spec SuiteSpec) (*suites.Suite, []Stats, error) {
	if !spec.Type.Registered() || !spec.Type.Spec().Paired {
		return nil, nil, fmt.Errorf("perturbations make paired tests (an original and its perturbations), not %q", spec.Type)
	}
	if len(spec.Perturbations) == 0 {
		return nil, nil, fmt.Errorf("no perturbation (want one or more of %s)", strings.Join(Names(), ", "))
	}
	exp, train := suites.DefaultExpectation(spec.Type), suites.Training{}
	if spec.Type.Spec().Directional {
		var err error
		if exp, train, err = DirExpectation(spec.Direction); err != nil {
			return nil, nil, fmt.Errorf("a %s test needs a direction: %w", spec.Type, err)
		}
	}
	s := &suites.Suite{Name: spec.Name, Task: spec.Task, Labels: spec.Labels}
	var stats []Stats
	for _, name := range spec.Perturbations {
		p, err := Lookup(name, spec.Options)
		if err != nil {
			return nil, nil, err
		}
		cases, st := Apply(texts, p.Fn, spec.NSamples, spec.Seed)
		stats = append(stats, st)
		if st.Applied == 0 {
			continue
		}
		fn := name
		switch {
		case spec.Functionality != "" && len(spec.Perturbations) > 1:
			fn = spec.Functionality + ": " + name
		case spec.Functionality != "":
			fn = spec.Functionality
		}
		f := &suites.Functionality{Name: fn, Class: spec.Class, Type: spec.Type, Description: p.Doc, Expect: exp, Train: train}
		for i, c := range cases {
			sc := &suites.Case{ID: i}
			for _, in := range c {
				sc.Inputs = append(sc.Inputs, suites.Input{Text: in})
			}
			f.Cases = append(f.Cases, sc)
		}
		s.Functionalities = append(s.Functionalities, f)
	}
	if len(s.Functionalities) == 0 {
		return nil, stats, fmt.Errorf("no perturbation (%s) applies to any of the %d texts", strings.Join(spec.Perturbations, ", "), len(texts))
	}
	return s, stats, nil
}
