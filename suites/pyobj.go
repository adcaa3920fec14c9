package suites

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nlpodyssey/gopickle/types"
)

// Stubs for the Python objects a CheckList suite pickle refers to. CheckList
// pickles with dill; the pickle names classes and functions from checklist,
// numpy, dill, munch and collections. None of their code is needed: classes
// become pyClass values that build pyObject instances holding their state, and
// numpy arrays and scalars are decoded into Go values.

// pyClass stands for any Python class or function the pickle names.
type pyClass struct {
	module, name string
}

func (c *pyClass) qualified() string { return c.module + "." + c.name }

// Call handles REDUCE: most callables simply produce an object remembering
// the call; numpy's reconstructors and scalars produce decoded values.
func (c *pyClass) Call(args ...any) (any, error) {
	q := c.qualified()
	if strings.HasPrefix(c.module, "numpy") {
		// numpy moved its internals between releases (numpy.core.multiarray,
		// numpy.core._multiarray_umath, numpy._core...); only the name matters.
		q = "numpy." + c.name
	}
	switch q {
	case "dill._dill._get_attr":
		// _get_attr(_import_module("numpy"), "str_") names a class.
		if len(args) == 2 {
			mod, _ := args[0].(*pyObject)
			attr, _ := args[1].(string)
			if mod != nil && mod.class.name == "_import_module" && len(mod.args) == 1 {
				if m, ok := mod.args[0].(string); ok && attr != "" {
					return &pyClass{module: m, name: attr}, nil
				}
			}
		}
	case "numpy.str_", "numpy.unicode_", "numpy.bytes_":
		if len(args) == 1 {
			if s, ok := args[0].(string); ok {
				return s, nil
			}
		}
	case "numpy.int64", "numpy.int32", "numpy.int_", "numpy.intc", "numpy.uint8", "numpy.bool_",
		"numpy.float64", "numpy.float32":
		if len(args) == 1 {
			switch args[0].(type) {
			case int, float64, bool:
				return args[0], nil
			}
		}
	case "numpy._reconstruct":
		return &ndarray{}, nil
	case "numpy.dtype":
		if len(args) == 0 {
			return nil, fmt.Errorf("numpy.dtype called without arguments")
		}
		s, _ := args[0].(string)
		return &dtype{kind: s}, nil
	case "numpy.scalar":
		if len(args) != 2 {
			return nil, fmt.Errorf("numpy scalar with %d arguments", len(args))
		}
		dt, ok := args[0].(*dtype)
		if !ok {
			return nil, fmt.Errorf("numpy scalar without a dtype")
		}
		var raw []byte
		switch b := args[1].(type) {
		case string: // protocol 2 pickles bytes as latin-1 strings
			raw = []byte(b)
		case []byte:
			raw = b
		default:
			return nil, fmt.Errorf("numpy scalar without its bytes (%T)", args[1])
		}
		vals, err := dt.decode(raw, 1)
		if err != nil {
			return nil, err
		}
		return vals[0], nil
	}
	return &pyObject{class: c, args: args}, nil
}

// PyNew handles NEWOBJ.
func (c *pyClass) PyNew(args ...any) (any, error) {
	return &pyObject{class: c, args: args}, nil
}

// pyObject is an instance of a stubbed class: its pickled state and items.
type pyObject struct {
	class *pyClass
	args  []any
	state any
	attrs map[string]any
	items *types.Dict // for dict subclasses (Munch, defaultdict)
}

func (o *pyObject) PySetState(state any) error {
	o.state = state
	if d, ok := state.(*types.Dict); ok {
		o.setAttrs(d)
	}
	if t, ok := state.(*types.Tuple); ok && t.Len() == 2 {
		// (dict state, slot state)
		if d, ok := t.Get(0).(*types.Dict); ok {
			o.setAttrs(d)
		}
		if d, ok := t.Get(1).(*types.Dict); ok {
			o.setAttrs(d)
		}
	}
	return nil
}

func (o *pyObject) setAttrs(d *types.Dict) {
	if o.attrs == nil {
		o.attrs = map[string]any{}
	}
	for _, e := range *d {
		if k, ok := e.Key.(string); ok {
			o.attrs[k] = e.Value
		}
	}
}

// Set implements SETITEM(S) for dict subclasses.
func (o *pyObject) Set(key, value any) {
	if o.items == nil {
		o.items = types.NewDict()
	}
	o.items.Set(key, value)
}

// Append and Extend implement APPEND(S) for list subclasses.
func (o *pyObject) Append(v any) {
	if o.items == nil {
		o.items = types.NewDict()
	}
	o.items.Set(o.items.Len(), v)
}

func (o *pyObject) attr(name string) (any, bool) {
	v, ok := o.attrs[name]
	return v, ok
}

// dtype is a numpy dtype: kind is numpy's type string such as "i8", "f8",
// "U7" or "O"; the byte order comes from its pickled state.
type dtype struct {
	kind      string
	bigEndian bool
}

func (d *dtype) PySetState(state any) error {
	t, ok := state.(*types.Tuple)
	if !ok || t.Len() < 2 {
		return fmt.Errorf("numpy dtype state %T", state)
	}
	if order, ok := t.Get(1).(string); ok {
		d.bigEndian = order == ">"
	}
	return nil
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
		if err != nil {
			return nil, fmt.Errorf("numpy dtype %q: %v", d.kind, err)
		}
		size = s
	}
	out := make([]any, n)
	switch d.kind[0] {
	case 'i', 'u', 'b':
		if d.kind == "b1" {
			size = 1
		}
		if size == 0 || len(raw) < n*size {
			return nil, fmt.Errorf("numpy %s data: %d bytes for %d values", d.kind, len(raw), n)
		}
		for i := range out {
			b := raw[i*size : (i+1)*size]
			var v uint64
			switch size {
			case 1:
				v = uint64(b[0])
			case 2:
				v = uint64(order.Uint16(b))
			case 4:
				v = uint64(order.Uint32(b))
			case 8:
				v = order.Uint64(b)
			default:
				return nil, fmt.Errorf("numpy integer of %d bytes", size)
			}
			switch {
			case d.kind[0] == 'b':
				out[i] = v != 0
			case d.kind[0] == 'i':
				shift := 64 - 8*uint(size)
				out[i] = int(int64(v<<shift) >> shift)
			default:
				out[i] = int(v)
			}
		}
	case 'f':
		if len(raw) < n*size {
			return nil, fmt.Errorf("numpy %s data: %d bytes for %d values", d.kind, len(raw), n)
		}
		for i := range out {
			b := raw[i*size : (i+1)*size]
			switch size {
			case 4:
				out[i] = float64(math.Float32frombits(order.Uint32(b)))
			case 8:
				out[i] = math.Float64frombits(order.Uint64(b))
			default:
				return nil, fmt.Errorf("numpy float of %d bytes", size)
			}
		}
	case 'U':
		// UTF-32 code units, NUL-padded.
		width := size * 4
		if len(raw) < n*width {
			return nil, fmt.Errorf("numpy %s data: %d bytes for %d values", d.kind, len(raw), n)
		}
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

func (a *ndarray) PySetState(state any) error {
	t, ok := state.(*types.Tuple)
	if !ok || t.Len() != 5 {
		return fmt.Errorf("numpy array state %T", state)
	}
	shapeT, ok := t.Get(1).(*types.Tuple)
	if !ok {
		return fmt.Errorf("numpy array shape %T", t.Get(1))
	}
	n := 1
	a.shape = a.shape[:0]
	for _, s := range *shapeT {
		k, ok := s.(int)
		if !ok || k < 0 {
			return fmt.Errorf("numpy array shape entry %v", s)
		}
		a.shape = append(a.shape, k)
		n *= k
	}
	dt, ok := t.Get(2).(*dtype)
	if !ok {
		return fmt.Errorf("numpy array dtype %T", t.Get(2))
	}
	switch data := t.Get(4).(type) {
	case *types.List: // object arrays pickle their elements
		if len(*data) != n {
			return fmt.Errorf("numpy object array: %d elements for shape %v", len(*data), a.shape)
		}
		a.values = append([]any(nil), (*data)...)
	case string:
		vals, err := dt.decode([]byte(data), n)
		if err != nil {
			return err
		}
		a.values = vals
	case []byte:
		vals, err := dt.decode(data, n)
		if err != nil {
			return err
		}
		a.values = vals
	default:
		return fmt.Errorf("numpy array data %T", data)
	}
	return nil
}

// Call lets a stub object be called, as dill calls the types it rebuilds
// (dill._dill._load_type('CodeType') returns a class that is then called).
func (o *pyObject) Call(args ...any) (any, error) {
	return &pyObject{class: &pyClass{module: o.class.module, name: o.class.name + "()"}, args: args}, nil
}
