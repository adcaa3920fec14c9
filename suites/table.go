package suites

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
)

// TableMapping declares how a table of test cases (CSV, TSV or JSON lines,
// one case a row) maps onto a suite: which columns hold the text, the
// optional second text, the label, the functionality and the case id, where
// a functionality's class and test type come from, which rows to keep, and
// which rows perturb or contrast another. Every column it does not map is
// kept in the case's Meta, as a JSON object of strings.
type TableMapping struct {
	// Name of the suite (default: the file's base name) and the Task it
	// tests (default: Name).
	Name, Task string
	// Format is csv, tsv or jsonl; empty means the extension's (before .gz).
	Format datasets.Format
	// Columns. Text, Label and Functionality are required; Pair makes the
	// inputs text pairs; CaseID (default: the row's position) may be an
	// integer or end in one (MHC's "arabic-12").
	Text, Pair, Label, Functionality, CaseID string
	// Class names the column holding each functionality's class. Without
	// it, ClassMap (functionality → class), then ClassRules, give the
	// class; a functionality none of them names is an error. With none of
	// the three, each functionality is its own class.
	Class      string
	ClassMap   map[string]string
	ClassRules []Rule
	// Type names the column holding MFT, INV or DIR; without it every
	// functionality is an MFT (or what Links makes it).
	Type string
	// Labels are the suite's label names in class order; empty means the
	// label values of every row (filtered or not) sorted.
	Labels []string
	// Where keeps only the rows that pass every filter.
	Where []Filter
	// Link names the column holding the id of the case a row perturbs
	// (INV) or contrasts (DIR); LinkRules say which functionalities'
	// linked rows are which. Such a row becomes a case of two inputs, the
	// linked case's text first, and joins the linked case's Group (named
	// by the case id its links end at), so that splits.Assign keeps the
	// original and every pair made from it in one split. A row of a
	// linked functionality without a link is left out (ImportTable counts
	// it).
	Link      string
	LinkRules []Rule
}

// Rule maps the functionalities a prefix or a regular expression matches
// onto a value: a class (TableMapping.ClassRules) or a test type
// (TableMapping.LinkRules). Written PREFIX=VALUE, or /REGEXP/=VALUE.
type Rule struct {
	Prefix string
	Regexp *regexp.Regexp
	Value  string
}

// ParseRule parses PREFIX=VALUE or /REGEXP/=VALUE.
func ParseRule(s string) (Rule, error) {
	i := strings.LastIndex(s, "=")
	if i <= 0 || i == len(s)-1 {
		return Rule{}, fmt.Errorf("rule %q: want PREFIX=VALUE or /REGEXP/=VALUE", s)
	}
	key, value := s[:i], s[i+1:]
	if len(key) >= 2 && key[0] == '/' && key[len(key)-1] == '/' {
		re, err := regexp.Compile(key[1 : len(key)-1])
		if err != nil {
			return Rule{}, fmt.Errorf("rule %q: %w", s, err)
		}
		return Rule{Regexp: re, Value: value}, nil
	}
	return Rule{Prefix: key, Value: value}, nil
}

func (r Rule) match(name string) bool {
	if r.Regexp != nil {
		return r.Regexp.MatchString(name)
	}
	return strings.HasPrefix(name, r.Prefix)
}

func (r Rule) String() string {
	if r.Regexp != nil {
		return "/" + r.Regexp.String() + "/=" + r.Value
	}
	return r.Prefix + "=" + r.Value
}

// Filter keeps the rows whose Column equals Value (or, with Not, differs).
type Filter struct {
	Column, Value string
	Not           bool
}

// ParseFilter parses COLUMN=VALUE or COLUMN!=VALUE.
func ParseFilter(s string) (Filter, error) {
	if i := strings.Index(s, "!="); i > 0 {
		return Filter{Column: s[:i], Value: s[i+2:], Not: true}, nil
	}
	if i := strings.Index(s, "="); i > 0 {
		return Filter{Column: s[:i], Value: s[i+1:]}, nil
	}
	return Filter{}, fmt.Errorf("filter %q: want COLUMN=VALUE or COLUMN!=VALUE", s)
}

func (f Filter) String() string {
	if f.Not {
		return f.Column + "!=" + f.Value
	}
	return f.Column + "=" + f.Value
}

// ReadClassMap reads a CSV or TSV with the columns functionality and class
// (a header line naming them, in any order) into a functionality → class
// map.
func ReadClassMap(path string) (map[string]string, error) {
	t, err := readTable(path, "")
	if err != nil {
		return nil, err
	}
	for _, c := range []string{"functionality", "class"} {
		if !slices.Contains(t.header, c) {
			return nil, &LineError{File: path, Line: 1, Field: c, Err: fmt.Errorf("missing column (header %q)", t.header)}
		}
	}
	out := map[string]string{}
	for _, r := range t.rows {
		f, c := r.cells["functionality"], r.cells["class"]
		if old, ok := out[f]; ok && old != c {
			return nil, &LineError{File: path, Line: r.line, Field: "class", Err: fmt.Errorf("functionality %q is in class %q and %q", f, old, c)}
		}
		out[f] = c
	}
	return out, nil
}

// TableImport is what ImportTable read: the suite, and the rows it left out.
type TableImport struct {
	Suite *Suite
	// Rows counts the table's rows, Filtered those Where left out, Unlinked
	// the rows of linked functionalities without a link.
	Rows, Filtered, Unlinked int
}

type tableRow struct {
	line  int
	cells map[string]string
}

type table struct {
	header []string
	rows   []tableRow
}

// readTable reads a CSV, TSV or JSON-lines file (optionally .gz) into rows
// of named cells, refusing a file that is not UTF-8.
func readTable(path string, format datasets.Format) (*table, error) {
	if format == "" {
		switch ext := filepath.Ext(strings.TrimSuffix(path, ".gz")); ext {
		case ".csv":
			format = datasets.CSV
		case ".tsv":
			format = datasets.TSV
		case ".jsonl", ".json":
			format = datasets.JSONL
		default:
			return nil, &LineError{File: path, Err: fmt.Errorf("cannot tell the format from %q: give it (csv, tsv or jsonl)", ext)}
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, &LineError{File: path, Err: err}
		}
		if b, err = io.ReadAll(zr); err != nil {
			return nil, &LineError{File: path, Err: err}
		}
	}
	if err := datasets.CheckUTF8(path, b); err != nil {
		var re *datasets.RowError
		if errors.As(err, &re) {
			return nil, &LineError{File: path, Line: re.Line, Err: fmt.Errorf("column %d: %w", re.Column, re.Err)}
		}
		return nil, err
	}
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	t := &table{}
	switch format {
	case datasets.CSV, datasets.TSV:
		r := csv.NewReader(bytes.NewReader(b))
		if format == datasets.TSV {
			r.Comma, r.LazyQuotes = '\t', true
		}
		head, err := r.Read()
		if err != nil {
			return nil, &LineError{File: path, Line: 1, Err: fmt.Errorf("no header: %w", err)}
		}
		t.header = slices.Clone(head)
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					return nil, &LineError{File: path, Line: pe.Line, Err: pe.Err}
				}
				return nil, &LineError{File: path, Err: err}
			}
			line, _ := r.FieldPos(0)
			row := tableRow{line: line, cells: map[string]string{}}
			for i, h := range t.header {
				row.cells[h] = rec[i]
			}
			t.rows = append(t.rows, row)
		}
	case datasets.JSONL:
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<24)
		seen := map[string]bool{}
		for line := 1; sc.Scan(); line++ {
			l := bytes.TrimSpace(sc.Bytes())
			if len(l) == 0 {
				continue
			}
			var obj map[string]any
			d := json.NewDecoder(bytes.NewReader(l))
			d.UseNumber()
			if err := d.Decode(&obj); err != nil {
				return nil, &LineError{File: path, Line: line, Err: fmt.Errorf("not a JSON object: %w", err)}
			}
			row := tableRow{line: line, cells: map[string]string{}}
			for _, k := range slices.Sorted(mapKeys(obj)) {
				switch v := obj[k].(type) {
				case string:
					row.cells[k] = v
				case json.Number:
					row.cells[k] = v.String()
				case bool:
					row.cells[k] = strconv.FormatBool(v)
				case nil:
					row.cells[k] = ""
				default:
					raw, _ := json.Marshal(v)
					row.cells[k] = string(raw)
				}
				if !seen[k] {
					seen[k] = true
					t.header = append(t.header, k)
				}
			}
			t.rows = append(t.rows, row)
		}
		if err := sc.Err(); err != nil {
			return nil, &LineError{File: path, Err: err}
		}
	default:
		return nil, &LineError{File: path, Err: fmt.Errorf("format %q (want csv, tsv or jsonl)", format)}
	}
	return t, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

var trailingInt = regexp.MustCompile(`(\d+)$`)

// caseNumber reads a case id: an integer, a float-formatted integer
// (pandas writes MHC's ref_case_id as 12.0), or text ending in one.
func caseNumber(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 && f == math.Trunc(f) && f < math.MaxInt32 {
		return int(f), true
	}
	if m := trailingInt.FindString(s); m != "" {
		n, err := strconv.Atoi(m)
		return n, err == nil
	}
	return 0, false
}

// ImportTable reads a table of test cases as m maps it. Errors name the
// file, line and column.
func ImportTable(path string, m TableMapping) (*TableImport, error) {
	t, err := readTable(path, m.Format)
	if err != nil {
		return nil, err
	}
	need := map[string]string{"text": m.Text, "label": m.Label, "functionality": m.Functionality}
	for _, k := range []string{"text", "label", "functionality"} {
		if need[k] == "" {
			return nil, &LineError{File: path, Err: fmt.Errorf("the %s column is not named", k)}
		}
	}
	mapped := map[string]bool{}
	for _, c := range []string{m.Text, m.Pair, m.Label, m.Functionality, m.CaseID, m.Class, m.Type} {
		if c != "" {
			mapped[c] = true
			if !slices.Contains(t.header, c) {
				return nil, &LineError{File: path, Line: 1, Field: c, Err: fmt.Errorf("missing column (header %q)", t.header)}
			}
		}
	}
	for _, c := range append([]string{m.Link}, filterColumns(m.Where)...) {
		if c != "" && !slices.Contains(t.header, c) {
			return nil, &LineError{File: path, Line: 1, Field: c, Err: fmt.Errorf("missing column (header %q)", t.header)}
		}
	}
	if m.Link != "" && len(m.LinkRules) == 0 {
		return nil, &LineError{File: path, Field: m.Link, Err: errors.New("a link column needs link rules (which functionalities are INV, which DIR)")}
	}
	for _, r := range m.LinkRules {
		if r.Value != string(INV) && r.Value != string(DIR) {
			return nil, fmt.Errorf("link rule %s: want INV or DIR", r)
		}
	}
	name := m.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(strings.TrimSuffix(path, ".gz")), filepath.Ext(strings.TrimSuffix(path, ".gz")))
	}
	task := m.Task
	if task == "" {
		task = name
	}
	res := &TableImport{Rows: len(t.rows), Suite: &Suite{Name: name, Task: task}}
	var kept []tableRow
	for _, r := range t.rows {
		if keep(r, m.Where) {
			kept = append(kept, r)
		} else {
			res.Filtered++
		}
	}
	labels := m.Labels
	if len(labels) == 0 {
		// From every row, so that a filter does not change the classes.
		seen := map[string]bool{}
		for _, r := range t.rows {
			if l := r.cells[m.Label]; !seen[l] {
				seen[l] = true
				labels = append(labels, l)
			}
		}
		slices.Sort(labels)
	}
	if len(labels) < 2 {
		return nil, &LineError{File: path, Field: m.Label, Err: fmt.Errorf("labels %q: a suite needs at least two", labels)}
	}
	res.Suite.Labels = labels
	// The cases by their number, for links; a link may point at a row
	// filtered out (its text is still the original).
	byNumber := map[int]tableRow{}
	number := func(r tableRow, pos int) (int, error) {
		if m.CaseID == "" {
			return pos, nil
		}
		n, ok := caseNumber(r.cells[m.CaseID])
		if !ok {
			return 0, &LineError{File: path, Line: r.line, Field: m.CaseID, Err: fmt.Errorf("%q is not a case id (an integer, or text ending in one)", r.cells[m.CaseID])}
		}
		return n, nil
	}
	for i, r := range t.rows {
		n, err := number(r, i)
		if err != nil {
			return nil, err
		}
		if prev, dup := byNumber[n]; dup {
			return nil, &LineError{File: path, Line: r.line, Field: m.CaseID, Err: fmt.Errorf("case id %d again (line %d)", n, prev.line)}
		}
		byNumber[n] = r
	}
	positions := map[int]int{}
	for i, r := range t.rows {
		positions[r.line] = i
	}
	// A linked case's group is named after the case its chain of links
	// ends at (a perturbation of a perturbation joins the original's).
	linkRoot := func(n int) int {
		seen := map[int]bool{}
		for !seen[n] {
			seen[n] = true
			next, ok := caseNumber(byNumber[n].cells[m.Link])
			if _, found := byNumber[next]; !ok || !found {
				break
			}
			n = next
		}
		return n
	}
	groupName := func(n int) string {
		if m.CaseID != "" {
			return byNumber[n].cells[m.CaseID]
		}
		return strconv.Itoa(n)
	}
	roots := map[int]bool{}
	byName := map[string]*Functionality{}
	for _, r := range kept {
		fname := r.cells[m.Functionality]
		if fname == "" {
			return nil, &LineError{File: path, Line: r.line, Field: m.Functionality, Err: errors.New("empty functionality")}
		}
		class, err := m.classOf(r, fname)
		if err != nil {
			return nil, &LineError{File: path, Line: r.line, Field: orDefault(m.Class, m.Functionality), Err: err}
		}
		typ := MFT
		if m.Type != "" {
			if typ, err = ParseTestType(r.cells[m.Type]); err != nil {
				return nil, &LineError{File: path, Line: r.line, Field: m.Type, Err: err}
			}
		}
		linkType := TestType("")
		for _, lr := range m.LinkRules {
			if lr.match(fname) {
				linkType = TestType(lr.Value)
				break
			}
		}
		if linkType != "" {
			typ = linkType
		}
		fn := byName[fname]
		if fn == nil {
			fn = &Functionality{Name: fname, Class: class, Type: typ, Expect: DefaultExpectation(typ)}
			if typ == DIR {
				// A contrast must not make the original's class more likely:
				// CheckList's Expect.monotonic(increasing=False).
				fn.Expect = Expectation{Kind: ExpectMonotonic, Tolerance: 0.1, Agg: AggAllExceptFirst, Direction: "not_more_confident"}
				fn.Train.Direction = "not_more_conf"
			}
			byName[fname] = fn
			res.Suite.Functionalities = append(res.Suite.Functionalities, fn)
		} else if fn.Class != class {
			return nil, &LineError{File: path, Line: r.line, Field: orDefault(m.Class, m.Functionality), Err: fmt.Errorf("functionality %q is in class %q and %q", fname, fn.Class, class)}
		} else if fn.Type != typ {
			return nil, &LineError{File: path, Line: r.line, Field: m.Type, Err: fmt.Errorf("functionality %q is %s and %s", fname, fn.Type, typ)}
		}
		id, err := number(r, positions[r.line])
		if err != nil {
			return nil, err
		}
		label, err := labelIndex(labels, r.cells[m.Label])
		if err != nil {
			return nil, &LineError{File: path, Line: r.line, Field: m.Label, Err: err}
		}
		in := Input{Text: r.cells[m.Text]}
		if m.Pair != "" {
			in.Pair, in.IsPair = r.cells[m.Pair], true
		}
		c := &Case{ID: id, Inputs: []Input{in}, Labels: []Label{ClassLabel(label)}}
		if linkType != "" {
			ref := strings.TrimSpace(r.cells[m.Link])
			if ref == "" {
				res.Unlinked++
				continue
			}
			n, ok := caseNumber(ref)
			orig, found := byNumber[n]
			if !ok || !found {
				return nil, &LineError{File: path, Line: r.line, Field: m.Link, Err: fmt.Errorf("%q links no case of the table", ref)}
			}
			ol, err := labelIndex(labels, orig.cells[m.Label])
			if err != nil {
				return nil, &LineError{File: path, Line: orig.line, Field: m.Label, Err: err}
			}
			o := Input{Text: orig.cells[m.Text]}
			if m.Pair != "" {
				o.Pair, o.IsPair = orig.cells[m.Pair], true
			}
			c.Inputs = []Input{o, in}
			c.Labels = []Label{ClassLabel(ol), ClassLabel(label)}
			root := linkRoot(n)
			c.Group = groupName(root)
			roots[root] = true
		}
		meta := map[string]string{}
		for _, h := range t.header {
			if !mapped[h] {
				meta[h] = r.cells[h]
			}
		}
		if len(meta) > 0 {
			if c.Meta, err = json.Marshal(meta); err != nil {
				return nil, err
			}
		}
		fn.Cases = append(fn.Cases, c)
	}
	if len(res.Suite.Functionalities) == 0 {
		return nil, &LineError{File: path, Err: fmt.Errorf("no test cases (%d rows, %d filtered out)", res.Rows, res.Filtered)}
	}
	// The cases the links end at join their groups.
	for _, f := range res.Suite.Functionalities {
		for _, c := range f.Cases {
			if c.Group == "" && roots[c.ID] {
				c.Group = groupName(c.ID)
			}
		}
	}
	return res, nil
}

func filterColumns(fs []Filter) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Column
	}
	return out
}

func keep(r tableRow, where []Filter) bool {
	for _, f := range where {
		if (r.cells[f.Column] == f.Value) == f.Not {
			return false
		}
	}
	return true
}

func (m TableMapping) classOf(r tableRow, fname string) (string, error) {
	if m.Class != "" {
		c := r.cells[m.Class]
		if c == "" {
			return "", errors.New("empty class")
		}
		return c, nil
	}
	if c, ok := m.ClassMap[fname]; ok {
		return c, nil
	}
	for _, rule := range m.ClassRules {
		if rule.match(fname) {
			return rule.Value, nil
		}
	}
	if m.ClassMap == nil && m.ClassRules == nil {
		return fname, nil
	}
	return "", fmt.Errorf("no class for functionality %q: the class map and rules name none", fname)
}

func labelIndex(labels []string, v string) (int, error) {
	if i := slices.Index(labels, v); i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("label %q is none of %q", v, labels)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
