// Package memlimit is beluga's one memory check: before anything large is
// allocated — a model's parameters, a pass's activations, the tensors a
// checkpoint's state dict describes — its size is compared with the memory
// the process may use, and a size that would not fit is refused with the
// estimate and the limit, instead of dying in an out-of-memory crash that
// no error handling can catch.
package memlimit

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Limit is the most memory beluga lets one allocation plan take, and where
// the figure comes from: GOMEMLIMIT when set; else the lowest of the
// machine's memory (/proc/meminfo), the cgroup's memory limit and the
// address-space limit (ulimit -v) less the address space the process has
// already mapped (the Go runtime reserves a gigabyte or so beside its
// heap); where none is known, 1 TiB. A variable, so that tests and fuzzers
// can lower it.
var Limit = sync.OnceValues(func() (uint64, string) {
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		return uint64(l), "GOMEMLIMIT"
	}
	limit, source := uint64(1)<<40, "no memory size known"
	if total := memTotal(); total > 0 {
		limit, source = total, "the machine's memory"
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v < limit {
			limit, source = v, "the cgroup's memory limit"
		}
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur != math.MaxUint64 {
		free := uint64(0)
		if mapped := statusBytes("VmSize:"); mapped < rl.Cur {
			free = rl.Cur - mapped
		}
		if free < limit {
			limit, source = free, "the address-space limit (ulimit -v) less what is mapped"
		}
	}
	return limit, source
})

// statusBytes is a size /proc/self/status gives under key, in bytes, or 0.
func statusBytes(key string) uint64 {
	return kiBField("/proc/self/status", key)
}

// memTotal is /proc/meminfo's MemTotal in bytes, or 0.
func memTotal() uint64 { return kiBField("/proc/meminfo", "MemTotal:") }

// kiBField is the "key value kB" line of a /proc file, in bytes, or 0.
func kiBField(path, key string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == key {
			if kb, err := strconv.ParseUint(fields[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// Check refuses what needs more bytes than the Limit, naming what and the
// figures.
func Check(what string, need float64) error {
	limit, source := Limit()
	if need > float64(limit) {
		return fmt.Errorf("%s would take about %s, more than the %s available (%s)", what, Bytes(need), Bytes(float64(limit)), source)
	}
	return nil
}

// Bytes prints a size in binary units.
func Bytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == len(units)-1 && n >= 1024 {
		return fmt.Sprintf("%.3g EiB", n)
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// Reader reads r, failing with Check's error as soon as what it has
// yielded, times perByte, would pass the limit: the size of a compressed
// stream is known only as it is read, and a few megabytes of gzip can
// inflate to more than the machine holds.
func Reader(r io.Reader, what string, perByte float64) io.Reader {
	return &limitedReader{r: r, what: what, perByte: perByte}
}

type limitedReader struct {
	r       io.Reader
	what    string
	perByte float64
	n       int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if cerr := Check(fmt.Sprintf("%s (%s decompressed so far)", l.what, Bytes(float64(l.n))), float64(l.n)*l.perByte); cerr != nil {
		return n, cerr
	}
	return n, err
}
