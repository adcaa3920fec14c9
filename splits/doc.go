// Package splits divides a suite's test cases into BeLUGA's T_train, T_val
// and T_test and builds the held-out partitions by functionality,
// functionality class and test type.
//
// The split is made per functionality over its sorted test-case ids, with
// sklearn's train_test_split(test_size=0.5, random_state=seed) applied twice
// (BeLUGA's make_suite_dataset notebook, seed 123): for n ids,
//
//	perm = RandomState(seed).permutation(n); k = ceil(n/2)
//	valtest = ids[perm[:k]]; train = ids[perm[k:]]
//
// and the same again on valtest (in that order) for test = first ceil(k/2),
// validation = the rest. Hence |train| = floor(n/2), |test| = ceil(ceil(n/2)/2).
// All inputs of a case stay together. The random stream is numpy's legacy
// MT19937, ported bit for bit in package nprand.
package splits
