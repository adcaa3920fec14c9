// Package splits divides a suite's test cases into BeLUGA's T_train, T_val and
// T_test (per functionality, 50/25/25 of the test cases) and builds the
// held-out partitions by functionality, functionality class and test type. Its
// random streams are bit-exact ports of numpy's legacy RandomState (MT19937)
// and of default_rng (PCG64), so that splits match the original code.
package splits
