package suites

//go:generate go run ./internal/gentable ../../shared/data/checklist/converted checklist_expectations.json

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"

	"github.com/beluga-nlp/beluga/internal/pickscan"
)

//go:embed checklist_expectations.json
var checklistTableJSON []byte

// releaseTest is one row of the table of the CheckList release suites'
// decoded expectations and BeLUGA's training overrides.
type releaseTest struct {
	Task       string            `json:"task"`
	Name       string            `json:"name"`
	Capability string            `json:"capability"`
	Type       string            `json:"type"`
	Agg        string            `json:"agg"`
	Expect     expectJSON        `json:"expect"`
	Train      map[string]string `json:"train"`
}

var releaseTable = func() map[string]map[string]*releaseTest {
	var rows []*releaseTest
	if err := json.Unmarshal(checklistTableJSON, &rows); err != nil {
		panic("suites: embedded checklist table: " + err.Error())
	}
	t := map[string]map[string]*releaseTest{}
	for _, r := range rows {
		if t[r.Task] == nil {
			t[r.Task] = map[string]*releaseTest{}
		}
		t[r.Task][r.Name] = r
	}
	return t
}()

// Label sets of the release tasks.
var taskLabels = map[string]struct{ labels, model []string }{
	"sentiment": {[]string{"negative", "neutral", "positive"}, []string{"negative", "positive"}},
	"qqp":       {[]string{"not duplicate", "duplicate"}, nil},
	"squad":     {nil, nil},
}

// ErrUnknownExpectation is returned for an INV or DIR test whose expectation
// the project does not know: CheckList pickles expectations as Python
// closures, which cannot be evaluated outside Python.
var ErrUnknownExpectation = errors.New("unknown expectation")

// ImportCheckList reads a CheckList suite pickle (a .pkl file, or a .tar.gz
// holding one, as CheckList publishes them). Expectations come from the
// project's table of the three release suites; an INV or DIR test not in that
// table is an error that asks for the suite in the native format.
func ImportCheckList(path string) (*Suite, error) {
	raw, inner, err := readPickleBytes(path)
	if err != nil {
		return nil, err
	}
	name := path
	if inner != "" {
		name = path + ":" + inner
	}
	obj, err := unpickle(raw)
	if err != nil {
		return nil, fmt.Errorf("checklist suite %s: %w", name, err)
	}
	s, err := suiteFromPickle(obj)
	if err != nil {
		return nil, fmt.Errorf("checklist suite %s: %w", name, err)
	}
	return s, nil
}

func readPickleBytes(path string) (data []byte, inner string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("checklist suite %s: %w", path, err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	magic, _ := br.Peek(2)
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, "", fmt.Errorf("checklist suite %s: %w", path, err)
		}
		return data, "", nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, "", fmt.Errorf("checklist suite %s: %w", path, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, "", fmt.Errorf("checklist suite %s: the archive holds no .pkl file", path)
		}
		if err != nil {
			return nil, "", fmt.Errorf("checklist suite %s: archive: %w", path, err)
		}
		if h.Typeflag == tar.TypeReg && strings.HasSuffix(h.Name, ".pkl") {
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, "", fmt.Errorf("checklist suite %s: %s: %w", path, h.Name, err)
			}
			return data, h.Name, nil
		}
	}
}

func unpickle(data []byte) (obj any, err error) {
	// gopickle indexes its stack and memo without bounds checks on some
	// malformed inputs; a corrupt file must be an error, not a crash.
	defer func() {
		if r := recover(); r != nil {
			obj, err = nil, fmt.Errorf("malformed pickle: %v", r)
		}
	}()
	if err := pickscan.Scan(data); err != nil {
		return nil, err
	}
	u := pickle.NewUnpickler(bytes.NewReader(data))
	u.FindClass = func(module, name string) (any, error) {
		return &pyClass{module: module, name: name}, nil
	}
	obj, err = u.Load()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("truncated pickle: %w", err)
		}
		return nil, fmt.Errorf("malformed pickle: %w", err)
	}
	return obj, nil
}

func suiteFromPickle(obj any) (*Suite, error) {
	root, ok := obj.(*pyObject)
	if !ok || root.class.name != "TestSuite" {
		return nil, fmt.Errorf("not a CheckList TestSuite (found %s)", describe(obj))
	}
	testsAny, _ := root.attr("tests")
	tests, ok := testsAny.(*types.OrderedDict)
	if !ok {
		return nil, fmt.Errorf("TestSuite.tests is %s, want an OrderedDict", describe(testsAny))
	}
	var names []string
	for e := tests.List.Front(); e != nil; e = e.Next() {
		entry := e.Value.(*types.OrderedDictEntry)
		n, ok := entry.Key.(string)
		if !ok {
			return nil, fmt.Errorf("test name %s is not a string", describe(entry.Key))
		}
		names = append(names, n)
	}
	task := guessTask(names)
	s := &Suite{Name: task, Task: task}
	if task != "" {
		s.Labels, s.ModelLabels = taskLabels[task].labels, taskLabels[task].model
	}
	for e := tests.List.Front(); e != nil; e = e.Next() {
		entry := e.Value.(*types.OrderedDictEntry)
		name := entry.Key.(string)
		f, err := functionalityFromPickle(task, name, entry.Value)
		if err != nil {
			return nil, fmt.Errorf("test %q: %w", name, err)
		}
		// suite.add keeps a test's description in suite.info, not on the
		// test (the release suites' tests have none of their own).
		if d := infoDescription(root, name); d != "" {
			f.Description = d
		}
		s.Functionalities = append(s.Functionalities, f)
	}
	return s, nil
}

// guessTask names the release suite whose table holds most of names, or ""
// for a suite the project does not know.
func guessTask(names []string) string {
	best, bestN := "", 0
	tasks := make([]string, 0, len(releaseTable))
	for t := range releaseTable {
		tasks = append(tasks, t)
	}
	sort.Strings(tasks)
	for _, t := range tasks {
		n := 0
		for _, name := range names {
			if releaseTable[t][name] != nil {
				n++
			}
		}
		if n > bestN {
			best, bestN = t, n
		}
	}
	if bestN*2 < len(names) {
		return ""
	}
	return best
}

func functionalityFromPickle(task, name string, v any) (*Functionality, error) {
	t, ok := v.(*pyObject)
	if !ok {
		return nil, fmt.Errorf("not a test object (found %s)", describe(v))
	}
	tt, err := ParseTestType(t.class.name)
	if err != nil || !strings.HasPrefix(t.class.module, "checklist") {
		return nil, fmt.Errorf("unknown test class %s (want checklist.test_types MFT, INV or DIR)", t.class.qualified())
	}
	f := &Functionality{Name: name, Type: tt}
	f.Class, _ = stringAttr(t, "capability")
	f.Description, _ = stringAttr(t, "description")
	agg, _ := stringAttr(t, "agg_fn")

	row := releaseTable[task][name]
	switch {
	case row != nil:
		if row.Type != string(tt) || row.Capability != f.Class {
			return nil, fmt.Errorf("is %s/%s in the pickle but %s/%s in the release table", tt, f.Class, row.Type, row.Capability)
		}
		e := row.Expect
		f.Expect = Expectation{Kind: e.Kind, Value: e.Value, Tolerance: e.Tolerance, Increasing: e.Increasing,
			Direction: e.Direction, Slice: e.Slice, SliceAgg: e.SliceAgg}
		if tr, err := trainingFromTable(row.Train); err != nil {
			return nil, err
		} else {
			f.Train = tr
		}
	case tt == MFT:
		f.Expect = DefaultExpectation(MFT)
	default:
		return nil, fmt.Errorf("%w for %s test: CheckList stores it as a Python closure; write the suite in the native format (see docs/suite-format.md) with its expectation", ErrUnknownExpectation, tt)
	}
	if agg == "" {
		agg = DefaultExpectation(MFT).Agg
		if tt != MFT {
			agg = AggAllExceptFirst
		}
	}
	f.Expect.Agg = agg

	dataAny, _ := t.attr("data")
	data, ok := dataAny.(*types.List)
	if !ok {
		return nil, fmt.Errorf("data is %s, want a list", describe(dataAny))
	}
	labelsAny, _ := t.attr("labels")
	metaAny, _ := t.attr("meta")
	metaList, _ := metaAny.(*types.List)
	for i, d := range *data {
		c := &Case{ID: i}
		inputs, err := inputsFromPickle(d)
		if err != nil {
			return nil, fmt.Errorf("case %d: %w", i, err)
		}
		c.Inputs = inputs
		if (tt == INV || tt == DIR) && len(inputs) < 2 {
			f.Expect.AllowSingleInput = true
		}
		if c.Labels, err = labelsFromPickle(labelsAny, i, len(inputs)); err != nil {
			return nil, fmt.Errorf("case %d labels: %w", i, err)
		}
		if metaList != nil && i < len(*metaList) && (*metaList)[i] != nil {
			m, err := jsonValue((*metaList)[i])
			if err != nil {
				return nil, fmt.Errorf("case %d meta: %w", i, err)
			}
			if c.Meta, err = json.Marshal(m); err != nil {
				return nil, fmt.Errorf("case %d meta: %w", i, err)
			}
		}
		f.Cases = append(f.Cases, c)
	}
	return f, nil
}

func trainingFromTable(m map[string]string) (Training, error) {
	var tr Training
	for k, v := range m {
		switch k {
		case "type":
			t, err := ParseTestType(v)
			if err != nil {
				return tr, err
			}
			tr.Type = t
		case "label":
			tr.Label = v
		case "direction":
			tr.Direction = v
		case "slice":
			tr.Slice = v
		case "scored":
			tr.Scored = v == "true"
		default:
			return tr, fmt.Errorf("release table: unknown training override %q", k)
		}
	}
	return tr, nil
}

// infoDescription is suite.info[name]["description"], or "" (the info
// is a defaultdict of defaultdicts: stubbed objects whose items hold it).
func infoDescription(root *pyObject, name string) string {
	info, _ := root.attr("info")
	var entries *types.Dict
	switch x := info.(type) {
	case *pyObject:
		entries = x.items
	case *types.Dict:
		entries = x
	}
	if entries == nil {
		return ""
	}
	v, _ := entries.Get(name)
	var fields *types.Dict
	switch x := v.(type) {
	case *pyObject:
		fields = x.items
	case *types.Dict:
		fields = x
	}
	if fields == nil {
		return ""
	}
	d, _ := fields.Get("description")
	s, _ := d.(string)
	return s
}

func stringAttr(o *pyObject, name string) (string, bool) {
	v, ok := o.attr(name)
	s, isStr := v.(string)
	return s, ok && isStr
}

func inputsFromPickle(d any) ([]Input, error) {
	switch x := d.(type) {
	case string, *types.Tuple:
		in, err := inputFromPickle(x)
		if err != nil {
			return nil, err
		}
		return []Input{in}, nil
	case *types.List:
		if len(*x) == 0 {
			return nil, errors.New("no inputs")
		}
		out := make([]Input, len(*x))
		for j, v := range *x {
			in, err := inputFromPickle(v)
			if err != nil {
				return nil, fmt.Errorf("input %d: %w", j, err)
			}
			out[j] = in
		}
		return out, nil
	}
	return nil, fmt.Errorf("input is %s, want a string, a pair or a list", describe(d))
}

func inputFromPickle(v any) (Input, error) {
	switch x := v.(type) {
	case string:
		return Input{Text: x}, nil
	case *types.Tuple:
		if x.Len() == 2 {
			a, ok1 := x.Get(0).(string)
			b, ok2 := x.Get(1).(string)
			if ok1 && ok2 {
				return Input{Text: a, Pair: b, IsPair: true}, nil
			}
		}
	}
	return Input{}, fmt.Errorf("input is %s, want a string or a pair of strings", describe(v))
}

// labelsFromPickle turns test.labels into the labels of case i: CheckList's
// labels are None, one value for every case, or a list with one entry per
// case that is itself a value or a list (or numpy array) with one per input.
func labelsFromPickle(labels any, i, nInputs int) ([]Label, error) {
	switch x := labels.(type) {
	case nil:
		return nil, nil
	case *types.List:
		if i >= len(*x) {
			return nil, fmt.Errorf("%d labels for case %d", len(*x), i)
		}
		return caseLabels((*x)[i], nInputs)
	}
	l, err := scalarLabel(labels)
	if err != nil {
		return nil, err
	}
	return []Label{l}, nil
}

func caseLabels(v any, nInputs int) ([]Label, error) {
	var elems []any
	switch x := v.(type) {
	case nil:
		return nil, nil
	case *types.List:
		elems = *x
	case *types.Tuple:
		elems = *x
	case *ndarray:
		elems = x.values
	default:
		l, err := scalarLabel(v)
		if err != nil {
			return nil, err
		}
		return []Label{l}, nil
	}
	if len(elems) != nInputs {
		return nil, fmt.Errorf("%d labels for %d inputs", len(elems), nInputs)
	}
	out := make([]Label, len(elems))
	for j, e := range elems {
		l, err := scalarLabel(e)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", j, err)
		}
		out[j] = l
	}
	return out, nil
}

func scalarLabel(v any) (Label, error) {
	switch x := v.(type) {
	case int:
		if x < 0 {
			return Label{}, fmt.Errorf("negative class %d", x)
		}
		return ClassLabel(x), nil
	case bool:
		if x {
			return ClassLabel(1), nil
		}
		return ClassLabel(0), nil
	case string:
		return AnswerLabel(x), nil
	}
	return Label{}, fmt.Errorf("label is %s, want a class or an answer", describe(v))
}

// jsonValue converts an unpickled value to plain JSON-encodable Go values.
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool, int:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, nil
		}
		return x, nil
	case *types.List:
		return jsonSlice(*x)
	case *types.Tuple:
		return jsonSlice(*x)
	case *ndarray:
		return jsonSlice(x.values)
	case *types.Dict:
		return jsonDict(*x)
	case *pyObject:
		if x.items != nil {
			return jsonDict(*x.items)
		}
		if x.attrs != nil {
			m := map[string]any{}
			for k, a := range x.attrs {
				j, err := jsonValue(a)
				if err != nil {
					return nil, err
				}
				m[k] = j
			}
			return m, nil
		}
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("cannot represent %s as JSON", describe(v))
}

func jsonSlice(xs []any) (any, error) {
	out := make([]any, len(xs))
	for i, x := range xs {
		j, err := jsonValue(x)
		if err != nil {
			return nil, err
		}
		out[i] = j
	}
	return out, nil
}

func jsonDict(d types.Dict) (any, error) {
	m := make(map[string]any, len(d))
	for _, e := range d {
		j, err := jsonValue(e.Value)
		if err != nil {
			return nil, err
		}
		m[fmt.Sprint(e.Key)] = j
	}
	return m, nil
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case *pyObject:
		return "a " + x.class.qualified() + " object"
	case *pyClass:
		return x.qualified()
	}
	return fmt.Sprintf("a %T", v)
}
