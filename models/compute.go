package models

import (
	"sync/atomic"

	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// The models compute on one backend at a time (package backend): the
// build's default — OpenBLAS in the openblas build, pure Go otherwise —
// unless UseBackend chose another. Parameters and gradients are allocated
// by the backend current when a model is built; a model must train on
// that backend.

type backendBox struct{ b backend.Backend }

var current atomic.Pointer[backendBox]

func init() {
	b, err := backend.Lookup(defaultBackend)
	if err != nil {
		panic(err) // the build registers its default backend
	}
	current.Store(&backendBox{b})
}

// compute is the current backend.
func compute() backend.Backend { return current.Load().b }

// Backend returns the backend the models compute on.
func Backend() backend.Backend { return compute() }

// UseBackend makes the models compute on b from now on and returns a
// function that restores the previous backend. Switch backends only
// between models: not while a model built on another is training.
func UseBackend(b backend.Backend) (restore func()) {
	prev := current.Swap(&backendBox{b})
	return func() { current.Store(prev) }
}

// KernelPath returns the vector kernel path the float32 computation runs
// on: "avx512", "avx2" or "go" (package vec32), the fastest this CPU has
// unless BELUGA_KERNELS forced one; the error says that BELUGA_KERNELS
// names a path this machine cannot run (programs that train refuse to
// start then). Like the number of threads, the path is an execution
// detail: it is recorded with each run, not part of its identity.
func KernelPath() (string, error) { return vec32.Path(), vec32.EnvError() }

// KernelPaths lists the kernel paths this machine can run, fastest first.
func KernelPaths() []string { return vec32.Paths() }

// UseKernelPath makes the float32 computation run on kernel path p from
// now on (one of KernelPaths) and returns a function restoring the
// previous one. Switch paths between models' computations, not during one.
func UseKernelPath(p string) (restore func(), err error) { return vec32.Use(p) }
