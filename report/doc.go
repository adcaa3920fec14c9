// Package report turns a run store into BeLUGA's Table 3 (Markdown, LaTeX,
// CSV) and Figure 1 heatmaps (PNG, SVG, PDF). Like DomainBed's
// collect_results it only reads run directories: it never trains.
//
// # What a table holds
//
// Rows are the IID baseline, then configuration × method in Table 3's order.
// For every task and row:
//
//   - the i.i.d. score, accuracy in percent on the i.i.d. test set;
//   - the suite score of each of seen, func, class and type: the unweighted
//     mean over functionalities of CheckList pass rates (functionalities with
//     every case filtered are left out, as pandas' mean leaves out None). For
//     seen every pass rate comes from the model trained on all of T_train;
//     for func / class / type each functionality's pass rate comes from the
//     model that did not see it (its own held-out fold). The baseline never
//     saw the suite: its pass rates stand in for all four scores;
//   - G = harmonic mean of the i.i.d. score and the suite score,
//     G = 2·iid·suite/(iid+suite);
//
// and Avg, the mean of all G values of the row (i.i.d. scores are shown but
// not averaged). Columns are task-major as in the paper (each task's G_seen,
// G_func, G_class, G_type), tasks in BeLUGA's order (sentiment, QQP, SQuAD).
// A row of several seeds or grid points shows the mean of their scores ±
// its standard error (scipy.stats.sem), and the CSV each seed's value.
//
// # Significance against the baseline
//
// The tests are package metrics': the i.i.d. columns use McNemar's exact
// test (of the examples on which the two models disagree in correctness, the
// count the row's model gets right against Binomial(n, 1/2), two-sided as
// scipy.stats.binomtest); the G columns and Avg use approximate randomisation
// (BeLUGA's randomized_test_avg: every item on which the two models differ is
// swapped with probability 1/2, all G values and Avg recomputed,
// p = (1 + #{|ΔG_perm| ≥ |ΔG_obs|}) / (1 + trials)), drawing the same swaps
// as BeLUGA for the same seed. Several replicates (seeds, grid points) are
// concatenated, each paired with the baseline's run of the same replicate.
// Cells with p < 0.05 are coloured in LaTeX: PineGreen when at or
// above the baseline, red when below. Over several seeds a paired t-test
// over seeds is reported beside the tests over cases.
//
// # Beyond BeLUGA, when asked
//
// Options.CI adds percentile bootstrap intervals to every cell
// (metrics.BootstrapAll): by default hierarchical, resampling each task's
// functionalities and then the cases within each drawn one
// (BootstrapHierarchical), or over cases within each functionality only
// (BootstrapCases); i.i.d. examples are resampled by themselves in both.
// Cell.Spread and WriteSpreadCSV give each functionality's pass-rate
// spread over seeds and the functionalities that swing. Per
// functionality, McNemar's exact test against the baseline with
// Benjamini–Hochberg q-values within each task and score
// (WriteComparisonsCSV). Results are validated against their run's spec
// (functionality set, verdict counts, i.i.d. vector length) before anything
// is computed. docs/statistics.md gives the formulas.
package report
