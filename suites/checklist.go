package suites

//go:generate go run ./internal/gentable ../../shared/data/checklist/converted checklist_expectations.json

import (
	"archive/tar"
	"bufio"
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

	"github.com/beluga-nlp/beluga/internal/memlimit"
	"github.com/beluga-nlp/beluga/internal/pickle"
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
	s, err := suiteFromPickle(obj, len(raw))
	if err != nil {
		return nil, fmt.Errorf("checklist suite %s: %w", name, err)
	}
	return s, nil
}

// unpickleBytes is what reading a CheckList pickle takes per byte of it,
// with room: the 14.8 MB sentiment suite peaks at 127 MB.
const unpickleBytes = 10

// readPickleBytes reads the suite's pickle: the file, or the first .pkl
// member of a .tar.gz. Its size — the file's, or what the member's header
// declares — is checked against the memory limit before anything is read:
// a 3 MB archive can hold a 3 GiB member of zeros.
func readPickleBytes(path string) (data []byte, inner string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("checklist suite %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("checklist suite %s: %w", path, err)
	}
	br := bufio.NewReader(f)
	magic, _ := br.Peek(2)
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		data, err := readSized(br, info.Size())
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
			data, err := readSized(tr, h.Size)
			if err != nil {
				return nil, "", fmt.Errorf("checklist suite %s: %s: %w", path, h.Name, err)
			}
			return data, h.Name, nil
		}
	}
}

// readSized reads the size bytes of a pickle from r once the memory they
// and their unpickling take is known to fit.
func readSized(r io.Reader, size int64) ([]byte, error) {
	if err := memlimit.Check(fmt.Sprintf("reading a %d-byte pickle", size), float64(size)*unpickleBytes); err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// unpickle reads a CheckList pickle with the shared restricted VM and
// CheckList's allow-list.
func unpickle(data []byte) (any, error) {
	return pickle.Unpickle(data, checklistAllow)
}

// suiteFromPickle reads the suite a pickle of size bytes holds.
func suiteFromPickle(obj any, size int) (*Suite, error) {
	root, ok := obj.(*pickle.Object)
	if !ok || root.Class.Name != "TestSuite" {
		return nil, fmt.Errorf("not a CheckList TestSuite (found %s)", describe(obj))
	}
	testsAny, _ := root.Attr("tests")
	tests, ok := testsAny.(*pickle.Dict)
	if !ok {
		return nil, fmt.Errorf("TestSuite.tests is %s, want an OrderedDict", describe(testsAny))
	}
	var names []string
	for i := 0; i < tests.Len(); i++ {
		n, ok := tests.Key(i).(string)
		if !ok {
			return nil, fmt.Errorf("test name %s is not a string", describe(tests.Key(i)))
		}
		names = append(names, n)
	}
	task := guessTask(names)
	s := &Suite{Name: task, Task: task}
	if task != "" {
		s.Labels, s.ModelLabels = taskLabels[task].labels, taskLabels[task].model
	}
	meta := &metaJSON{budget: size * unpickleBytes}
	for i, name := range names {
		f, err := functionalityFromPickle(task, name, tests.Value(i), meta)
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

func functionalityFromPickle(task, name string, v any, mj *metaJSON) (*Functionality, error) {
	t, ok := v.(*pickle.Object)
	if !ok {
		return nil, fmt.Errorf("not a test object (found %s)", describe(v))
	}
	tt, err := ParseTestType(t.Class.Name)
	if err != nil || t.Class.Module != "checklist.test_types" {
		return nil, fmt.Errorf("unknown test class %s (want checklist.test_types MFT, INV or DIR)", t.Class)
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
	case DefaultExpectation(tt).Kind != "" && !tt.Spec().Paired:
		f.Expect = DefaultExpectation(tt)
	default:
		return nil, fmt.Errorf("%w for %s test: CheckList stores it as a Python closure; write the suite in the native format (see docs/suite-format.md) with its expectation", ErrUnknownExpectation, tt)
	}
	if agg == "" {
		agg = AggAll
		if tt.Spec().Paired {
			agg = AggAllExceptFirst
		}
	}
	f.Expect.Agg = agg

	dataAny, _ := t.Attr("data")
	data, ok := dataAny.(*pickle.List)
	if !ok {
		return nil, fmt.Errorf("data is %s, want a list", describe(dataAny))
	}
	labelsAny, _ := t.Attr("labels")
	metaAny, _ := t.Attr("meta")
	var meta []any
	if l, ok := metaAny.(*pickle.List); ok {
		meta = l.Items
	}
	for i, d := range data.Items {
		c := &Case{ID: i}
		inputs, err := inputsFromPickle(d)
		if err != nil {
			return nil, fmt.Errorf("case %d: %w", i, err)
		}
		c.Inputs = inputs
		if tt.Spec().Paired && len(inputs) < 2 {
			f.Expect.AllowSingleInput = true
		}
		if c.Labels, err = labelsFromPickle(labelsAny, i, len(inputs)); err != nil {
			return nil, fmt.Errorf("case %d labels: %w", i, err)
		}
		if i < len(meta) && meta[i] != nil {
			m, err := mj.value(meta[i], 0)
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
// is a defaultdict of defaultdicts).
func infoDescription(root *pickle.Object, name string) string {
	info, _ := root.Attr("info")
	entries := pickle.Items(info)
	if entries == nil {
		return ""
	}
	v, _ := entries.Get(name)
	fields := pickle.Items(v)
	if fields == nil {
		return ""
	}
	d, _ := fields.Get("description")
	s, _ := d.(string)
	return s
}

func stringAttr(o *pickle.Object, name string) (string, bool) {
	v, ok := o.Attr(name)
	s, isStr := v.(string)
	return s, ok && isStr
}

func inputsFromPickle(d any) ([]Input, error) {
	switch x := d.(type) {
	case string, pickle.Tuple:
		in, err := inputFromPickle(x)
		if err != nil {
			return nil, err
		}
		return []Input{in}, nil
	case *pickle.List:
		if len(x.Items) == 0 {
			return nil, errors.New("no inputs")
		}
		out := make([]Input, len(x.Items))
		for j, v := range x.Items {
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
	case pickle.Tuple:
		if len(x) == 2 {
			a, ok1 := x[0].(string)
			b, ok2 := x[1].(string)
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
	case *pickle.List:
		if i >= len(x.Items) {
			return nil, fmt.Errorf("%d labels for case %d", len(x.Items), i)
		}
		return caseLabels(x.Items[i], nInputs)
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
	case *pickle.List:
		elems = x.Items
	case pickle.Tuple:
		elems = x
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
	case int64:
		if x < 0 || x > math.MaxInt32 {
			return Label{}, fmt.Errorf("class %d out of range", x)
		}
		return ClassLabel(int(x)), nil
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

// metaJSON converts cases' meta to plain JSON-encodable Go values. The
// pickle's memo shares values, so a few bytes can make a list that holds
// itself, or a chain of lists each holding the one before twice (2^n values
// from n×8 bytes), or a list naming one long string a million times: the
// conversion refuses nesting deeper than maxMetaDepth (encoding/json's
// decoder's limit) and counts what it makes — 8 bytes a value and a slot,
// and each string's bytes — against budget, unpickleBytes a byte of the
// pickle for the whole suite, before it makes it.
type metaJSON struct{ budget int }

const maxMetaDepth = 10000

func (mj *metaJSON) spend(n int) error {
	if mj.budget -= n; mj.budget < 0 {
		return fmt.Errorf("meta would take more than %d bytes a byte of the pickle (values shared many times over)", unpickleBytes)
	}
	return nil
}

func (mj *metaJSON) value(v any, depth int) (any, error) {
	if depth > maxMetaDepth {
		return nil, fmt.Errorf("meta nested more than %d deep (a value that holds itself?)", maxMetaDepth)
	}
	n := 8
	if s, ok := v.(string); ok {
		n += len(s)
	}
	if err := mj.spend(n); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil, string, bool, int64:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, nil
		}
		return x, nil
	case *pickle.List:
		return mj.slice(x.Items, depth)
	case pickle.Tuple:
		return mj.slice(x, depth)
	case *ndarray:
		return mj.slice(x.values, depth)
	case *pickle.Dict:
		return mj.dict(x, depth)
	case *pickle.Object:
		// A Munch (a dict subclass) holds its items; other objects their
		// attributes.
		if x.Items != nil {
			return mj.dict(x.Items, depth)
		}
		if x.Attrs != nil {
			return mj.dict(x.Attrs, depth)
		}
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("cannot represent %s as JSON", describe(v))
}

func (mj *metaJSON) slice(xs []any, depth int) (any, error) {
	if err := mj.spend(8 * len(xs)); err != nil {
		return nil, err
	}
	out := make([]any, len(xs))
	for i, x := range xs {
		j, err := mj.value(x, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = j
	}
	return out, nil
}

func (mj *metaJSON) dict(d *pickle.Dict, depth int) (any, error) {
	if err := mj.spend(8 * d.Len()); err != nil {
		return nil, err
	}
	m := make(map[string]any, d.Len())
	for i := 0; i < d.Len(); i++ {
		j, err := mj.value(d.Value(i), depth+1)
		if err != nil {
			return nil, err
		}
		m[fmt.Sprint(d.Key(i))] = j
	}
	return m, nil
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case *pickle.Global:
		return pickle.TypeName(v)
	}
	return "a " + pickle.TypeName(v)
}
