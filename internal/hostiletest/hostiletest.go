// Package hostiletest helps test that hostile files are refused: it runs a
// test under a hard memory limit (Run), and makes the files that expand
// (DeflatedZeros, GzipZeros) at test time instead of storing them.
//
// Hostile files must be refused by bounds checked before allocation, never
// by running out of memory — and an out-of-memory crash in Go ("fatal error:
// out of memory") cannot be recovered from, nor can a test observe it in
// its own process. debug.SetMemoryLimit is only a target for the garbage
// collector, not a limit. So Run re-executes the test binary, running only
// the calling test, in a child shell under `ulimit -v` (RLIMIT_AS, the
// address-space limit): an allocation past it crashes the child, and the
// parent fails with the child's output. memlimit.Limit sees the limit too,
// so the checks the readers make are the ones a user under such a limit
// gets.
package hostiletest

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// envChild names the test a child process runs its body for.
const envChild = "BELUGA_MEMLIMIT_CHILD"

// AddressSpace is the limit Run sets: 3 GiB of address space, of which the
// Go runtime's reservations take about 1.3; a hostile file that makes a
// reader allocate what it describes (gigabytes) crashes under it.
const AddressSpace = 3 << 30

// Run runs body in a child process of the test binary under ulimit -v
// AddressSpace, and fails t if the child fails or crashes. Call it from a
// top-level test (not a subtest); body may use subtests.
func Run(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	if os.Getenv(envChild) == t.Name() {
		body(t)
		return
	}
	if testing.Short() {
		t.Skip("-short: the memory-limited child is not run")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to set ulimit -v with")
	}
	kib := fmt.Sprint(AddressSpace >> 10)
	run := "^" + regexp.QuoteMeta(t.Name()) + "$"
	cmd := exec.Command(sh, "-c", `ulimit -v "$1" && exec "$2" -test.run="$3" -test.v -test.count=1`, "sh", kib, os.Args[0], run)
	cmd.Env = append(os.Environ(), envChild+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("under ulimit -v %s KiB the test failed or crashed (%v):\n%s", kib, err, summary(string(out)))
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the child ran no test %s:\n%s", t.Name(), tail(string(out), 60))
	}
	t.Logf("under ulimit -v %s KiB:\n%s", kib, tail(string(out), 40))
}

// summary is what says why a child failed: its test lines, its
// failures, a crash's first lines (not its goroutine dump).
func summary(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		tl := strings.TrimSpace(l)
		for _, p := range []string{"=== RUN", "--- ", "fatal error", "runtime: out of memory", "panic:", "hostile", "error"} {
			if strings.HasPrefix(tl, p) || (p == "hostile" && strings.Contains(tl, "_test.go:")) {
				keep = append(keep, l)
				break
			}
		}
	}
	return tail(strings.Join(keep, "\n"), 60)
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// DeflatedZeros is a raw deflate stream of prefix then mib MiB of zeros,
// made without compressing them: prefix and the first MiB sync-flushed,
// then the next MiB's blocks — which only copy from the zeros before them —
// repeated, then an empty final block. About 1 KiB per MiB, the 1,032:1
// deflate reaches: 4 GiB in 4.1 MB, in milliseconds.
func DeflatedZeros(prefix []byte, mib int) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		panic(err)
	}
	zeros := make([]byte, 1<<20)
	w.Write(prefix)
	w.Write(zeros)
	w.Flush()
	head := buf.Len()
	w.Write(zeros)
	w.Flush()
	out := append([]byte(nil), buf.Bytes()...)
	rep := out[head:]
	for i := 2; i < mib; i++ {
		out = append(out, rep...)
	}
	return append(out, 0x03, 0x00) // final fixed-Huffman block, empty
}

// GzipZeros is a gzip file of prefix then mib MiB of zeros
// (DeflatedZeros). Its trailer's checksum is not the data's: a reader that
// gets that far has already read everything.
func GzipZeros(prefix []byte, mib int) []byte {
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	out = append(out, DeflatedZeros(prefix, mib)...)
	out = binary.LittleEndian.AppendUint32(out, 0)
	return binary.LittleEndian.AppendUint32(out, uint32(len(prefix)+mib<<20))
}
