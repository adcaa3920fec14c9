package suites

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/internal/pickle"
)

// CheckList pickles its suites with dill. The pickle names classes and
// functions from checklist, numpy, dill, munch and collections; none of
// their code is needed, and none runs. checklistAllow lets through exactly
// the names the three released suites use: CheckList's classes (and
// munch.Munch) become plain Objects holding their state, OrderedDict and
// defaultdict become dicts, numpy arrays and scalars are decoded into Go
// values, and dill's records of the expectation functions (code objects,
// functions, cells) stay inert data that the importer never reads.
var checklistAllow = &pickle.AllowList{What: "a CheckList suite (CheckList's classes, numpy arrays and dill's function records only)"}

// numpyModules are the modules numpy has kept its array internals in
// (numpy.core.multiarray, numpy.core._multiarray_umath, numpy._core…);
// only the name within them matters.
var numpyModules = []string{"numpy", "numpy.core.multiarray", "numpy.core._multiarray_umath", "numpy._core.multiarray", "numpy._core._multiarray_umath"}

// dillModules are the modules dill._dill._import_module may name: those
// whose attributes the released suites look up with _get_attr, and those
// their expectation functions' globals hold.
var dillModules = map[string]bool{"builtins": true, "itertools": true, "re": true}

func init() {
	g := map[string]pickle.Func{}
	for _, q := range []string{"checklist.test_suite.TestSuite", "checklist.test_types.MFT", "checklist.test_types.INV",
		"checklist.test_types.DIR", "munch.Munch",
		// dill's records of a function: kept, never called.
		"dill._dill._create_function", "dill._dill._create_cell", "dill._dill._create_code", "types.CodeType"} {
		i := strings.LastIndexByte(q, '.')
		g[q] = pickle.Plain(q[:i], q[i+1:])
	}
	// Named by the expectation functions' globals, never called.
	for _, q := range []string{"checklist.expect.Expect", "checklist.expect.iter_with_optional", "types.ClassType",
		"builtins.len", "builtins.list", "builtins.zip", "builtins.type", "builtins.Exception",
		// defaultdict factories (suite.info), dropped by newDict.
		"builtins.dict", "builtins.str"} {
		g[q] = nil
	}
	g["collections.OrderedDict"] = newDict
	g["collections.defaultdict"] = newDict
	g["dill._dill._import_module"] = importModule
	g["dill._dill._get_attr"] = getAttr
	g["dill._dill._load_type"] = loadType
	for _, m := range numpyModules {
		dillModules[m] = true
		g[m+".dtype"] = newDType
		g[m+".ndarray"] = nil
		g[m+"._reconstruct"] = func(pickle.Tuple) (any, error) { return &ndarray{}, nil }
		g[m+".scalar"] = numpyScalar
	}
	checklistAllow.Globals = g
	checklistAllow.Explain = func(module, name string) string {
		if module == "checklist.test_types" {
			return fmt.Sprintf("unknown test class %s (want checklist.test_types MFT, INV or DIR)", name)
		}
		return ""
	}
}

// newDict is OrderedDict() or defaultdict(factory): a dict whose items
// SETITEMS fills (the factory, a dill function record, is dropped).
func newDict(args pickle.Tuple) (any, error) {
	if len(args) > 1 {
		return nil, fmt.Errorf("a dict made with %d arguments", len(args))
	}
	return pickle.NewDict(), nil
}

// module is what dill._dill._import_module returns: a module's name, whose
// attributes _get_attr resolves on the allow-list.
type module struct{ name string }

func (*module) PyType() string { return "module" }

func importModule(args pickle.Tuple) (any, error) {
	if len(args) == 1 {
		if name, ok := args[0].(string); ok {
			if !dillModules[name] {
				return nil, fmt.Errorf("dill._dill._import_module(%q): not a module CheckList's suites use", name)
			}
			return &module{name}, nil
		}
	}
	return nil, fmt.Errorf("dill._dill._import_module%s", pickle.Describe(args))
}

// getAttr is dill's _get_attr(obj, name): an attribute of a module, or of
// the builtins (older dill passes the module's name as a string, whose
// attribute getattr does not find, and falls back to the builtins).
func getAttr(args pickle.Tuple) (any, error) {
	if len(args) == 2 {
		name, ok := args[1].(string)
		switch m := args[0].(type) {
		case *module:
			if ok {
				return checklistAllow.Lookup(m.name, name)
			}
		case string:
			if ok {
				return checklistAllow.Lookup("builtins", name)
			}
		}
	}
	return nil, fmt.Errorf("dill._dill._get_attr%s", pickle.Describe(args))
}

// loadType is dill's _load_type(name): a type of the types module (the
// names ending in "Type") or a builtin type.
func loadType(args pickle.Tuple) (any, error) {
	if len(args) == 1 {
		if name, ok := args[0].(string); ok {
			if strings.HasSuffix(name, "Type") {
				return checklistAllow.Lookup("types", name)
			}
			return checklistAllow.Lookup("builtins", name)
		}
	}
	return nil, fmt.Errorf("dill._dill._load_type%s", pickle.Describe(args))
}

// dtype is a numpy dtype: kind is numpy's type string such as "i8", "f8",
// "U7" or "O"; the byte order comes from its pickled state.
type dtype struct {
	kind      string
	bigEndian bool
}

func (*dtype) PyType() string { return "numpy.dtype" }

func newDType(args pickle.Tuple) (any, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("numpy.dtype called without arguments")
	}
	s, _ := args[0].(string)
	return &dtype{kind: s}, nil
}

func (d *dtype) SetState(state any) error {
	t, ok := state.(pickle.Tuple)
	if !ok || len(t) < 2 {
		return fmt.Errorf("numpy dtype state %s", pickle.TypeName(state))
	}
	if order, ok := t[1].(string); ok {
		d.bigEndian = order == ">"
	}
	return nil
}

// numpyScalar is numpy's scalar(dtype, bytes): the decoded value.
func numpyScalar(args pickle.Tuple) (any, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("numpy scalar with %d arguments", len(args))
	}
	dt, ok := args[0].(*dtype)
	if !ok {
		return nil, fmt.Errorf("numpy scalar without a dtype")
	}
	raw, err := rawBytes(args[1])
	if err != nil {
		return nil, fmt.Errorf("numpy scalar: %w", err)
	}
	vals, err := dt.decode(raw, 1)
	if err != nil {
		return nil, err
	}
	return vals[0], nil
}

// rawBytes is numpy's data: bytes, or (protocol 2) the Latin-1 string
// Python 2 pickled them as.
func rawBytes(v any) ([]byte, error) {
	switch b := v.(type) {
	case []byte:
		return b, nil
	case string:
		return pickle.Latin1Bytes(b)
	}
	return nil, fmt.Errorf("data of type %s, want bytes", pickle.TypeName(v))
}

// decode reads n values from raw.
func (d *dtype) decode(raw []byte, n int) ([]any, error) {
	var order binary.ByteOrder = binary.LittleEndian
	if d.bigEndian {
		order = binary.BigEndian
	}
	if d.kind == "" {
		return nil, fmt.Errorf("numpy dtype without a type")
	}
	size := 0
	if len(d.kind) > 1 {
		s, err := strconv.Atoi(d.kind[1:])
		if err != nil || s < 0 {
			return nil, fmt.Errorf("numpy dtype %q", d.kind)
		}
		size = s
	}
	// Every value takes at least one byte of raw, so n is bounded by the
	// pickle's size before anything is allocated.
	width := size
	if d.kind[0] == 'U' {
		if size > math.MaxInt/4 { // 4 × size would wrap round to a small width
			return nil, fmt.Errorf("numpy dtype %q", d.kind)
		}
		width = 4 * size
	}
	if d.kind == "b1" {
		width = 1
	}
	if width <= 0 || n < 0 || n > len(raw)/width {
		return nil, fmt.Errorf("numpy %s data: %d bytes for %d values", d.kind, len(raw), n)
	}
	out := make([]any, n)
	switch d.kind[0] {
	case 'i', 'u', 'b':
		for i := range out {
			b := raw[i*width : (i+1)*width]
			var v uint64
			switch width {
			case 1:
				v = uint64(b[0])
			case 2:
				v = uint64(order.Uint16(b))
			case 4:
				v = uint64(order.Uint32(b))
			case 8:
				v = order.Uint64(b)
			default:
				return nil, fmt.Errorf("numpy integer of %d bytes", width)
			}
			switch {
			case d.kind[0] == 'b':
				out[i] = v != 0
			case d.kind[0] == 'i':
				shift := 64 - 8*uint(width)
				out[i] = int64(v<<shift) >> shift
			default:
				out[i] = int64(v)
			}
		}
	case 'f':
		for i := range out {
			b := raw[i*width : (i+1)*width]
			switch width {
			case 4:
				out[i] = float64(math.Float32frombits(order.Uint32(b)))
			case 8:
				out[i] = math.Float64frombits(order.Uint64(b))
			default:
				return nil, fmt.Errorf("numpy float of %d bytes", width)
			}
		}
	case 'U':
		// UTF-32 code units, NUL-padded.
		for i := range out {
			var sb strings.Builder
			for j := 0; j < size; j++ {
				r := rune(order.Uint32(raw[i*width+4*j:]))
				if r == 0 {
					break
				}
				sb.WriteRune(r)
			}
			out[i] = sb.String()
		}
	default:
		return nil, fmt.Errorf("unsupported numpy dtype %q", d.kind)
	}
	return out, nil
}

// ndarray is a decoded one- or more-dimensional numpy array, flattened.
type ndarray struct {
	shape  []int
	values []any
}

func (*ndarray) PyType() string { return "numpy.ndarray" }

func (a *ndarray) SetState(state any) error {
	t, ok := state.(pickle.Tuple)
	if !ok || len(t) != 5 {
		return fmt.Errorf("numpy array state %s", pickle.TypeName(state))
	}
	shapeT, ok := t[1].(pickle.Tuple)
	if !ok {
		return fmt.Errorf("numpy array shape %s", pickle.TypeName(t[1]))
	}
	n := 1
	a.shape = a.shape[:0]
	for _, s := range shapeT {
		k, ok := s.(int64)
		// Each element takes at least one byte of the pickle: a shape
		// larger than it is refused before its product can overflow.
		if !ok || k < 0 || k > math.MaxInt32 || (k > 0 && n > math.MaxInt32/int(k)) {
			return fmt.Errorf("numpy array shape entry %s", pickle.Describe(s))
		}
		a.shape = append(a.shape, int(k))
		n *= int(k)
	}
	dt, ok := t[2].(*dtype)
	if !ok {
		return fmt.Errorf("numpy array dtype %s", pickle.TypeName(t[2]))
	}
	if data, ok := t[4].(*pickle.List); ok { // object arrays pickle their elements
		if len(data.Items) != n {
			return fmt.Errorf("numpy object array: %d elements for shape %v", len(data.Items), a.shape)
		}
		a.values = append([]any(nil), data.Items...)
		return nil
	}
	raw, err := rawBytes(t[4])
	if err != nil {
		return fmt.Errorf("numpy array: %w", err)
	}
	a.values, err = dt.decode(raw, n)
	return err
}
