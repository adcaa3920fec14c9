// Package backend is the compute seam of the models: a Backend owns the
// storage of parameters, gradients and optimiser state, and runs the
// operations the model families and the optimiser perform on them — the
// matrix product C = α·op(A)·op(B) + β·C, the element-wise kernels every
// family shares (GELU, row softmax, LayerNorm and their backward passes),
// AdamW's update (decoupled weight decay, which is also the L2 method),
// the sum of squares behind gradient-norm clipping, scaling, and Fish's
// meta-update θ ← θ_outer + a·(θ − θ_outer).
//
// Two CPU backends implement it: "go" (pure Go: vec32's AVX2/FMA kernels or
// gonum's BLAS) in every build, and "openblas" (OpenBLAS through cgo) in
// the build with -tags openblas. They share the element-wise kernels and
// differ in their matrix products. A backend value is built for one kernel
// path (New): it is a compute context, held by the model built on it, and
// nothing process-wide decides what a product runs on — two models of one
// process may compute on different backends, paths and precisions. The conformance suite
// (models/backend/conformance) runs the same forward, backward and
// optimiser checks against each of them; a new backend passes it before
// the models may use it.
//
// Buffers are []float32 obtained from Alloc. For a CPU backend they are
// host memory; every operation must give the same result as "go" within
// float32 rounding (the suite's tolerance is 1e-3 relative).
package backend

import (
	"fmt"
	"sort"
	"sync"

	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// Backend is one implementation of the compute the models and the
// optimiser need, on float32 buffers it allocated.
type Backend interface {
	// Name is the backend's registered name ("go", "openblas"; "+bf16"
	// added by BF16).
	Name() string
	// Kernels names the vector kernel path the backend runs on ("avx512",
	// "avx2", "go"): like the number of threads, recorded with each run,
	// not part of its identity.
	Kernels() string
	// Alloc returns a zeroed buffer of n elements owned by the backend.
	Alloc(n int) []float32

	// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major A (m×k
	// after op), B (k×n after op) and C (m×n) with leading strides lda,
	// ldb, ldc. With parallel, a large product may use every core; without
	// it, the product runs in the calling goroutine (products that already
	// run in parallel with others, such as per-head attention).
	Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

	// GELU sets y = ½x(1 + erf(x/√2)), the exact GELU.
	GELU(y, x []float32)
	// GELUBackward sets dx = dy·(Φ(x) + x·φ(x)); dx may be dy.
	GELUBackward(dx, dy, x []float32)
	// Softmax replaces row by its softmax (max-subtracted).
	Softmax(row []float32)
	// BiasGrad accumulates db += Σ_r dy[r] over the rows of dy (rows ×
	// len(db)), each element summed over the rows in order.
	BiasGrad(db, dy []float32, rows int)
	// Mul sets dst[i] = a[i]·b[i] (dst may be a): dropout's multipliers
	// applied.
	Mul(dst, a, b []float32)
	// MulAdd sets y[i] = y[i]·keep[i] + x[i], the product rounded before
	// the sum: dropout, then a residual connection, in one pass.
	MulAdd(y, keep, x []float32)
	// DropoutMask sets k[i] to 0 when the i-th draw of the SplitMix64
	// stream from state, shifted right by 11, is below least, else to
	// scale: element i takes the stream's i-th draw, however the work is
	// split.
	DropoutMask(k []float32, state, least uint64, scale float32)
	// LayerNorm normalises each row of width h: y = x̂·γ + β with
	// x̂ = (x−μ)/√(σ²+eps), keeping x̂ and rstd = 1/√(σ²+eps) per row for
	// the backward pass; y may be x.
	LayerNorm(y, xhat, rstd, x, gamma, beta []float32, h int, eps float64)
	// LayerNormBackward accumulates dγ and dβ (when dgamma is not nil)
	// and, when dx is not nil, sets dx = rstd·(g − mean(g) − x̂·mean(g·x̂))
	// with g = dy·γ. The result must not depend on scheduling.
	LayerNormBackward(dx, dgamma, dbeta, dy, xhat, rstd, gamma []float32, h int)

	// AdamW applies one AdamW update to a parameter from its gradient and
	// its moments m and v (updated in place), as torch.optim.AdamW does.
	AdamW(value, grad, m, v []float32, s AdamWStep)
	// AddSquares returns acc + Σ x², summed in float64 in an order that
	// depends on len(x) alone, never on scheduling (clipping's global norm
	// adds parameter after parameter).
	AddSquares(acc float64, x []float32) float64
	// Scale multiplies x by c.
	Scale(x []float32, c float32)
	// Zero sets x to zeros (gradients before a step).
	Zero(x []float32)
	// Copy copies src into dst (of the same length).
	Copy(dst, src []float32)
	// Lerp sets dst = from + a·(dst − from): Fish's meta-update, moving
	// the weights a fraction a of the way from where the outer step began.
	Lerp(dst, from []float32, a float32)
}

// AdamWStep is one AdamW update's coefficients, the same for every
// parameter of a step but Decay (1 for parameters exempt from decay):
//
//	m ← β1·m + (1−β1)·g,   v ← β2·v + (1−β2)·g²
//	θ ← θ·Decay − StepSize·m / (√v·InvBC2 + Eps)
//
// with StepSize = lr/(1−β1ᵗ), InvBC2 = 1/√(1−β2ᵗ), Decay = 1 − lr·λ.
type AdamWStep struct {
	Beta1, Beta2, Eps, StepSize, InvBC2, Decay float32
}

// The registry holds how to build each backend of the build for a kernel
// path; it is filled at init and only read afterwards.
var (
	mu       sync.RWMutex
	registry = map[string]func(*vec32.Kernels) Backend{}
)

// register makes a backend available by its name; registering a name twice
// panics (a programming error, at init).
func register(name string, open func(*vec32.Kernels) Backend) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[name]; dup {
		panic("backend: " + name + " registered twice")
	}
	registry[name] = open
}

// New returns the backend registered under name on kernel path path (one
// of Paths; "" for the fastest this CPU has).
func New(name, path string) (Backend, error) {
	kn, err := kernels(path)
	if err != nil {
		return nil, err
	}
	return open(name, kn)
}

// FromEnv returns the backend registered under name on the kernel path
// BELUGA_KERNELS names, or on the fastest when it is unset. When the
// variable names a path this CPU cannot run it returns the backend on the
// fastest and an error saying so (programs that train refuse to start).
func FromEnv(name string) (Backend, error) {
	kn, envErr := vec32.FromEnv()
	b, err := open(name, kn)
	if err != nil {
		return nil, err
	}
	return b, envErr
}

// Paths lists the kernel paths this machine can run, fastest first.
func Paths() []string { return vec32.Paths() }

func kernels(path string) (*vec32.Kernels, error) {
	if path == "" {
		return vec32.Lookup(vec32.Paths()[0])
	}
	return vec32.Lookup(path)
}

func open(name string, kn *vec32.Kernels) (Backend, error) {
	mu.RLock()
	defer mu.RUnlock()
	if o, ok := registry[name]; ok {
		return o(kn), nil
	}
	return nil, fmt.Errorf("no compute backend %q in this build (have %v)", name, namesLocked())
}

// Names lists the backends of this build, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Reference is the backend every other is checked against: pure Go, on
// the fastest kernel path (the vector paths give the same bits).
func Reference() Backend {
	kn, err := kernels("")
	if err != nil {
		panic(err) // the fastest path is always there
	}
	return pureGo{cpu{kn}}
}

// FMAPeak returns the FMA throughput loop of kernel path path — n
// iterations of chains independent FMAs, each on a register of lanes
// floats, generated with the path's micro-kernels — or a nil loop on a
// path without FMA kernels (go): the peak a product's rate is measured
// against (benchmarks/floor).
func FMAPeak(path string) (lanes, chains int, loop func(n int), err error) {
	kn, err := kernels(path)
	if err != nil {
		return 0, 0, nil, err
	}
	lanes, loop = kn.FMAPeak()
	return lanes, vec32.FMAPeakChains, loop, nil
}
