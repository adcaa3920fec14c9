package suites

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
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
	// Dialect: the format (csv, tsv or jsonl; empty means the extension's,
	// before .gz), whether a TSV is quoted, and a headerless file's
	// columns by position — the one rule of datasets.Dialect.
	Dialect datasets.Dialect
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
	// label values of every row (filtered or not, after LabelMap) sorted.
	Labels []string
	// LabelMap maps the table's labels onto the suite's (GermEval's
	// OFFENSE onto hateful): datasets.LabelMap, the one label map. A
	// label it does not name is read as written.
	LabelMap datasets.LabelMap
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
	t, err := readTable(path, datasets.Dialect{})
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

// TableImport is what ImportTable read: the suite, the rows it left out,
// and what it found worth a warning.
type TableImport struct {
	Suite *Suite
	// Rows counts the table's rows, Filtered those Where left out, Unlinked
	// the rows of linked functionalities without a link.
	Rows, Filtered, Unlinked int
	// Count accounts for the file's lines (datasets.RowCount).
	Count datasets.RowCount
	// Warnings are texts imported as they are that are likely wrong: empty
	// texts and texts with control characters (a NUL byte), each with its
	// file, line and column.
	Warnings []*LineError
}

type tableRow struct {
	line  int
	cells map[string]string
	// kinds holds, for a JSON-lines row, the JSON kind of each cell that
	// is not a string ("number", "list", ...): a text must be a string.
	kinds map[string]string
}

type table struct {
	header []string
	rows   []tableRow
	count  datasets.RowCount
}

// readTable reads a CSV, TSV or JSON-lines file (optionally .gz) with
// datasets.ReadTable, the one table reader, into rows of named cells.
func readTable(path string, d datasets.Dialect) (*table, error) {
	dt, err := datasets.ReadTable(path, d)
	if err != nil {
		var re *datasets.RowError
		if errors.As(err, &re) {
			return nil, lineError(re)
		}
		return nil, err
	}
	t := &table{header: dt.Header, count: dt.Count}
	for _, r := range dt.Rows {
		row := tableRow{line: r.Line, cells: map[string]string{}, kinds: map[string]string{}}
		for i, h := range dt.Header {
			v, kind := r.Cell(i)
			if h == "-" || kind == "absent" {
				continue
			}
			row.cells[h] = v
			if kind != "" {
				row.kinds[h] = kind
			}
		}
		t.rows = append(t.rows, row)
	}
	return t, nil
}

// lineError is a datasets.RowError as a suite's LineError.
func lineError(re *datasets.RowError) *LineError {
	err := re.Err
	if re.Column > 0 {
		err = fmt.Errorf("column %d: %w", re.Column, re.Err)
	}
	return &LineError{File: re.File, Line: re.Line, Field: re.Field, Err: err}
}

var trailingInt = regexp.MustCompile(`(\d+)$`)

// caseNumber reads a whole number: an integer, or a float-formatted one
// (pandas writes MHC's ref_case_id as 12.0).
func caseNumber(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 && f == math.Trunc(f) && f < math.MaxInt32 {
		return int(f), true
	}
	return 0, false
}

// caseIDs are a table's case ids, read as given. The native format numbers
// its cases: a column of whole numbers (12, or 12.0) gives those numbers;
// a column of texts (MHC's "arabic-12", HANS's pairID "ex7") gives each
// case the number its text ends in, when every text ends in a distinct
// one, else its row's position — and keeps the text in the case's meta
// under the column's name, so that nothing of the id is lost. A number
// with a fraction ("1.5") is refused: it is neither a number of a case nor
// a name one would write.
type caseIDs struct {
	column string
	// text says the ids are texts, kept in meta.
	text bool
	num  map[int]int // row index → case number
	// byText finds a row by its id as written, byNumber by its number.
	byText   map[string]int
	byNumber map[int]int
}

func readCaseIDs(path string, t *table, column string) (*caseIDs, error) {
	ids := &caseIDs{column: column, num: map[int]int{}, byText: map[string]int{}, byNumber: map[int]int{}}
	if column == "" {
		for i := range t.rows {
			ids.num[i] = i
			ids.byNumber[i] = i
		}
		return ids, nil
	}
	whole := true
	for i, r := range t.rows {
		v := strings.TrimSpace(r.cells[column])
		if v == "" {
			return nil, &LineError{File: path, Line: r.line, Field: column, Err: errors.New("empty case id")}
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && f != math.Trunc(f) {
			return nil, &LineError{File: path, Line: r.line, Field: column, Err: fmt.Errorf("%q is not a case id: a number with a fraction (want a whole number, or a name such as ex7)", v)}
		}
		if prev, dup := ids.byText[v]; dup {
			return nil, &LineError{File: path, Line: r.line, Field: column, Err: fmt.Errorf("case id %q again (line %d)", v, t.rows[prev].line)}
		}
		ids.byText[v] = i
		if _, ok := caseNumber(v); !ok {
			whole = false
		}
	}
	if whole {
		for i, r := range t.rows {
			n, _ := caseNumber(r.cells[column])
			if prev, dup := ids.byNumber[n]; dup {
				return nil, &LineError{File: path, Line: r.line, Field: column, Err: fmt.Errorf("case id %d again (line %d)", n, t.rows[prev].line)}
			}
			ids.num[i], ids.byNumber[n] = n, i
		}
		return ids, nil
	}
	ids.text = true
	trailing := map[int]int{}
	for i, r := range t.rows {
		m := trailingInt.FindString(strings.TrimSpace(r.cells[column]))
		n, err := strconv.Atoi(m)
		if _, dup := trailing[n]; m == "" || err != nil || dup {
			trailing = nil
			break
		}
		trailing[n] = i
	}
	for i := range t.rows {
		ids.num[i] = i
	}
	if trailing != nil {
		// Numbers a link may name (MHC's ref_case_id 12.0 for arabic-12).
		for n, i := range trailing {
			ids.num[i], ids.byNumber[n] = n, i
		}
	}
	return ids, nil
}

// find returns the row a link names: by its id as written, else (a
// float-formatted number, as pandas writes MHC's ref_case_id) by number.
func (ids *caseIDs) find(ref string) (int, bool) {
	ref = strings.TrimSpace(ref)
	if i, ok := ids.byText[ref]; ok {
		return i, true
	}
	if n, ok := caseNumber(ref); ok {
		i, found := ids.byNumber[n]
		return i, found
	}
	return 0, false
}

// ImportTable reads a table of test cases as m maps it. Errors name the
// file, line and column.
func ImportTable(path string, m TableMapping) (*TableImport, error) {
	t, err := readTable(path, m.Dialect)
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
		if t := TestType(r.Value); !t.Registered() || !t.Spec().Paired {
			return nil, fmt.Errorf("link rule %s: want %s", r, strings.ReplaceAll(pairedList(), " and ", " or "))
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
	res := &TableImport{Rows: len(t.rows), Count: t.count, Suite: &Suite{Name: name, Task: task}}
	var kept []tableRow
	for _, r := range t.rows {
		if keep(r, m.Where) {
			kept = append(kept, r)
		} else {
			res.Filtered++
		}
	}
	labels, err := m.suiteLabels(path, t)
	if err != nil {
		return nil, err
	}
	res.Suite.Labels = labels
	// The cases by their id, for links; a link may point at a row filtered
	// out (its text is still the original).
	ids, err := readCaseIDs(path, t, m.CaseID)
	if err != nil {
		return nil, err
	}
	positions := map[int]int{}
	for i, r := range t.rows {
		positions[r.line] = i
	}
	// A linked case's group is named after the case its chain of links
	// ends at (a perturbation of a perturbation joins the original's).
	linkRoot := func(i int) int {
		seen := map[int]bool{}
		for !seen[i] {
			seen[i] = true
			next, ok := ids.find(t.rows[i].cells[m.Link])
			if !ok {
				break
			}
			i = next
		}
		return i
	}
	groupName := func(i int) string {
		if m.CaseID != "" {
			return strings.TrimSpace(t.rows[i].cells[m.CaseID])
		}
		return strconv.Itoa(i)
	}
	roots := map[int]int{} // case number → row, of the cases links end at
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
		typ := TestTypes()[0] // the first registered, labelled type
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
			if typ.Spec().Directional {
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
		pos := positions[r.line]
		id := ids.num[pos]
		label, err := labelIndex(labels, m.labelOf(r))
		if err != nil {
			return nil, &LineError{File: path, Line: r.line, Field: m.Label, Err: err}
		}
		in, err := tableInput(path, r, m, &res.Warnings)
		if err != nil {
			return nil, err
		}
		c := &Case{ID: id, Inputs: []Input{in}, Labels: []Label{ClassLabel(label)}}
		if linkType != "" {
			ref := strings.TrimSpace(r.cells[m.Link])
			if ref == "" {
				res.Unlinked++
				continue
			}
			oi, found := ids.find(ref)
			if !found {
				return nil, &LineError{File: path, Line: r.line, Field: m.Link, Err: fmt.Errorf("%q links no case of the table", ref)}
			}
			orig := t.rows[oi]
			ol, err := labelIndex(labels, m.labelOf(orig))
			if err != nil {
				return nil, &LineError{File: path, Line: orig.line, Field: m.Label, Err: err}
			}
			o, err := tableInput(path, orig, m, nil)
			if err != nil {
				return nil, err
			}
			c.Inputs = []Input{o, in}
			c.Labels = []Label{ClassLabel(ol), ClassLabel(label)}
			root := linkRoot(oi)
			c.Group = groupName(root)
			roots[ids.num[root]] = root
		}
		meta := map[string]string{}
		for _, h := range t.header {
			if !mapped[h] || (h == m.CaseID && ids.text) {
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
			if root, ok := roots[c.ID]; ok && c.Group == "" {
				c.Group = groupName(root)
			}
		}
	}
	return res, nil
}

// tableInput reads a row's input: its text, and its second text for pairs.
// A text that is not a JSON string is refused; an empty text, or one with
// control characters, is kept and warned about in warnings (nil: not).
func tableInput(path string, r tableRow, m TableMapping, warnings *[]*LineError) (Input, error) {
	in := Input{Text: r.cells[m.Text]}
	cols := []string{m.Text}
	if m.Pair != "" {
		in.Pair, in.IsPair = r.cells[m.Pair], true
		cols = append(cols, m.Pair)
	}
	for _, c := range cols {
		if k := r.kinds[c]; k != "" {
			return in, &LineError{File: path, Line: r.line, Field: c, Err: fmt.Errorf("%s, not a text (%s)", k, r.cells[c])}
		}
		if warnings == nil {
			continue
		}
		if msg := TextProblem(r.cells[c]); msg != "" {
			*warnings = append(*warnings, &LineError{File: path, Line: r.line, Field: c, Err: errors.New(msg)})
		}
	}
	return in, nil
}

// TextProblem is datasets.TextProblem: a suite's texts and an i.i.d.
// file's are warned of alike.
func TextProblem(text string) string { return datasets.TextProblem(text) }

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

// labelOf is a row's label as the suite names it (LabelMap applied).
func (m TableMapping) labelOf(r tableRow) string {
	if to, ok := m.LabelMap[r.cells[m.Label]]; ok {
		return to.Name
	}
	return r.cells[m.Label]
}

// suiteLabels returns the suite's labels: Labels, or every row's label
// (filtered or not, so that a filter does not change the classes)
// sorted; at least two, and every label LabelMap maps onto among them.
func (m TableMapping) suiteLabels(path string, t *table) ([]string, error) {
	labels := m.Labels
	if len(labels) == 0 {
		seen := map[string]bool{}
		for _, r := range t.rows {
			if l := m.labelOf(r); !seen[l] {
				seen[l] = true
				labels = append(labels, l)
			}
		}
		slices.Sort(labels)
	}
	if len(labels) < 2 {
		return nil, &LineError{File: path, Field: m.Label, Err: fmt.Errorf("labels %q: a suite needs at least two", labels)}
	}
	if err := m.LabelMap.Check(labels, "the suite"); err != nil {
		return nil, &LineError{File: path, Field: m.Label, Err: err}
	}
	return labels, nil
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
