package vec32

import (
	"fmt"
	"os"
	"strings"
)

// The kernel paths: the instruction sets the kernels run on, chosen at run
// time from what the CPU has, fastest first, unless BELUGA_KERNELS forces
// one. The avx512 and avx2 paths give the same bits (each C element is
// accumulated over k in the same order with FMA; the element-wise kernels
// run the same instructions on wider registers); the go path, without FMA,
// differs from them in the last bits.
const (
	PathAVX512 = "avx512"
	PathAVX2   = "avx2"
	PathGo     = "go"
)

// Envkernels is the environment variable that forces a kernel path.
const EnvKernels = "BELUGA_KERNELS"

// Kernels is one path's micro-kernels, and the operations run on them (its
// methods). A value of it is the kernel path of a computation: each model's
// backend holds the one it was built with, so that two models of one
// process may run on different paths; no process-wide path exists. The
// vector element-wise kernels return how many leading elements they did;
// the portable loops do the rest.
type Kernels struct {
	name string
	// gemm adds A·B for a mr×k block of A and a k×nr block of B to the
	// mr×nr block of C at c (rows ldc floats apart), reading A and B where
	// they lie or packed: A's element (i, l) at a + i·rs + l·ks bytes, B's
	// row l at b + l·bs bytes. With fresh set it sets C to the sum plus +0
	// instead of adding (the bits of zeroing C first). nil on the go path,
	// whose products are gonum's.
	mr, nr int
	gemm   func(k int, a *float32, rs, ks int, b *float32, bs int, c *float32, ldc int, fresh bool)
	// packATrans packs panels whole micro-panels of mr rows of a
	// transposed A, kb rows of its storage from a (lda floats apart):
	// ap[p·mr·kb + l·mr + i] = a[l·lda + p·mr + i].
	packATrans func(ap, a *float32, lda, kb, panels int)
	// aInL1: the kernel runs over a block's panels of B for each of its
	// micro-panels of A (kept in L1), not the other way round.
	aInL1 bool
	// packBRows packs a whole panel of an untransposed B: kb rows of nr
	// floats, ldb apart, into panel.
	packBRows func(panel, b *float32, ldb, kb int)
	// fmaPeak runs n iterations of FMAPeakChains independent FMAs on
	// registers of lanes floats: the FMA units' throughput at the path's
	// width, generated with the micro-kernels. nil on the go path.
	lanes    int
	fmaPeak  func(n int)
	geluF    func(y, x []float32) int
	geluB    func(dx, dy, x []float32) int
	expShift func(x []float32, shift float32, sums *[8]float32) int
	adamW    func(value, grad, m, v []float32, c *AdamWCoef) int
	dropout  func(k []float32, state, least uint64, scale float32) int
	addRows  func(d, src []float32, rows, stride int) int
	scale    func(x []float32, s float32) int
	mulTo    func(dst, a, b []float32) int
	mulAdd   func(dst, a, b, c []float32) int
	// max returns the largest of x's leading elements it did, whether
	// any was NaN, and how many it did (0: none).
	max         func(x []float32) (m float32, nan bool, done int)
	sumSquares  func(x []float32, s *[8]float64) int
	normRow     func(y, xhat, x, gamma, beta []float32, mean, inv float32) int
	normBackRow func(dx, dy, xhat, gamma []float32, mg, mgx, inv float32) int
	// addRowProducts does AddRowProducts' leading columns and says how many.
	addRowProducts func(dg, db, dy, x []float32, rows, stride int) int
}

var goKernels = &Kernels{name: PathGo,
	geluF:          func(y, x []float32) int { return 0 },
	geluB:          func(dx, dy, x []float32) int { return 0 },
	expShift:       func(x []float32, shift float32, sums *[8]float32) int { return 0 },
	adamW:          func(value, grad, m, v []float32, c *AdamWCoef) int { return 0 },
	dropout:        noDropoutKernel,
	addRows:        noAddRowsKernel,
	scale:          func(x []float32, s float32) int { return 0 },
	mulTo:          func(dst, a, b []float32) int { return 0 },
	mulAdd:         func(dst, a, b, c []float32) int { return 0 },
	max:            func(x []float32) (float32, bool, int) { return 0, false, 0 },
	sumSquares:     func(x []float32, s *[8]float64) int { return 0 },
	normRow:        func(y, xhat, x, gamma, beta []float32, mean, inv float32) int { return 0 },
	normBackRow:    func(dx, dy, xhat, gamma []float32, mg, mgx, inv float32) int { return 0 },
	addRowProducts: func(dg, db, dy, x []float32, rows, stride int) int { return 0 }}

func noDropoutKernel(k []float32, state, least uint64, scale float32) int { return 0 }

func noAddRowsKernel(d, src []float32, rows, stride int) int { return 0 }

// FromEnv returns the kernels BELUGA_KERNELS names, or the fastest this
// CPU has when it is unset. When it names a path this CPU cannot run, or
// no path at all, it returns the fastest and an error saying so: programs
// that train refuse to start then, so that a forced path is never silently
// replaced. The variable is read at each call: a model's kernels are
// chosen when it is built.
func FromEnv() (*Kernels, error) { return choose(os.Getenv(EnvKernels), available()) }

// choose returns the kernels named by env ("" for the fastest available),
// or the fastest and an error when env names an unknown path or one the
// CPU lacks.
func choose(env string, avail []*Kernels) (*Kernels, error) {
	if env == "" {
		return avail[0], nil
	}
	for _, k := range avail {
		if k.name == env {
			return k, nil
		}
	}
	names := make([]string, len(avail))
	for i, k := range avail {
		names[i] = k.name
	}
	if env == PathAVX512 || env == PathAVX2 || env == PathGo {
		return avail[0], fmt.Errorf("%s=%s: this CPU cannot run the %s kernels (it can run: %s)", EnvKernels, env, env, strings.Join(names, ", "))
	}
	return avail[0], fmt.Errorf("%s=%q: unknown kernel path (want one of %s, %s, %s)", EnvKernels, env, PathAVX512, PathAVX2, PathGo)
}

// Paths returns the kernel paths this machine can run, fastest first.
func Paths() []string {
	avail := available()
	out := make([]string, len(avail))
	for i, k := range avail {
		out[i] = k.name
	}
	return out
}

// Lookup returns the kernels of path p (one of Paths).
func Lookup(p string) (*Kernels, error) {
	for _, k := range available() {
		if k.name == p {
			return k, nil
		}
	}
	if p == "" {
		return nil, fmt.Errorf("empty kernel path")
	}
	_, err := choose(p, available())
	return nil, err
}

// FMAPeakChains is the FMAs of one iteration of FMAPeak's loop.
const FMAPeakChains = 12

// FMAPeak returns the path's FMA throughput loop — n iterations of
// FMAPeakChains independent FMAs, each on a register of lanes floats — or
// nil on a path without FMA kernels (go): the peak the products' rate is
// measured against (benchmarks/floor).
func (kn *Kernels) FMAPeak() (lanes int, loop func(n int)) { return kn.lanes, kn.fmaPeak }

// Name is the kernel path's name: PathAVX512, PathAVX2 or PathGo.
func (kn *Kernels) Name() string { return kn.name }
