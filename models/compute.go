package models

import (
	"github.com/beluga-nlp/beluga/models/backend"
)

// A model computes in its own compute context — the backend its parameters
// live on and its passes run on, the kernel path that backend was built
// for, and the precision of its products — as a hugot session does: two
// models of one process (a test comparing two, a prompted decoder beside
// an encoder) may compute on different backends, paths and precisions, and
// nothing process-wide decides a product. A model is built on
// DefaultBackend, in fp32; SetBackend and SetPrecision choose otherwise,
// before its first pass (a bf16 model's products run on backend.BF16 of
// its backend).

// DefaultBackend returns the backend a model is built on: the build's —
// OpenBLAS in the openblas build, pure Go otherwise — on the kernel path
// BELUGA_KERNELS names, or on the fastest this CPU has. The error says
// that BELUGA_KERNELS names a path this machine cannot run (the backend
// returned runs the fastest meanwhile; programs that train refuse to
// start).
func DefaultBackend() (backend.Backend, error) { return backend.FromEnv(defaultBackend) }

// KernelPath returns the vector kernel path a model built now computes on
// — "avx512", "avx2" or "go" — and DefaultBackend's error. Like the number
// of threads, the path is an execution detail: it is recorded with each
// run, not part of its identity.
func KernelPath() (string, error) {
	b, err := DefaultBackend()
	return b.Kernels(), err
}

// BF16Kernel names the kernel the products of a bf16 model built now run
// on: "avx512_bf16" (VDPBF16PS) or "go" (the portable kernel, the same
// bits).
func BF16Kernel() string {
	b, _ := DefaultBackend()
	return backend.BF16Kernel(b)
}

// KernelPaths lists the kernel paths this machine can run, fastest first.
func KernelPaths() []string { return backend.Paths() }

// computeCtx is a model's compute context (see above). be is what its
// passes run on: base in fp32, backend.BF16(base) in bf16.
type computeCtx struct {
	base, be  backend.Backend
	precision Precision
}

func newCompute() computeCtx {
	b, _ := DefaultBackend() // a bad BELUGA_KERNELS runs the fastest path; trainers refuse it before building
	return computeCtx{base: b, be: b, precision: PrecisionFP32}
}

// SetBackend makes the model compute on b from its next pass on, in its
// precision. Its parameters stay where they are: b must keep its buffers
// in host memory, as every CPU backend does.
func (c *computeCtx) SetBackend(b backend.Backend) {
	c.base = b
	c.SetPrecision(c.precision)
}

// Backend returns the backend the model's passes run on (its precision's:
// "+bf16" in bf16); its optimiser and clipping run there too.
func (c *computeCtx) Backend() backend.Backend { return c.be }

// SetPrecision makes the model's matrix products run in p from its next
// pass on; its parameters stay float32 (the master weights the optimiser
// updates).
func (c *computeCtx) SetPrecision(p Precision) {
	c.precision = orFP32(p)
	c.be = c.base
	if c.precision == PrecisionBF16 {
		c.be = backend.BF16(c.base)
	}
}

// Precision returns the arithmetic of the model's products.
func (c *computeCtx) Precision() Precision { return c.precision }

// BF16Kernel names the kernel the model's products would run on in bf16:
// "avx512_bf16" (VDPBF16PS) or "go" (the portable kernel, the same bits).
func (c *computeCtx) BF16Kernel() string { return backend.BF16Kernel(c.base) }
