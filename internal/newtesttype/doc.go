// Package newtesttype holds no code: its test registers a test type that
// beluga does not ship — CheckList's monotonic-decreasing directional
// expectation, "DEC" — through the registries alone (suites.RegisterTestType
// and train.RegisterTestType, in one file) and runs it end to end: a suite
// naming it is read, trained on, scored, reported and drawn — and a
// "FLIP" type whose verdict rule is its own (metrics.RegisterRule). It lives in a
// package of its own so that the type it adds is seen by no other test
// binary, whose goldens list the shipped types only.
package newtesttype
