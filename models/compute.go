package models

import (
	"sync/atomic"

	"github.com/beluga-nlp/beluga/models/backend"
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
