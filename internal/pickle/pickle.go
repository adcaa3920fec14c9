// Package pickle is beluga's one pickle reader: Python's pickle virtual
// machine (protocols 0 to 5) over a byte slice, restricted the way
// torch.load(weights_only=True) restricts it. A pickle is a program: its
// GLOBAL opcodes name any Python callable (os.system included) and REDUCE
// calls it. Here nothing is ever executed. The VM builds only plain values
// — None, booleans, integers, floats, strings, bytes, tuples, lists, dicts
// — and every global a pickle names is looked up in the caller's
// AllowList: a name not on it is refused as soon as the pickle names it,
// and an allowed name does only what its Func, written in Go, does (build
// a tensor reference, record a CheckList object's state as data).
//
// Bounds come before allocation: every length is checked against the
// bytes left before anything is allocated, and every opcode consumes at
// least one byte, so the values one pickle builds are bounded by its size
// (shared values, through the memo, are shared, not copied). What callers
// make of those values — the tensors a state dict's references describe —
// is theirs to bound.
//
// Callers: models/checkpoint (torch.save's state dicts: tensors, storages,
// OrderedDict) and suites (CheckList's dill pickles: its test classes,
// numpy arrays and scalars, dill's function records kept as inert data).
package pickle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Tuple, List and Dict are Python's tuple, list and dict (and OrderedDict
// and the other mappings a caller's Funcs make dicts of); a Dict keeps its
// insertion order. Sets and frozensets read as Lists.
type (
	Tuple []any
	List  struct{ Items []any }
	Dict  struct {
		keys, vals []any
		index      map[any]int
		// State is what BUILD set on the dict (an OrderedDict's
		// attributes, such as a state dict's _metadata), unread by the VM.
		State any
	}
)

// Global is a class or function a pickle named and the allow-list let
// through; Call runs its Func.
type Global struct {
	Module, Name string
	fn           Func
}

func (g *Global) String() string { return g.Module + "." + g.Name }

// Call calls g as REDUCE would: the allow-list's Func, or an error for a
// name that may be referred to but not called.
func (g *Global) Call(args Tuple) (any, error) {
	if g.fn == nil {
		return nil, fmt.Errorf("%s is named, not called, in the pickles this reader accepts", g)
	}
	return g.fn(args)
}

// Object is an instance of an allowed class kept as plain data (see
// Plain): the arguments it was made with, and what BUILD and SETITEM(S)
// gave it. Nothing of the class's code runs.
type Object struct {
	Class *Global
	Args  Tuple
	// State is BUILD's argument; Attrs are its attributes when it is a
	// dict, or a (dict, slots) pair.
	State any
	Attrs *Dict
	// Items are a dict subclass's items (SETITEM, SETITEMS).
	Items *Dict
}

// Attr is the attribute name of o, if BUILD set it.
func (o *Object) Attr(name string) (any, bool) {
	if o.Attrs == nil {
		return nil, false
	}
	return o.Attrs.Get(name)
}

// Items is v's items when v is a mapping: a Dict, or an Object of a dict
// subclass (a Munch) that SETITEMS filled; nil otherwise.
func Items(v any) *Dict {
	switch x := v.(type) {
	case *Dict:
		return x
	case *Object:
		return x.Items
	}
	return nil
}

// Latin1Bytes is the bytes a Latin-1 string stands for: protocol 2 pickles
// Python 3 bytes as such text (and Python 2's str reads as it).
func Latin1Bytes(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return nil, fmt.Errorf("%q is not a Latin-1 character", r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// Func builds the value of an allowed global called with args (REDUCE,
// NEWOBJ).
type Func func(args Tuple) (any, error)

// Plain is the Func of module.name allowed as plain data: calling it makes
// an Object recording the call, and nothing of its code runs.
func Plain(module, name string) Func {
	class := &Global{Module: module, Name: name}
	return func(args Tuple) (any, error) {
		return &Object{Class: class, Args: args}, nil
	}
}

// AllowList is what one kind of pickle may name: each global, as
// "module.name", with the Func that builds the value of calling it (nil:
// the name may be referred to but not called).
type AllowList struct {
	// What names the kind of pickle, for errors ("a torch state dict").
	What    string
	Globals map[string]Func
	// Explain, when set, words the refusal of a name the caller knows
	// the meaning of (an unknown CheckList test class), so the error says
	// what is wrong with the file rather than only that it is refused.
	Explain func(module, name string) string
}

// Lookup resolves module.name on the allow-list, as GLOBAL does; callers
// whose Funcs name globals (dill's _get_attr) use it too.
func (a *AllowList) Lookup(module, name string) (*Global, error) {
	q := module + "." + name
	fn, ok := a.Globals[q]
	if !ok {
		if a.Explain != nil {
			if why := a.Explain(module, name); why != "" {
				return nil, fmt.Errorf("global %s is not allowed in %s: %s", q, a.What, why)
			}
		}
		return nil, fmt.Errorf("global %s is not allowed in %s (refused: a pickle naming other globals could run code)", q, a.What)
	}
	return &Global{Module: module, Name: name, fn: fn}, nil
}

// Builder is a value a caller's Func made whose state BUILD sets (a numpy
// array's shape, dtype and data).
type Builder interface {
	SetState(state any) error
}

// NewDict makes an empty Dict.
func NewDict() *Dict { return &Dict{index: map[any]int{}} }

// Set stores v under k. Keys are Python's hashable scalars: strings,
// integers, booleans, floats and None.
func (d *Dict) Set(k, v any) error {
	switch k.(type) {
	case string, int64, bool, float64, nil:
	default:
		return fmt.Errorf("dict key of type %s (this reader takes string, number and None keys)", TypeName(k))
	}
	if d.index == nil {
		d.index = map[any]int{}
	}
	if i, ok := d.index[k]; ok {
		d.vals[i] = v
		return nil
	}
	d.index[k] = len(d.keys)
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	return nil
}

// Get is the value under k.
func (d *Dict) Get(k any) (any, bool) {
	switch k.(type) {
	case string, int64, bool, float64, nil:
	default:
		return nil, false
	}
	i, ok := d.index[k]
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

// Len is the number of items.
func (d *Dict) Len() int { return len(d.keys) }

// Key and Value are the i-th item's, in insertion order.
func (d *Dict) Key(i int) any   { return d.keys[i] }
func (d *Dict) Value(i int) any { return d.vals[i] }

// TypeName names a value's Python type for error messages.
func TypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		return "bool"
	case int64, *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []byte:
		return "bytes"
	case Tuple:
		return "tuple"
	case *List:
		return "list"
	case *Dict:
		return "dict"
	case *Global:
		return x.String()
	case *Object:
		return x.Class.String() + " object"
	case interface{ PyType() string }:
		return x.PyType()
	}
	return fmt.Sprintf("%T", v)
}

// Describe prints a value briefly for an error message: scalars and short
// tuples in full, anything else by its type. Tuples nested deeper than
// eight print as (…): a pickle nests one more a byte, and an error about a
// hostile one must not recurse as deep as the file is long.
func Describe(v any) string { return describe(v, 0) }

func describe(v any, depth int) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case *big.Int:
		return x.String()
	case Tuple:
		if depth == 8 {
			return "(…)"
		}
		parts := make([]string, 0, min(len(x), 9))
		for i, e := range x {
			if i == 8 {
				parts = append(parts, "…")
				break
			}
			parts = append(parts, describe(e, depth+1))
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case *Global:
		return x.String()
	case []byte:
		return fmt.Sprintf("bytes of length %d", len(x))
	}
	return TypeName(v)
}

// Machine runs pickles from a byte slice, one after another (torch's
// legacy formats write several in a row, with raw bytes between them).
type Machine struct {
	allow *AllowList
	// Persistent resolves a persistent id (BINPERSID, PERSID); nil refuses
	// them.
	Persistent func(pid any) (any, error)

	data  []byte
	pos   int
	stack []any
	marks []int
	memo  map[int64]any
	built int // state items BUILD has copied (at most one a byte)
}

// New makes a Machine reading data from its start, naming only the globals
// allow lets through (nil: none).
func New(data []byte, allow *AllowList) *Machine {
	if allow == nil {
		allow = &AllowList{What: "this pickle"}
	}
	return &Machine{data: data, allow: allow}
}

// Load runs the next pickle to its STOP opcode and returns its value; Pos
// is then just after the STOP. Each pickle has its own stack and memo.
func (u *Machine) Load() (any, error) {
	u.stack, u.marks, u.memo = nil, nil, map[int64]any{}
	return u.load()
}

// Pos is the offset of the next byte to read.
func (u *Machine) Pos() int { return u.pos }

// Skip moves past n raw bytes between pickles, or fails if fewer are left.
func (u *Machine) Skip(n int) error {
	if n < 0 || n > len(u.data)-u.pos {
		return fmt.Errorf("%w: %d bytes wanted at byte %d, %d left", ErrTruncated, n, u.pos, len(u.data)-u.pos)
	}
	u.pos += n
	return nil
}

// Unpickle runs the one pickle data holds with the globals allow lets
// through.
func Unpickle(data []byte, allow *AllowList) (any, error) {
	return New(data, allow).Load()
}

// ErrTruncated reports a pickle (or raw data) that ends before it should.
var ErrTruncated = errors.New("truncated pickle")

func (u *Machine) errorf(op byte, format string, args ...any) error {
	return fmt.Errorf("pickle opcode 0x%02x at byte %d: %s", op, u.pos, fmt.Sprintf(format, args...))
}

// take returns the next n bytes.
func (u *Machine) take(n uint64) ([]byte, error) {
	if n > uint64(len(u.data)-u.pos) {
		return nil, fmt.Errorf("%w: %d bytes wanted at byte %d, %d left", ErrTruncated, n, u.pos, len(u.data)-u.pos)
	}
	b := u.data[u.pos : u.pos+int(n)]
	u.pos += int(n)
	return b, nil
}

// line returns the bytes up to the next newline, without it.
func (u *Machine) line() (string, error) {
	rest := u.data[u.pos:]
	for i, c := range rest {
		if c == '\n' {
			u.pos += i + 1
			return string(rest[:i]), nil
		}
	}
	return "", fmt.Errorf("%w: no newline after byte %d", ErrTruncated, u.pos)
}

func (u *Machine) push(v any) { u.stack = append(u.stack, v) }

func (u *Machine) pop() (any, error) {
	if len(u.stack) == 0 || (len(u.marks) > 0 && len(u.stack) <= u.marks[len(u.marks)-1]) {
		return nil, errors.New("stack underflow")
	}
	v := u.stack[len(u.stack)-1]
	u.stack = u.stack[:len(u.stack)-1]
	return v, nil
}

func (u *Machine) top() (any, error) {
	if len(u.stack) == 0 || (len(u.marks) > 0 && len(u.stack) <= u.marks[len(u.marks)-1]) {
		return nil, errors.New("stack underflow")
	}
	return u.stack[len(u.stack)-1], nil
}

// popN pops the top n values, returned in stack order.
func (u *Machine) popN(n int) ([]any, error) {
	floor := 0
	if len(u.marks) > 0 {
		floor = u.marks[len(u.marks)-1]
	}
	if len(u.stack)-n < floor {
		return nil, errors.New("stack underflow")
	}
	v := append([]any(nil), u.stack[len(u.stack)-n:]...)
	u.stack = u.stack[:len(u.stack)-n]
	return v, nil
}

// popMark returns the items above the last mark and removes them and it.
func (u *Machine) popMark() ([]any, error) {
	if len(u.marks) == 0 {
		return nil, errors.New("no mark on the stack")
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	items := append([]any(nil), u.stack[m:]...)
	u.stack = u.stack[:m]
	return items, nil
}

func (u *Machine) load() (any, error) {
	for {
		if u.pos >= len(u.data) {
			return nil, fmt.Errorf("%w: no STOP opcode", ErrTruncated)
		}
		op := u.data[u.pos]
		u.pos++
		done, err := u.step(op)
		if err != nil {
			if errors.Is(err, ErrTruncated) {
				return nil, err
			}
			return nil, u.errorf(op, "%v", err)
		}
		if done {
			if len(u.stack) != 1 || len(u.marks) != 0 {
				return nil, fmt.Errorf("pickle stops with %d values and %d marks on the stack", len(u.stack), len(u.marks))
			}
			return u.stack[0], nil
		}
	}
}

// step runs one opcode; done is set by STOP.
func (u *Machine) step(op byte) (done bool, err error) {
	switch op {
	case 0x80: // PROTO
		b, err := u.take(1)
		if err != nil {
			return false, err
		}
		if b[0] > 5 {
			return false, fmt.Errorf("pickle protocol %d (know 0 to 5)", b[0])
		}
	case 0x95: // FRAME: a hint of the next bytes' length
		if _, err := u.take(8); err != nil {
			return false, err
		}
	case '.': // STOP
		return true, nil
	case '(': // MARK
		u.marks = append(u.marks, len(u.stack))
	case '0': // POP
		if len(u.marks) > 0 && len(u.stack) == u.marks[len(u.marks)-1] {
			_, err = u.popMark()
			return false, err
		}
		_, err = u.pop()
	case '1': // POP_MARK
		_, err = u.popMark()
	case '2': // DUP
		v, err := u.top()
		if err != nil {
			return false, err
		}
		u.push(v)
	case 'N':
		u.push(nil)
	case 0x88:
		u.push(true)
	case 0x89:
		u.push(false)
	case 'K', 'M': // BININT1, BININT2: unsigned
		v, err := u.le(op)
		if err != nil {
			return false, err
		}
		u.push(int64(v))
	case 'J': // BININT: signed
		v, err := u.le(op)
		if err != nil {
			return false, err
		}
		u.push(int64(int32(v)))
	case 0x8a, 0x8b: // LONG1, LONG4
		n, err := u.le(op)
		if err != nil {
			return false, err
		}
		if op == 0x8b && int32(n) < 0 {
			return false, errors.New("negative LONG4 length")
		}
		b, err := u.take(n)
		if err != nil {
			return false, err
		}
		u.push(decodeLong(b))
	case 'I', 'L': // INT, LONG (text)
		s, err := u.line()
		if err != nil {
			return false, err
		}
		switch {
		case op == 'I' && s == "01":
			u.push(true)
		case op == 'I' && s == "00":
			u.push(false)
		default:
			v, ok := new(big.Int).SetString(strings.TrimSuffix(s, "L"), 10)
			if !ok {
				return false, fmt.Errorf("integer %q", s)
			}
			u.push(smallInt(v))
		}
	case 'G': // BINFLOAT
		b, err := u.take(8)
		if err != nil {
			return false, err
		}
		u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
	case 'F': // FLOAT (text)
		s, err := u.line()
		if err != nil {
			return false, err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return false, fmt.Errorf("float %q", s)
		}
		u.push(f)
	case 'X', 0x8c, 0x8d: // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
		b, err := u.sized(op)
		if err != nil {
			return false, err
		}
		if !utf8.Valid(b) {
			return false, errors.New("string is not UTF-8")
		}
		u.push(string(b))
	case 'V': // UNICODE (raw-unicode-escape text)
		s, err := u.line()
		if err != nil {
			return false, err
		}
		v, err := rawUnicodeEscape(s)
		if err != nil {
			return false, err
		}
		u.push(v)
	case 'T', 'U': // BINSTRING, SHORT_BINSTRING: Python 2 str, read as Latin-1
		b, err := u.sized(op)
		if err != nil {
			return false, err
		}
		u.push(latin1(b))
	case 'S': // STRING (quoted text)
		s, err := u.line()
		if err != nil {
			return false, err
		}
		v, err := pyUnquote(s)
		if err != nil {
			return false, err
		}
		u.push(v)
	case 'B', 'C', 0x8e, 0x96: // BINBYTES, SHORT_BINBYTES, BINBYTES8, BYTEARRAY8
		b, err := u.sized(op)
		if err != nil {
			return false, err
		}
		u.push(append([]byte(nil), b...))
	case ')':
		u.push(Tuple{})
	case 0x85, 0x86, 0x87: // TUPLE1, TUPLE2, TUPLE3
		items, err := u.popN(int(op - 0x84))
		if err != nil {
			return false, err
		}
		u.push(Tuple(items))
	case 't': // TUPLE
		items, err := u.popMark()
		if err != nil {
			return false, err
		}
		u.push(Tuple(items))
	case ']':
		u.push(&List{})
	case 'l': // LIST
		items, err := u.popMark()
		if err != nil {
			return false, err
		}
		u.push(&List{Items: items})
	case 'a': // APPEND
		v, err := u.pop()
		if err != nil {
			return false, err
		}
		return false, u.extend([]any{v})
	case 'e': // APPENDS
		items, err := u.popMark()
		if err != nil {
			return false, err
		}
		return false, u.extend(items)
	case '}':
		u.push(NewDict())
	case 'd': // DICT
		items, err := u.popMark()
		if err != nil {
			return false, err
		}
		d := NewDict()
		if err := setItems(d, items); err != nil {
			return false, err
		}
		u.push(d)
	case 's': // SETITEM
		kv, err := u.popN(2)
		if err != nil {
			return false, err
		}
		return false, u.setItems(kv)
	case 'u': // SETITEMS
		items, err := u.popMark()
		if err != nil {
			return false, err
		}
		return false, u.setItems(items)
	case 0x8f: // EMPTY_SET: a list stands in for it
		u.push(&List{})
	case 0x90: // ADDITEMS
		items, err := u.popMark()
		if err != nil {
			return false, err
		}
		return false, u.extend(items)
	case 0x91: // FROZENSET
		items, err := u.popMark()
		if err != nil {
			return false, err
		}
		u.push(&List{Items: items})
	case 'p', 'q', 'r': // PUT, BINPUT, LONG_BINPUT
		k, err := u.memoKey(op)
		if err != nil {
			return false, err
		}
		return false, u.put(k)
	case 0x94: // MEMOIZE
		return false, u.put(int64(len(u.memo)))
	case 'g', 'h', 'j': // GET, BINGET, LONG_BINGET
		k, err := u.memoKey(op)
		if err != nil {
			return false, err
		}
		return false, u.get(k)
	case 'c': // GLOBAL
		mod, err := u.line()
		if err != nil {
			return false, err
		}
		name, err := u.line()
		if err != nil {
			return false, err
		}
		g, err := u.allow.Lookup(mod, name)
		if err != nil {
			return false, err
		}
		u.push(g)
	case 0x93: // STACK_GLOBAL
		mn, err := u.popN(2)
		if err != nil {
			return false, err
		}
		ms, ok1 := mn[0].(string)
		ns, ok2 := mn[1].(string)
		if !ok1 || !ok2 {
			return false, fmt.Errorf("STACK_GLOBAL of %s and %s", TypeName(mn[0]), TypeName(mn[1]))
		}
		g, err := u.allow.Lookup(ms, ns)
		if err != nil {
			return false, err
		}
		u.push(g)
	case 'R', 0x81, 0x92: // REDUCE, NEWOBJ (fn, args); NEWOBJ_EX (cls, args, kwargs)
		n := 2
		if op == 0x92 {
			n = 3
		}
		call, err := u.popN(n)
		if err != nil {
			return false, err
		}
		args, ok := call[1].(Tuple)
		if !ok {
			return false, fmt.Errorf("arguments of type %s, want a tuple", TypeName(call[1]))
		}
		if n == 3 {
			if kw, ok := call[2].(*Dict); !ok || kw.Len() > 0 {
				return false, errors.New("NEWOBJ_EX with keyword arguments")
			}
		}
		v, err := u.callGlobal(call[0], args)
		if err != nil {
			return false, err
		}
		u.push(v)
	case 'b': // BUILD: set an object's state
		state, err := u.pop()
		if err != nil {
			return false, err
		}
		obj, err := u.top()
		if err != nil {
			return false, err
		}
		n, err := build(obj, state)
		if err != nil {
			return false, err
		}
		// Each state item a pickle really holds costs it bytes; one dict
		// got from the memo again and again would make BUILD's copies
		// grow with the square of the pickle's size.
		if u.built += n; u.built > len(u.data) {
			return false, fmt.Errorf("BUILD has copied %d state items out of a %d-byte pickle: one state dict used again and again", u.built, len(u.data))
		}
		return false, nil
	case 'Q': // BINPERSID
		pid, err := u.pop()
		if err != nil {
			return false, err
		}
		return false, u.persistentLoad(pid)
	case 'P': // PERSID
		s, err := u.line()
		if err != nil {
			return false, err
		}
		return false, u.persistentLoad(s)
	case 'i', 'o', 0x82, 0x83, 0x84, 0x97, 0x98:
		// INST and OBJ build arbitrary classes without the allow-list's
		// say; the extension registry and out-of-band buffers are never
		// part of what torch.save or CheckList write.
		return false, fmt.Errorf("opcode not allowed in %s", u.allow.What)
	default:
		return false, errors.New("unknown opcode")
	}
	return false, err
}

// width is the bytes of op's little-endian argument (an integer, a
// length, a memo key).
func width(op byte) int {
	switch op {
	case 'K', 0x8a, 'q', 'h', 0x8c, 'U', 'C':
		return 1
	case 'M':
		return 2
	case 'J', 0x8b, 'r', 'j', 'X', 'T', 'B':
		return 4
	}
	return 8 // 0x8d, 0x8e, 0x96
}

// le reads op's little-endian unsigned argument.
func (u *Machine) le(op byte) (uint64, error) {
	n := width(op)
	b, err := u.take(uint64(n))
	if err != nil {
		return 0, err
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, nil
}

// sized reads a length-prefixed argument of op.
func (u *Machine) sized(op byte) ([]byte, error) {
	n, err := u.le(op)
	if err != nil {
		return nil, err
	}
	if op == 'T' && int32(n) < 0 {
		return nil, errors.New("negative BINSTRING length")
	}
	return u.take(n)
}

// memoKey reads the memo key of PUT or GET (text) or of their binary
// forms.
func (u *Machine) memoKey(op byte) (int64, error) {
	if op == 'p' || op == 'g' {
		s, err := u.line()
		if err != nil {
			return 0, err
		}
		k, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("memo key %q", s)
		}
		return k, nil
	}
	k, err := u.le(op)
	return int64(k), err
}

func (u *Machine) put(i int64) error {
	v, err := u.top()
	if err != nil {
		return err
	}
	u.memo[i] = v
	return nil
}

func (u *Machine) get(i int64) error {
	v, ok := u.memo[i]
	if !ok {
		return fmt.Errorf("memo key %d not set", i)
	}
	u.push(v)
	return nil
}

func (u *Machine) extend(items []any) error {
	obj, err := u.top()
	if err != nil {
		return err
	}
	l, ok := obj.(*List)
	if !ok {
		return fmt.Errorf("append to %s", TypeName(obj))
	}
	l.Items = append(l.Items, items...)
	return nil
}

func (u *Machine) setItems(items []any) error {
	obj, err := u.top()
	if err != nil {
		return err
	}
	switch x := obj.(type) {
	case *Dict:
		return setItems(x, items)
	case *Object:
		if x.Items == nil {
			x.Items = NewDict()
		}
		return setItems(x.Items, items)
	}
	return fmt.Errorf("set item of %s", TypeName(obj))
}

func setItems(d *Dict, items []any) error {
	if len(items)%2 != 0 {
		return errors.New("odd number of items for a dict")
	}
	for i := 0; i < len(items); i += 2 {
		if err := d.Set(items[i], items[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func (u *Machine) callGlobal(fn any, args Tuple) (any, error) {
	g, ok := fn.(*Global)
	if !ok {
		return nil, fmt.Errorf("call of %s", TypeName(fn))
	}
	return g.Call(args)
}

// build is BUILD: set obj's state. Plain objects and dicts keep it as
// data; a caller's value takes it through its SetState. copied counts the
// state items set as an object's attributes.
func build(obj, state any) (copied int, err error) {
	switch x := obj.(type) {
	case *Object:
		x.State = state
		attrs := []any{state}
		if t, ok := state.(Tuple); ok && len(t) == 2 {
			attrs = t // (dict state, slot state)
		}
		for _, a := range attrs {
			d, ok := a.(*Dict)
			if !ok {
				continue
			}
			if x.Attrs == nil {
				x.Attrs = NewDict()
			}
			for i := range d.keys {
				if err := x.Attrs.Set(d.keys[i], d.vals[i]); err != nil {
					return copied, err
				}
			}
			copied += len(d.keys)
		}
		return copied, nil
	case *Dict:
		x.State = state
		return 0, nil
	case Builder:
		return 0, x.SetState(state)
	}
	return 0, fmt.Errorf("BUILD of %s with %s", TypeName(obj), TypeName(state))
}

func (u *Machine) persistentLoad(pid any) error {
	if u.Persistent == nil {
		return errors.New("persistent id where none is allowed")
	}
	v, err := u.Persistent(pid)
	if err != nil {
		return err
	}
	u.push(v)
	return nil
}

// decodeLong decodes a little-endian two's-complement integer.
func decodeLong(b []byte) any {
	if len(b) == 0 {
		return int64(0)
	}
	be := make([]byte, len(b))
	for i, c := range b {
		be[len(b)-1-i] = c
	}
	v := new(big.Int).SetBytes(be)
	if b[len(b)-1]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return smallInt(v)
}

// smallInt is v as an int64 when it fits.
func smallInt(v *big.Int) any {
	if v.IsInt64() {
		return v.Int64()
	}
	return v
}

func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// rawUnicodeEscape decodes Python's raw-unicode-escape: \uXXXX and
// \UXXXXXXXX escapes, every other byte a Latin-1 character.
func rawUnicodeEscape(s string) (string, error) {
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
			n := 4
			if s[i+1] == 'U' {
				n = 8
			}
			if i+2+n > len(s) {
				return "", fmt.Errorf("short \\%c escape", s[i+1])
			}
			r, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
			if err != nil || r > utf8.MaxRune {
				return "", fmt.Errorf("bad \\%c escape %q", s[i+1], s[i+2:i+2+n])
			}
			out.WriteRune(rune(r))
			i += 1 + n
			continue
		}
		out.WriteRune(rune(s[i]))
	}
	return out.String(), nil
}

// pyUnquote decodes protocol 0's quoted string repr ('…' or "…" with
// backslash escapes), read as Latin-1.
func pyUnquote(s string) (string, error) {
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return "", fmt.Errorf("string %q is not quoted", s)
	}
	s = s[1 : len(s)-1]
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(s) {
			return "", errors.New("string ends in a backslash")
		}
		switch s[i] {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case '\\', '\'', '"':
			out = append(out, s[i])
		case 'x':
			if i+3 > len(s) {
				return "", errors.New("short \\x escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("bad \\x escape %q", s[i+1:i+3])
			}
			out = append(out, byte(v))
			i += 2
		default:
			return "", fmt.Errorf("unknown escape \\%c", s[i])
		}
	}
	return latin1(out), nil
}
