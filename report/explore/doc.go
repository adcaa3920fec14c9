// Package explore shows a run store in the browser: `beluga report --format
// html` writes one self-contained page, `beluga serve` serves the same page
// from a store on 127.0.0.1. It only reads run directories.
//
// # One adapter, one view model
//
// All store reading is here (Build, FromDir, Source.Cases); it produces a
// JSON view model, and the page (assets/app.js, vanilla JavaScript) is a
// pure view of that JSON: it draws, filters and pages, and computes no
// score. The model is:
//
//   - View.Table: Table 3 as package report computes it (report.FromStore /
//     report.FromDir, its Columns, Rows, p-values, marks and best values):
//     each CellView holds the value (mean over replicates), its standard
//     error over replicates, each replicate's value (shown on hover), the
//     p-value against the IID baseline over cases (McNemar's exact test for
//     i.i.d., approximate randomisation for G), the paired t-test's over
//     seeds, the bootstrap interval when asked
//     (report.Options.CI), the significance mark (report.Table.Mark), the
//     footnote marks the Markdown table writes (report.Column.Marks: flags,
//     a constant predictor's §, a skewed held-out group's ‖) and the
//     runs it comes from: the baseline's all from its i.i.d. run; a trained
//     row's i.i.d. score from its seen run, and its G of a score from the
//     seen run (i.i.d. part) and that score's runs (suite part).
//   - View.Tasks: Figure 1 as a grid, one line per table row × figure score
//     (report.Table.FigureScores; the baseline's one line stands for every
//     score), columns in Figure 1's order (report.Table.FigureOrder); each
//     cell is report.Table.PassRates (CheckList's pass rate over the cases
//     not filtered out), the number of those cases (from the run's
//     result.json verdicts), the run that scored it — for a held-out score,
//     the run whose fold held the functionality out — and its colour
//     (report.Rocket).
//   - View.Groups: the per-group tables (report.Table.GroupLines), each
//     line's case count with the report's balance marks (report.GroupMarks:
//     ‖ skewed share of T_test, # few T_test cases) and, in
//     View.GroupFootnotes, the report's explanation with the counts
//     (report.Table.GroupFootnotes): one definition of the marks, the
//     report's.
//   - View.Funcs: every functionality with its task, class and type (from
//     the results) and description (from the suite file the trainer read,
//     train_spec.json's suite, when it is still there).
//   - View.Runs: every done run (search runs left out, as in the table):
//     its spec (configuration, method, score, fold, seed, spec
//     hyper-parameters), the train spec it used without file paths,
//     timing.json, i.i.d. metrics, its curve.jsonl thinned to CurvePoints
//     points per batch kind (each the mean of its stretch), the
//     warnings its result.json records ("warnings" or "flags"), and the
//     input checks its trainer stored (train/input_checks.json): the
//     tokenizer's coverage of each data set, and its findings (unknown
//     tokens, truncation, overlaps) as warnings.
//   - CaseSet, per functionality and read only when shown: each case's id,
//     split and metadata, inputs with their texts and expected labels, and
//     per run the verdict of each case (P, F, -, or ? when the run did not
//     score it) and each input's prediction and probabilities (rounded to
//     3 decimals). These come from every run's train/cases.jsonl; files
//     written before case files carried texts and predictions (verdicts
//     alone) get their texts, expected labels, splits and metadata from
//     the suite when it can be read, and no predictions; a run without a
//     case file gets its verdicts from result.json, cases numbered by
//     position.
//
// CaseSet.Select (and its mirror in the page's script) filters a case set
// by the verdict of one run (the column the page was opened from), split,
// metadata field and text, and orders the cases that run fails first, then
// by how many of the shown runs fail them.
//
// # The page
//
// The report file embeds the View and one CaseSet per functionality as
// gzipped JSON in base64 (decoded with the browser's DecompressionStream
// only when a functionality is opened); the script and style are inlined
// from this package's go:embed assets, so the file opens from disk with no
// network. Under serve the page fetches api/view and pages each
// functionality's cases from api/cases (Handler). The page shows Table 3
// (a value links to its runs), the heatmap (hover: functionality, type,
// class, pass rate, cases, run; click: the functionality), a functionality
// with its cases side by side for the baseline, the run that saw it and
// the runs whose folds held it out, and a run with its curve (inline SVG),
// hyper-parameters, timing, warnings and input coverage.
package explore
