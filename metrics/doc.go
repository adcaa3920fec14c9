// Package metrics scores predictions on a suite with CheckList's exact
// semantics and aggregates them as BeLUGA does: pass rates per functionality,
// seen / func / class / type scores, i.i.d. scores, their harmonic mean G, and
// significance tests.
package metrics
