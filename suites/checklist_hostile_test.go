package suites

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/hostiletest"
	"github.com/beluga-nlp/beluga/internal/pickle"
)

// sbu is pickle's SHORT_BINUNICODE s.
func sbu(s string) string { return "\x8c" + string(rune(len(s))) + s }

// hostileCheckList are pickles that would run a shell command (or
// evaluate code) if their globals were resolved as Python resolves them:
// through GLOBAL and STACK_GLOBAL, and through the dill helpers a CheckList
// suite legitimately uses to name things.
func hostileCheckList(marker string) []struct{ name, pickle, want string } {
	cmd := sbu("touch " + marker)
	return []struct{ name, pickle, want string }{
		{"GLOBAL os.system, REDUCE", "\x80\x02cos\nsystem\n" + cmd + "\x85R.", "global os.system is not allowed in a CheckList suite"},
		{"STACK_GLOBAL os.system, REDUCE", "\x80\x04" + sbu("os") + sbu("system") + "\x93" + cmd + "\x85R.", "global os.system is not allowed in a CheckList suite"},
		{"dill _import_module(os)", "\x80\x04" + sbu("dill._dill") + sbu("_get_attr") + "\x93" + sbu("dill._dill") + sbu("_import_module") + "\x93" + sbu("os") + "\x85R" + sbu("system") + "\x86R" + cmd + "\x85R.",
			`_import_module("os"): not a module CheckList's suites use`},
		{"dill _get_attr(builtins, eval)", "\x80\x04" + sbu("dill._dill") + sbu("_get_attr") + "\x93" + sbu("dill._dill") + sbu("_import_module") + "\x93" + sbu("builtins") + "\x85R" + sbu("eval") + "\x86R" + cmd + "\x85R.",
			"global builtins.eval is not allowed"},
		{"dill _load_type(exec)", "\x80\x04" + sbu("dill._dill") + sbu("_load_type") + "\x93" + sbu("exec") + "\x85R" + cmd + "\x85R.", "global builtins.exec is not allowed"},
		{"a named-only type called", "\x80\x04" + sbu("dill._dill") + sbu("_load_type") + "\x93" + sbu("list") + "\x85R" + cmd + "\x85R.", "builtins.list is named, not called"},
	}
}

// TestHostileCheckListRefused: every hostile pickle is refused by the
// shared VM with the global it names, and runs nothing.
func TestHostileCheckListRefused(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	for i, tc := range hostileCheckList(marker) {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "hostile"+string(rune('a'+i))+".pkl")
			if err := os.WriteFile(p, []byte(tc.pickle), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ImportCheckList(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %v, want it to name the file and say %q", err, tc.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the pickle's command ran")
			}
		})
	}
}

// TestHostileCheckListArchive: a 3 MB .tar.gz whose .pkl member is 3 GiB
// of zeros (made at test time, hostiletest.GzipZeros) is refused from the
// member's declared size, before it is read, under ulimit -v.
func TestHostileCheckListArchive(t *testing.T) {
	hostiletest.Run(t, func(t *testing.T) {
		var hdr bytes.Buffer
		tw := tar.NewWriter(&hdr)
		if err := tw.WriteHeader(&tar.Header{Name: "suite.pkl", Mode: 0o644, Size: 3 << 30, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		// The header alone; the member's zeros and the end-of-archive
		// blocks are the zeros that follow it.
		p := filepath.Join(t.TempDir(), "suite.tar.gz")
		if err := os.WriteFile(p, hostiletest.GzipZeros(hdr.Bytes()[:512], 3<<10+1), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ImportCheckList(p)
		want := "suite.pkl: reading a 3221225472-byte pickle would take about 30.0 GiB, more than the"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Fatalf("error %v, want it to name the file and say %q", err, want)
		}
		t.Logf("refused: %v", err)
	})
}

// TestHostileNumpyStringWidth: a numpy "U" dtype whose width times four
// overflows int is refused, not decoded past its data (a panic before).
func TestHostileNumpyStringWidth(t *testing.T) {
	p := "\x80\x04" + sbu("numpy") + sbu("scalar") + "\x93" +
		sbu("numpy") + sbu("dtype") + "\x93" + sbu("U4611686018427387905") + "\x85R" +
		"C\x08\x01\x01\x01\x01\x01\x01\x01\x01" + "\x86R."
	_, err := unpickle([]byte(p))
	if err == nil || !strings.Contains(err.Error(), "numpy dtype") {
		t.Fatalf("error %v, want the dtype refused", err)
	}
}

// metaSuite is a CheckList TestSuite pickle with one MFT test of one case
// whose meta is the pickle ops in meta (leaving one value on the stack).
func metaSuite(meta string) []byte {
	return []byte("\x80\x02cchecklist.test_suite\nTestSuite\n)\x81}(" + sbu("tests") +
		"ccollections\nOrderedDict\n)R" + sbu("t1") + "cchecklist.test_types\nMFT\n)\x81}(" +
		sbu("data") + "]" + sbu("a") + "a" + sbu("labels") + "K\x00" + sbu("meta") + "]" + meta + "a" +
		"ubsub.")
}

// TestHostileCheckListMeta: a case's meta that the memo makes hold itself,
// or double at each of 40 levels (2^40 values from 370 bytes), is refused
// before it is converted past what the pickle's size allows; a plain one
// still reads.
func TestHostileCheckListMeta(t *testing.T) {
	bomb := "]" + sbu("x") + "a"
	for range 40 {
		bomb += "q\x000(h\x00h\x00l" // memoize, pop, [it, it]
	}
	for _, tc := range []struct{ name, meta, want string }{
		{"plain", "}(" + sbu("k") + sbu("v") + "u", ""},
		{"holds itself", "]q\x00h\x00a", "case 0 meta: meta "},
		{"doubling", bomb, "meta would take more than 10 bytes a byte of the pickle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := metaSuite(tc.meta)
			obj, err := unpickle(data)
			if err != nil {
				t.Fatal(err)
			}
			s, err := suiteFromPickle(obj, len(data))
			if tc.want == "" {
				if err != nil || string(s.Functionalities[0].Cases[0].Meta) != `{"k":"v"}` {
					t.Fatalf("plain meta: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestMetaDepth: a value that holds itself is refused at maxMetaDepth
// even when the budget would allow more.
func TestMetaDepth(t *testing.T) {
	l := &pickle.List{}
	l.Items = []any{l}
	_, err := (&metaJSON{budget: 1 << 30}).value(l, 0)
	if err == nil || !strings.Contains(err.Error(), "meta nested more than 10000 deep") {
		t.Fatalf("error %v, want the depth refused", err)
	}
}
