package pickle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"
)

// testAllow lets through one plain class, one dict maker and one name that
// may be referred to but not called.
var testAllow = &AllowList{What: "a test pickle", Globals: map[string]Func{
	"pkg.Thing":               Plain("pkg", "Thing"),
	"collections.OrderedDict": func(Tuple) (any, error) { return NewDict(), nil },
	"builtins.len":            nil,
}}

// str is SHORT_BINUNICODE s.
func str(s string) string { return "\x8c" + string(rune(len(s))) + s }

// The hostile pickles: os.system named by GLOBAL and by STACK_GLOBAL and
// called by REDUCE, INST building a class by name, and an allowed name
// that is not callable being called.
var hostile = []struct {
	name, pickle, want string
}{
	{"GLOBAL os.system, REDUCE", "\x80\x02cos\nsystem\n" + str("touch /tmp/pwned") + "\x85R.", "global os.system is not allowed in a test pickle"},
	{"STACK_GLOBAL os.system, REDUCE", "\x80\x04" + str("os") + str("system") + "\x93" + str("touch /tmp/pwned") + "\x85R.", "global os.system is not allowed in a test pickle"},
	{"STACK_GLOBAL builtins.eval", "\x80\x04" + str("builtins") + str("eval") + "\x93" + str("1") + "\x85R.", "global builtins.eval is not allowed"},
	{"INST", "\x80\x02(" + str("x") + "ios\nsystem\n.", "opcode not allowed in a test pickle"},
	{"a named-only global called", "\x80\x02cbuiltins\nlen\n" + str("x") + "\x85R.", "builtins.len is named, not called"},
	{"NEWOBJ of os.system", "\x80\x02cos\nsystem\n)\x81.", "global os.system is not allowed"},
}

func TestHostileRefused(t *testing.T) {
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Unpickle([]byte(tc.pickle), testAllow)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want an error containing %q", v, err, tc.want)
			}
		})
	}
}

func TestPlainObjects(t *testing.T) {
	// Thing() with state {"a": 1}, then an OrderedDict {"k": Thing, "j": Thing}
	// referring to the same object through the memo.
	p := "\x80\x04" + str("collections") + str("OrderedDict") + "\x93)R" +
		str("pkg") + str("Thing") + "\x93)\x81}" + str("a") + "K\x01sb\x940" +
		"(" + str("k") + "h\x00" + str("j") + "h\x00u."
	v, err := Unpickle([]byte(p), testAllow)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := v.(*Dict)
	if !ok || d.Len() != 2 || d.Key(0) != "k" || d.Key(1) != "j" {
		t.Fatalf("got %#v", v)
	}
	o, ok := d.Value(0).(*Object)
	if !ok || o.Class.String() != "pkg.Thing" || d.Value(1) != d.Value(0) {
		t.Fatalf("value %#v", d.Value(0))
	}
	if a, _ := o.Attr("a"); a != int64(1) {
		t.Errorf("attribute a = %v", a)
	}
}

func TestLengthsCheckedBeforeAllocation(t *testing.T) {
	for _, p := range []string{
		"\x80\x04X\xff\xff\xff\xff.",                                                // BINUNICODE of 4 GiB
		"\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\x7f.",                             // BINBYTES8 of 2^63
		"\x80\x04\x8b\xff\xff\xff\x7f.",                                             // LONG4 of 2 GiB
		"\x80\x04\x96" + string(binary.LittleEndian.AppendUint64(nil, 1<<40)) + ".", // BYTEARRAY8
	} {
		_, err := Unpickle([]byte(p), testAllow)
		if !errors.Is(err, ErrTruncated) {
			t.Errorf("%q: %v, want a truncated pickle", p, err)
		}
	}
}

func TestSequentialPickles(t *testing.T) {
	m := New([]byte("K\x01.\x00\x00K\x02."), nil)
	a, err := m.Load()
	if err != nil || a != int64(1) {
		t.Fatalf("first: %v %v", a, err)
	}
	if err := m.Skip(2); err != nil {
		t.Fatal(err)
	}
	b, err := m.Load()
	if err != nil || b != int64(2) || m.Pos() != 8 {
		t.Fatalf("second: %v %v at %d", b, err, m.Pos())
	}
	if err := m.Skip(1); !errors.Is(err, ErrTruncated) {
		t.Errorf("skip past the end: %v", err)
	}
}

// FuzzMachine runs the VM on arbitrary bytes with the test allow-list: an
// error or a value, never a panic or a hang. The callers' allow-lists have
// their own targets (models/checkpoint FuzzUnpickle, suites
// FuzzImportPickle), seeded with real files.
func FuzzMachine(f *testing.F) {
	for _, tc := range hostile {
		f.Add([]byte(tc.pickle))
	}
	f.Add([]byte("\x80\x02}q\x00(X\x01\x00\x00\x00aq\x01K\x01u."))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := New(data, testAllow)
		for i := 0; i < 4; i++ {
			if _, err := m.Load(); err != nil {
				return
			}
		}
	})
}

// TestDescribeDeepTuple: a tuple nested once a byte, a million deep, is
// described to depth eight, not recursed through (a stack overflow under
// a 64 MiB stack before).
func TestDescribeDeepTuple(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	v, err := Unpickle([]byte(")"+strings.Repeat("\x85", 1_000_000)+"."), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("(", 8) + "(…)" + strings.Repeat(")", 8)
	if got := Describe(v); got != want {
		t.Fatalf("Describe = %q, want %q", got, want)
	}
	if got := Describe(Tuple{int64(1), "a", Tuple{}}); got != `(1, "a", ())` {
		t.Fatalf("Describe = %q", got)
	}
}

// A state dict got from the memo and BUILT onto an object again and again
// (three bytes a time) would make the copies grow with the square of the
// pickle's size, a hang rather than a crash: BUILD may copy at most one
// state item a byte of the pickle.
func TestBuildOfOneStateDictAgainAndAgainIsRefused(t *testing.T) {
	var p strings.Builder
	p.WriteString("\x80\x04" + str("pkg") + str("Thing") + "\x93)\x81}\x94(")
	for i := range 1000 {
		p.WriteString(str(fmt.Sprintf("k%d", i)) + "K\x01")
	}
	p.WriteString("ub")
	honest := p.String() + "."
	for range 3000 {
		p.WriteString("h\x00b")
	}
	p.WriteString(".")
	if _, err := Unpickle([]byte(honest), testAllow); err != nil {
		t.Fatalf("one BUILD of a 1000-item state: %v", err)
	}
	_, err := Unpickle([]byte(p.String()), testAllow)
	if err == nil || !strings.Contains(err.Error(), "BUILD has copied") {
		t.Fatalf("3000 BUILDs of one 1000-item state dict: %v, want refused", err)
	}
}
