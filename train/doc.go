// Package train runs one training run: it reads a typed RunSpec, fits a
// model on i.i.d. data, on a behavioural test suite, or on both, and
// evaluates it, writing what it trained on, its curve, its model and its
// metrics into a run directory (Run).
//
// What a run can be is held in tables, each the one place its kind of thing
// is declared:
//
//   - configurations (config.go, Configurations): IID, IID→T, IID+T,
//     IID→(IID+T) — BeLUGA's four —, T, the suite alone from the initial
//     model, and the prompted ones (0-shot and k-shot from the i.i.d. data,
//     the suite or both), each with both its spellings (iid-(iid+t) in run
//     specs and flags, IID-IID+T in experiment specs and Table 3) and what
//     it trains on and from; experiments and the CLI ask it by name;
//   - methods (methods.go, Methods): BeLUGA's eight (vanilla, L2, dropout,
//     LP, LP-FT, IRM, Group-DRO, Fish) and DomainBed's forms of IRM and
//     Group-DRO, each an Updater that says how a step uses the batches;
//     their constants are one table (MethodSettings), which the profile
//     fills and a run's method_settings override field by field;
//   - tasks (task.go, kind.go): the built-in sentiment and QQP
//     classification tasks, any classification task a spec declares, and
//     reading comprehension (SQuAD-format span models, read.go), each of a
//     kind that prepares, trains and evaluates its runs;
//   - test types (testtype.go): the batch kind each registered test type
//     trains as, and per batch kind its batch size, batch builder, loss and
//     IRM penalty — the other half of suites' test-type registry;
//   - profiles (profile.go): the defaults a run takes when its spec leaves
//     a setting out — every phase's hyper-parameters (LP-FT's epochs
//     among them), the search grids and the methods' constants, BeLUGA's
//     and DomainBed's —, so that Effective (effective.go) can say exactly
//     what a run computes; its canonical form is the run's identity. Every
//     way of starting a run fills its spec from the profile and nothing
//     overrides a filled value afterwards.
//
// A suite becomes training data by type (data.go: labelled rows, pairs of
// an original and a perturbation); a Mixer draws BeLUGA's epochs from it
// (loop.go), the group-robust methods draw per environment (envs.go), and
// Search (search.go) picks hyper-parameters on the validation split.
//
// A run's own code is split by what it does: the spec and its checks
// (spec.go), the run driver that prepares, trains, saves and evaluates
// (run.go), the i.i.d. data it reads (iid.go), the suite it trains and is
// scored on (suite.go), evaluation — the i.i.d. test set and the suite's
// T_test cases, their prediction files and scores (eval.go) — and what it
// returns and writes (result.go).
package train
