// Package metrics scores predictions on a suite with CheckList's exact
// semantics and aggregates them as BeLUGA does.
//
// A prediction for one input is a predicted class (or answer text) with
// either a probability per class (softmax) or a single confidence (scalar).
// Each expectation turns a case's predictions into per-input results (pass,
// fail, or not applicable); the case passes when its aggregation (all inputs,
// or all but the original) passes, and is filtered when nothing applies.
// A functionality's pass rate is 100·(1 − failed/(cases − filtered)).
//
// For sentiment, CheckList squashes a 2-way positive probability p into three
// classes: neutral iff 1/3 < p < 2/3, with probabilities
//
//	p < 1/3 or p > 2/3:  [1−p, 0, p]
//	1/3 < p < 1/2:       [3|p−½|, 1−3|p−½|, 0]
//	1/2 ≤ p < 2/3:       [0, 1−3|p−½|, 3|p−½|]
//
// and p exactly 1/3 or 2/3 falls through every branch to [0, 0, 0] and class
// 0 (reproduced by default; SquashCorrected gives it the neighbouring band).
//
// Aggregates: the suite score is the mean of the functionalities' pass rates;
// G is the harmonic mean of a suite score and the i.i.d. score; Avg is the
// mean of the G scores.
//
// Tests and intervals: BeLUGA's McNemar exact test and approximate
// randomisation (significance.go); over seeds, mean ± standard error and the
// paired t-test (MeanSE, PairedTTest); stratified percentile bootstrap
// intervals drawing numpy's RandomState stream (Bootstrap, BootstrapAll);
// Benjamini–Hochberg q-values for many comparisons at once
// (BenjaminiHochberg). Each is checked against numpy/scipy in testdata.
//
// Calibration (calibration.go): whether a confidence of 0.8 is right 80 %
// of the time — reliability bins of equal width or equal mass, the expected
// calibration error and the multi-class Brier score (Calibrate), checked
// against sklearn's calibration_curve and numpy.
//
// Sanity checks (sanity.go): whether a model's scores mean anything — a
// constant predictor on i.i.d. data or on the suite, a suite loss that
// never fell (Sanity, reading a Result, class names and losses). Training
// runs and beluga test raise the same flags from it.
package metrics
