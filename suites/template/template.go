// Package template builds behavioural test suites from templates and
// lexicons, as CheckList's editor does (REFERENCE 2.5): a template such as
// "I {neg} {pos_verb} the {thing}." is filled with every combination of its
// lexicons (or with nsamples seeded draws), each result becoming a test case
// of one functionality in beluga's native suite format.
//
// Template syntax: {name} is a value of lexicon name; {name1}, {name2} are
// independent copies of the same lexicon (one {name} used twice is the same
// value); {a:name} (or {an:name}) puts "a" or "an" before the value;
// {name.field} reads a field of an object entry (first_pronoun.name); {{ and
// }} are literal braces. Lexicons come from the test, from the file, or from
// the built-in ones of package lexicon, in that order.
//
// A file (YAML) holds one test, or several under tests:. MFT tests carry a
// label; INV and DIR tests either give templates with several inputs (the
// original first) or name a perturbation of package perturb applied to the
// filled templates. Expansion is capped (max_cases) so that a mistyped
// template cannot fill the disk.
package template

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/suites/lexicon"
	"github.com/beluga-nlp/beluga/suites/perturb"
)

// DefaultMaxCases caps the cases one test may expand to.
const DefaultMaxCases = 100000

// Error locates a problem in a template file.
type Error struct {
	File  string
	Test  string // test name ("" for the file header)
	Field string // YAML field
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("template ")
	b.WriteString(e.File)
	if e.Test != "" {
		fmt.Fprintf(&b, " test %q", e.Test)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, " field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// fileSpec is a template file.
type fileSpec struct {
	Name        string     `yaml:"name"`
	Task        string     `yaml:"task"`
	Labels      []string   `yaml:"labels"`
	ModelLabels []string   `yaml:"model_labels"`
	MaxCases    int        `yaml:"max_cases"`
	Tests       []testSpec `yaml:"tests"`
	// testFields holds a single-test file's test; in a file with tests:,
	// its lexicons are shared by every test.
	testFields `yaml:",inline"`
}

// testSpec is one test of a file's tests: list.
type testSpec struct {
	Name       string `yaml:"name"`
	testFields `yaml:",inline"`
}

type testFields struct {
	Class            string                 `yaml:"class"`
	Functionality    string                 `yaml:"functionality"`
	Type             string                 `yaml:"type"`
	Description      string                 `yaml:"description"`
	Label            any                    `yaml:"label"`
	Template         *entrySpec             `yaml:"template"`
	Templates        []entrySpec            `yaml:"templates"`
	Lexicons         map[string]lexiconSpec `yaml:"lexicons"`
	NSamples         int                    `yaml:"nsamples"`
	Seed             *uint32                `yaml:"seed"`
	RemoveDuplicates bool                   `yaml:"remove_duplicates"`
	Perturb          *perturbSpec           `yaml:"perturb"`
	Direction        string                 `yaml:"direction"`
	Expect           *expectSpec            `yaml:"expect"`
	Train            *trainSpec             `yaml:"train"`
}

// entrySpec is one template: a string (a one-input case), a list of strings
// (one case with several inputs, the original first), or a mapping with its
// own label.
type entrySpec struct {
	Inputs []string
	Label  any
	line   int
}

func (e *entrySpec) UnmarshalYAML(n *yaml.Node) error {
	e.line = n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		e.Inputs = []string{n.Value}
		return nil
	case yaml.SequenceNode:
		return n.Decode(&e.Inputs)
	case yaml.MappingNode:
		var m struct {
			Template *entrySpec `yaml:"template"`
			Label    any        `yaml:"label"`
		}
		if err := decodeStrict(n, &m); err != nil {
			return err
		}
		if m.Template == nil {
			return fmt.Errorf("line %d: a template entry mapping needs template:", n.Line)
		}
		e.Inputs, e.Label = m.Template.Inputs, m.Label
		return nil
	}
	return fmt.Errorf("line %d: a template is a string, a list of strings, or a mapping with template:", n.Line)
}

// lexiconSpec is a lexicon given inline (a list) or as {file: PATH}: one
// entry a line (.txt and other names), a JSON list (.json), or CSV with a
// header, one object a row (.csv, as CheckList's add_lexicon_from_csv).
type lexiconSpec struct {
	Entries []lexicon.Entry
	File    string
}

func (l *lexiconSpec) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			switch c.Kind {
			case yaml.ScalarNode:
				l.Entries = append(l.Entries, lexicon.Entry{Text: c.Value})
			case yaml.MappingNode:
				var m map[string]string
				if err := c.Decode(&m); err != nil {
					return err
				}
				l.Entries = append(l.Entries, lexicon.Entry{Fields: m})
			default:
				return fmt.Errorf("line %d: a lexicon entry is a string or a mapping of strings", c.Line)
			}
		}
		if l.Entries == nil {
			l.Entries = []lexicon.Entry{}
		}
		return nil
	case yaml.MappingNode:
		var m struct {
			File string `yaml:"file"`
		}
		if err := decodeStrict(n, &m); err != nil {
			return err
		}
		if m.File == "" {
			return fmt.Errorf("line %d: a lexicon is a list, or {file: PATH}", n.Line)
		}
		l.File = m.File
		return nil
	}
	return fmt.Errorf("line %d: a lexicon is a list, or {file: PATH}", n.Line)
}

// perturbSpec names a perturbation: a string, or a mapping with options.
type perturbSpec struct {
	Name     string `yaml:"name"`
	Typos    int    `yaml:"typos"`
	N        int    `yaml:"n"`
	NSamples int    `yaml:"nsamples"`
}

func (p *perturbSpec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		p.Name = n.Value
		return nil
	}
	type plain perturbSpec
	return decodeStrict(n, (*plain)(p))
}

type expectSpec struct {
	Kind       string  `yaml:"kind"`
	Value      *int    `yaml:"value"`
	Tolerance  float64 `yaml:"tolerance"`
	Increasing bool    `yaml:"increasing"`
	Direction  string  `yaml:"direction"`
	Slice      string  `yaml:"slice"`
	SliceAgg   string  `yaml:"slice_agg"`
	Agg        string  `yaml:"agg"`
}

type trainSpec struct {
	Type      string `yaml:"type"`
	Label     string `yaml:"label"`
	Direction string `yaml:"direction"`
}

func decodeStrict(n *yaml.Node, v any) error {
	// yaml.v3 applies KnownFields only through a Decoder, so re-encode the
	// node and decode it strictly.
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	return nil
}

// Options configure Load.
type Options struct {
	// MaxCases overrides the file's cap on the cases of one test (0: the
	// file's max_cases, else DefaultMaxCases).
	MaxCases int
}

// Result is a generated suite with what the generation had to say.
type Result struct {
	Suite *suites.Suite
	// Warnings report, with counts, what was dropped: texts a perturbation
	// did not apply to, duplicate combinations removed.
	Warnings []string
}

// Load reads a template file and generates its suite.
func Load(path string, opt Options) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", path, err)
	}
	return Generate(b, path, opt)
}

// Generate generates the suite of a template file's contents; path names the
// file in errors, and relative lexicon files are read from its directory.
func Generate(data []byte, path string, opt Options) (*Result, error) {
	fail := func(test, field string, err error) error {
		return &Error{File: path, Test: test, Field: field, Err: err}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f fileSpec
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fail("", "", errors.New("empty file"))
		}
		return nil, fail("", "", err)
	}
	s := &suites.Suite{Name: f.Name, Task: f.Task, Labels: f.Labels, ModelLabels: f.ModelLabels}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
	}
	if s.Task == "" {
		s.Task = "sentiment"
	}
	if s.Task == "sentiment" && s.Labels == nil {
		// CheckList's sentiment labels, scored from a 2-way model.
		s.Labels = []string{"negative", "neutral", "positive"}
		if s.ModelLabels == nil {
			s.ModelLabels = []string{"negative", "positive"}
		}
	}
	maxCases := opt.MaxCases
	if maxCases <= 0 {
		maxCases = f.MaxCases
	}
	if maxCases <= 0 {
		maxCases = DefaultMaxCases
	}
	tests := f.Tests
	single := f.testFields.Template != nil || f.testFields.Templates != nil || f.testFields.Functionality != ""
	switch {
	case len(tests) > 0 && single:
		return nil, fail("", "tests", errors.New("a file holds either one test at the top level or a list under tests:, not both"))
	case len(tests) == 0 && !single:
		return nil, fail("", "tests", errors.New("no test: give template: (one test) or tests: (a list)"))
	case len(tests) == 0:
		tests = []testSpec{{Name: f.Name, testFields: f.testFields}}
	}
	g := &generator{path: path, dir: filepath.Dir(path), suite: s, maxCases: maxCases}
	if !single {
		lex, err := g.lexicons("", f.testFields.Lexicons)
		if err != nil {
			return nil, err
		}
		g.fileLex = lex
	}
	res := &Result{Suite: s}
	for i, t := range tests {
		name := t.Name
		if name == "" {
			name = t.Functionality
		}
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		warn, err := g.test(name, t.testFields)
		if err != nil {
			return nil, err
		}
		res.Warnings = append(res.Warnings, warn...)
	}
	return res, nil
}

type generator struct {
	path, dir string
	suite     *suites.Suite
	maxCases  int
	fileLex   map[string][]lexicon.Entry
}

func (g *generator) fail(test, field string, format string, args ...any) error {
	return &Error{File: g.path, Test: test, Field: field, Err: fmt.Errorf(format, args...)}
}

// test expands one test into cases of its functionality.
func (g *generator) test(name string, t testFields) ([]string, error) {
	var warnings []string
	switch {
	case t.Class == "":
		return nil, g.fail(name, "class", "missing (the functionality class, e.g. Negation)")
	case t.Functionality == "":
		return nil, g.fail(name, "functionality", "missing")
	case t.Type == "":
		return nil, g.fail(name, "type", "missing (%s)", suites.TypeList())
	}
	tt, err := suites.ParseTestType(t.Type)
	if err != nil {
		return nil, g.fail(name, "type", "%v", err)
	}
	entries := t.Templates
	if t.Template != nil {
		if entries != nil {
			return nil, g.fail(name, "template", "give template: or templates:, not both")
		}
		entries = []entrySpec{*t.Template}
	}
	if len(entries) == 0 {
		return nil, g.fail(name, "template", "missing (template: or templates:)")
	}
	lex, err := g.lexicons(name, t.Lexicons)
	if err != nil {
		return nil, err
	}
	for k, l := range g.fileLex {
		if _, ok := lex[k]; !ok {
			lex[k] = l
		}
	}
	f := &suites.Functionality{Name: t.Functionality, Class: t.Class, Type: tt, Description: t.Description}
	if f.Expect, f.Train, err = expectation(tt, t); err != nil {
		return nil, g.fail(name, "expect", "%v", err)
	}
	if prev := g.suite.Functionality(f.Name); prev != nil {
		if prev.Class != f.Class || prev.Type != f.Type {
			return nil, g.fail(name, "functionality", "%q already has class %q and type %s", f.Name, prev.Class, prev.Type)
		}
		f = prev
	} else {
		g.suite.Functionalities = append(g.suite.Functionalities, f)
	}
	var seed uint32
	if t.Seed != nil {
		seed = *t.Seed
	}
	rng := perturb.NewRand(seed)
	var pert perturb.Perturbation
	if t.Perturb != nil {
		if !tt.Spec().Paired {
			return nil, g.fail(name, "perturb", "an %s takes labels, not a perturbation (use a paired type: %s)", tt, pairedTypes())
		}
		if pert, err = perturb.Lookup(t.Perturb.Name, perturb.Options{Typos: t.Perturb.Typos, N: t.Perturb.N}); err != nil {
			return nil, g.fail(name, "perturb", "%v", err)
		}
	}
	var texts []string // one-input fills waiting for the perturbation
	nextID := len(f.Cases)
	for ei, e := range entries {
		field := "template"
		if t.Template == nil {
			field = fmt.Sprintf("templates[%d]", ei)
		}
		labelSpec := e.Label
		if labelSpec == nil {
			labelSpec = t.Label
		}
		var labels []suites.Label
		if labelSpec != nil {
			l, err := g.label(labelSpec)
			if err != nil {
				return nil, g.fail(name, "label", "%v", err)
			}
			labels = []suites.Label{l}
		} else if !tt.Spec().Paired && t.Expect == nil {
			return nil, g.fail(name, "label", "an %s needs a label (or an expect: that does not compare with one)", tt)
		}
		switch {
		case tt.Spec().Paired && t.Perturb == nil && len(e.Inputs) < 2:
			return nil, g.fail(name, field, "an %s case needs the original and its perturbations: give a list of templates as one entry, or perturb:", tt)
		case t.Perturb != nil && len(e.Inputs) != 1:
			return nil, g.fail(name, field, "with perturb:, each template is a single text")
		}
		filled, dups, err := g.expand(name, field, e.Inputs, lex, t.NSamples, t.RemoveDuplicates, rng)
		if err != nil {
			return nil, err
		}
		if dups > 0 {
			warnings = append(warnings, fmt.Sprintf("%s test %q %s: %d combinations with a repeated value removed (remove_duplicates)", g.path, name, field, dups))
		}
		for _, inputs := range filled {
			if t.Perturb != nil {
				texts = append(texts, inputs[0])
				continue
			}
			c := &suites.Case{ID: nextID, Labels: labels}
			nextID++
			for _, in := range inputs {
				c.Inputs = append(c.Inputs, suites.Input{Text: in})
			}
			f.Cases = append(f.Cases, c)
		}
	}
	if t.Perturb != nil {
		cases, st := perturb.Apply(texts, pert.Fn, t.Perturb.NSamples, seed)
		if st.Applied == 0 {
			return nil, g.fail(name, "perturb", "perturbation %s applies to none of the %d filled templates", pert.Name, len(texts))
		}
		if skipped := st.Examples - st.Applied; skipped > 0 {
			warnings = append(warnings, fmt.Sprintf("%s test %q: perturbation %s applied to %d of %d filled templates; %d skipped", g.path, name, pert.Name, st.Applied, st.Examples, skipped))
		}
		for _, inputs := range cases {
			c := &suites.Case{ID: nextID}
			nextID++
			for _, in := range inputs {
				c.Inputs = append(c.Inputs, suites.Input{Text: in})
			}
			f.Cases = append(f.Cases, c)
		}
	}
	return warnings, nil
}

// lexicons reads a test's (or a file's) lexicons, inline or from files.
func (g *generator) lexicons(test string, specs map[string]lexiconSpec) (map[string][]lexicon.Entry, error) {
	lex := map[string][]lexicon.Entry{}
	for _, k := range keys(specs) {
		l := specs[k]
		if lexiconName(k) != k {
			return nil, g.fail(test, "lexicons."+k, "a lexicon name must not end in a digit: {%s1} is how a template asks for a second, independent value of %s", lexiconName(k), lexiconName(k))
		}
		entries := l.Entries
		if l.File != "" {
			var err error
			if entries, err = readLexiconFile(filepath.Join(g.dir, l.File)); err != nil {
				return nil, g.fail(test, "lexicons."+k, "%v", err)
			}
		}
		if len(entries) == 0 {
			return nil, g.fail(test, "lexicons."+k, "empty lexicon")
		}
		lex[k] = entries
	}
	return lex, nil
}

// expectation is the test's evaluation rule: expect: as written, a
// direction: preset for DIR, or the type's default.
func expectation(tt suites.TestType, t testFields) (suites.Expectation, suites.Training, error) {
	var tr suites.Training
	if t.Train != nil {
		tr = suites.Training{Label: t.Train.Label, Direction: t.Train.Direction}
		if t.Train.Type != "" {
			ty, err := suites.ParseTestType(t.Train.Type)
			if err != nil {
				return suites.Expectation{}, tr, err
			}
			tr.Type = ty
		}
	}
	switch {
	case t.Expect != nil && t.Direction != "":
		return suites.Expectation{}, tr, errors.New("give expect: or direction:, not both")
	case t.Expect != nil:
		e := t.Expect
		x := suites.Expectation{Kind: e.Kind, Value: e.Value, Tolerance: e.Tolerance, Increasing: e.Increasing,
			Direction: e.Direction, Slice: e.Slice, SliceAgg: e.SliceAgg, Agg: e.Agg}
		if x.Kind == "" {
			return x, tr, errors.New("expect: needs a kind")
		}
		if x.Agg == "" {
			x.Agg = suites.AggAll
			if tt.Spec().Paired {
				x.Agg = suites.AggAllExceptFirst
			}
		}
		return x, tr, nil
	case t.Direction != "":
		if !tt.Spec().Directional {
			return suites.Expectation{}, tr, fmt.Errorf("direction: is for directional tests (%s), this one is %s", directionalTypes(), tt)
		}
		x, dt, err := perturb.DirExpectation(t.Direction)
		if t.Train == nil {
			tr = dt
		}
		return x, tr, err
	case suites.DefaultExpectation(tt).Kind == "":
		return suites.Expectation{}, tr, fmt.Errorf("a %s test needs direction: (%s) or expect:", tt, strings.Join(perturb.Directions(), ", "))
	}
	return suites.DefaultExpectation(tt), tr, nil
}

// label resolves a label given as a class name or index.
func (g *generator) label(v any) (suites.Label, error) {
	switch x := v.(type) {
	case int:
		if x < 0 || (len(g.suite.Labels) > 0 && x >= len(g.suite.Labels)) {
			return suites.Label{}, fmt.Errorf("class index %d outside the %d labels %q", x, len(g.suite.Labels), g.suite.Labels)
		}
		return suites.ClassLabel(x), nil
	case string:
		for i, l := range g.suite.Labels {
			if l == x {
				return suites.ClassLabel(i), nil
			}
		}
		return suites.Label{}, fmt.Errorf("unknown label %q (the suite's labels are %q)", x, g.suite.Labels)
	}
	return suites.Label{}, fmt.Errorf("a label is a class name or index, not %v", v)
}

// expand fills the templates of one entry (several inputs share one
// mapping) with the Cartesian product of their lexicons, or with nsamples
// draws with replacement per placeholder (CheckList's editor.template).
// Placeholders are ordered by first appearance; the product varies the last
// one fastest, as itertools.product.
func (g *generator) expand(test, field string, inputs []string, lex map[string][]lexicon.Entry, nsamples int, removeDup bool, rng *perturb.Rand) ([][]string, int, error) {
	parsed := make([][]segment, len(inputs))
	var slots []string
	seen := map[string]bool{}
	for i, in := range inputs {
		segs, err := parse(in)
		if err != nil {
			return nil, 0, g.fail(test, field, "%v", err)
		}
		parsed[i] = segs
		for _, s := range segs {
			if s.slot != "" && !seen[s.slot] {
				seen[s.slot] = true
				slots = append(slots, s.slot)
			}
		}
	}
	lists := make([][]lexicon.Entry, len(slots))
	total := 1
	for i, s := range slots {
		name := lexiconName(s)
		l, ok := lex[name]
		if !ok {
			l, ok = lexicon.Builtin(name)
		}
		if !ok {
			return nil, 0, g.fail(test, field, "unknown placeholder {%s}: no lexicon %q in the test's lexicons (%s) nor among the built-in ones (%s)", s, name, orNone(keys(lex)), strings.Join(lexicon.Names(), ", "))
		}
		lists[i] = l
		if total <= g.maxCases {
			total *= len(l)
		}
	}
	n := total
	if nsamples > 0 {
		n = nsamples
	}
	if n > g.maxCases {
		how := "sample with nsamples:"
		if nsamples > 0 {
			how = "ask for fewer nsamples"
		}
		return nil, 0, g.fail(test, field, "expands to more than %d cases (max_cases); %s or raise max_cases", g.maxCases, how)
	}
	combos := make([][]int, 0, n)
	if nsamples > 0 {
		draws := make([][]int, len(slots))
		for i, l := range lists {
			draws[i] = rng.Choice(len(l), nsamples)
		}
		for k := 0; k < nsamples; k++ {
			c := make([]int, len(slots))
			for i := range slots {
				c[i] = draws[i][k]
			}
			combos = append(combos, c)
		}
	} else {
		idx := make([]int, len(slots))
		for k := 0; k < total; k++ {
			combos = append(combos, append([]int(nil), idx...))
			for i := len(idx) - 1; i >= 0; i-- {
				idx[i]++
				if idx[i] < len(lists[i]) {
					break
				}
				idx[i] = 0
			}
		}
	}
	var out [][]string
	dups := 0
	values := map[string]lexicon.Entry{}
	for _, c := range combos {
		if removeDup && repeated(lists, c) {
			dups++
			continue
		}
		for i, s := range slots {
			values[s] = lists[i][c[i]]
		}
		filled := make([]string, len(parsed))
		for i, segs := range parsed {
			t, err := fill(segs, values)
			if err != nil {
				return nil, 0, g.fail(test, field, "%v", err)
			}
			filled[i] = t
		}
		out = append(out, filled)
	}
	return out, dups, nil
}

// repeated reports whether two placeholders got the same value (CheckList's
// remove_duplicates compares the values' strings).
func repeated(lists [][]lexicon.Entry, c []int) bool {
	seen := map[string]bool{}
	for i, k := range c {
		v := lists[i][k].String()
		if seen[v] {
			return true
		}
		seen[v] = true
	}
	return false
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}

// readLexiconFile reads a lexicon file: a JSON list (.json), CSV with a
// header (.csv: one object a row), or one entry a line (blank lines and
// lines starting with # skipped).
func readLexiconFile(path string) ([]lexicon.Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		var out []lexicon.Entry
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return out, nil
	case ".csv":
		t, err := datasets.ReadTable(path, datasets.Dialect{Format: datasets.CSV})
		if err != nil {
			return nil, err
		}
		var out []lexicon.Entry
		for _, r := range t.Rows {
			m := map[string]string{}
			for j, h := range t.Header {
				m[h] = r.Cells[j]
			}
			out = append(out, lexicon.Entry{Fields: m})
		}
		return out, nil
	}
	var out []lexicon.Entry
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, lexicon.Entry{Text: line})
	}
	return out, nil
}

// pairedTypes and directionalTypes name the registered types a message
// points to.
func pairedTypes() string {
	return typesWhere(func(s *suites.TypeSpec) bool { return s.Paired })
}

func directionalTypes() string {
	return typesWhere(func(s *suites.TypeSpec) bool { return s.Directional })
}

func typesWhere(keep func(*suites.TypeSpec) bool) string {
	var names []string
	for _, t := range suites.TestTypes() {
		if keep(t.Spec()) {
			names = append(names, string(t))
		}
	}
	return strings.Join(names, " or ")
}
