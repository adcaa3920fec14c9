package report

// The test report: what `beluga test` found, laid out as CheckList reports
// a suite run, not as a BeLUGA experiment (no Table 3, no baselines).
//
// # Sections, and where further ones plug in
//
// The report is a list of sections, drawn in the same order by the
// Markdown and text writers here (testSections) and by the page
// (report/explore's assets/app.js, testSections there):
//
//  1. summary — the model(s), suite, label match, sampling, and the suite
//     score with what it leaves out (writeTestSummary);
//  2. matrix — CheckList's visual_summary grid: capability × test type,
//     each cell the worst fail rate of its tests and their number
//     (writeTestMatrix);
//  3. tests — one row per test: capability, type, description, cases,
//     filtered, fails, fail rate (and, for two models, both, the
//     difference, McNemar's p and the Benjamini–Hochberg q)
//     (writeTestTable);
//  4. failing cases — per test its worst failing cases with the inputs
//     that break the expectation marked (writeTestFailures).
//
// A further section (calibration, the user's own data, the worst group)
// is a field of TestReport filled by whoever computes it, one function
// func(w io.Writer, r *TestReport, md bool) error appended to
// testSections below, and one render function appended to testSections in
// app.js; a section whose field is empty writes nothing.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/suites"
)

// The files of a folder beluga test writes, beside the page and table.
const (
	TestInfoFile    = "test.json"
	TestResultsFile = "results.json"
	TestCasesFile   = "cases.jsonl"
)

// TestInfo is what a folder beluga test wrote was tested with (test.json):
// enough, with results.json and cases.jsonl, to draw its report again.
type TestInfo struct {
	Model string `json:"model"`
	// Suite is the suite file as given, SuiteName its name.
	Suite     string `json:"suite"`
	SuiteName string `json:"suite_name,omitempty"`
	// ModelLabels are the model's class names (id2label), SuiteLabels the
	// suite classes they were matched against, Match each one's.
	ModelLabels []string          `json:"model_labels"`
	SuiteLabels []string          `json:"suite_labels"`
	Match       map[string]string `json:"match"`
	// Classes are the suite's classes, the order of the probabilities in
	// the case file (a 2-way model's squashed to a 3-way suite's).
	Classes []string `json:"classes"`
	// Sample is CheckList's sampling when asked for (suite.run(n, seed)).
	Sample *Sample `json:"sample,omitempty"`
	// Descriptions are the tests' descriptions from the suite.
	Descriptions map[string]string `json:"descriptions,omitempty"`
	// Flags are the sanity checks' findings.
	Flags []string `json:"flags,omitempty"`
}

// Sample is CheckList's per-test sampling: suite.run(n=N, seed=Seed)
// scores at most N cases of each test, drawn as CheckList draws them.
type Sample struct {
	N    int    `json:"n"`
	Seed uint32 `json:"seed"`
}

// TestTitle heads the report of model tested on suite.
func TestTitle(model, suite string) string {
	return "beluga test: " + model + " on " + filepath.Base(suite)
}

// LabelMatch says how the model's classes were matched to the suite's.
func (t *TestInfo) LabelMatch() string {
	parts := make([]string, len(t.ModelLabels))
	for i, l := range t.ModelLabels {
		parts[i] = l + " → " + t.Match[l]
	}
	return strings.Join(parts, ", ")
}

// TestStats are one model's counts on one test, as CheckList's get_stats
// gives them: cases run, filtered, failed, and the fail rate in percent
// over the cases not filtered (nil when every case was filtered).
type TestStats struct {
	Cases    int      `json:"n"`
	Filtered int      `json:"filtered"`
	Fails    int      `json:"fails"`
	FailRate *float64 `json:"fail_rate"`
}

// TestRow is one test (functionality) of the report.
type TestRow struct {
	Name        string `json:"name"`
	Capability  string `json:"capability"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	// Excluded marks a test left out of the suite score.
	Excluded bool `json:"excluded,omitempty"`
	// Stats has one entry per model.
	Stats []TestStats `json:"stats"`
	// For two models: the fail-rate difference B − A in points, McNemar's
	// exact p over the cases both scored, the Benjamini–Hochberg q over
	// the tests, and the number of cases whose verdict flips.
	Diff  *float64 `json:"diff,omitempty"`
	P     *float64 `json:"p,omitempty"`
	Q     *float64 `json:"q,omitempty"`
	Flips int      `json:"flips,omitempty"`
}

// MatrixCell is one capability × type cell of the grid: the number of
// tests and, per model, the worst (largest) fail rate among them, as
// CheckList's visual_summary_table shows it.
type MatrixCell struct {
	Tests int        `json:"tests"`
	Worst []*float64 `json:"worst"`
	// WorstTest names the test of the worst fail rate (of the first model).
	WorstTest string `json:"worst_test,omitempty"`
}

// TestMatrix is CheckList's grid: capabilities (CheckList's order) by the
// test types MFT, INV, DIR.
type TestMatrix struct {
	Capabilities []string       `json:"capabilities"`
	Types        []string       `json:"types"`
	Cells        [][]MatrixCell `json:"cells"`
}

// FailingCase is one failing case shown in the report, worst first.
type FailingCase struct {
	Model int `json:"model"`
	// Flip marks a case the other model passes.
	Flip bool `json:"flip,omitempty"`
	metrics.CaseVerdict
}

// TestReport is the report of one model, or two compared, on a suite.
type TestReport struct {
	Title  string   `json:"title"`
	Models []string `json:"models"`
	Suite  string   `json:"suite"`
	Task   string   `json:"task"`
	// LabelMatch is per model how its classes were matched.
	LabelMatch []string `json:"label_match"`
	// Sampling says which cases were scored.
	Sampling string `json:"sampling"`
	// Scores are per model BeLUGA's suite score, the mean pass rate over
	// the tests not excluded that have one (100 − the mean fail rate).
	Scores []*float64 `json:"scores"`
	// ScoreNote says what the suite score leaves out.
	ScoreNote string     `json:"score_note"`
	Tests     []TestRow  `json:"tests"`
	Matrix    TestMatrix `json:"matrix"`
	// Failing holds, per test (by name), its worst failing cases (at most
	// FailingShown per model).
	Failing map[string][]FailingCase `json:"failing,omitempty"`
	// Calibration holds the models' calibration sections (those that have
	// one: TestCalibration), in model order.
	Calibration []*TestCalibration `json:"calibration,omitempty"`
	Flags       []string           `json:"flags,omitempty"`
}

// FailingShown is how many failing cases per test the Markdown report
// lists (CheckList's summary shows n=3); the page pages through all.
const FailingShown = 3

// checkListCapabilities is CheckList's capability order (test_suite.py's
// capability_order); others follow in suite order.
var checkListCapabilities = []string{"Vocabulary", "Taxonomy", "Robustness", "NER", "Fairness", "Temporal", "Negation", "Coref", "SRL", "Logic"}

// TestModel is one model's scores for NewTestReport.
type TestModel struct {
	Info   *TestInfo
	Result *metrics.Result
	// Cases are the Result's case verdicts (Result.Cases, or its case file
	// read back); nil lists no failing cases.
	Cases []metrics.CaseVerdict
	// Calibration is the model's calibration section (TestCalibration;
	// calibration.json read back), nil for none.
	Calibration *TestCalibration
}

// NewTestReport lays out one model's scores, or two models' on the same
// suite (the comparison's columns are filled by Compare).
func NewTestReport(title string, ms ...TestModel) (*TestReport, error) {
	if len(ms) == 0 || len(ms) > 2 {
		return nil, fmt.Errorf("test report: %d models (want one or two)", len(ms))
	}
	a := ms[0]
	r := &TestReport{Title: title, Suite: a.Info.SuiteName, Task: a.Result.Task, Failing: map[string][]FailingCase{}}
	if r.Suite == "" {
		r.Suite = filepath.Base(a.Info.Suite)
	}
	r.Sampling = samplingText(a.Info.Sample)
	for mi, m := range ms {
		if mi > 0 && !sameTests(a.Result, m.Result) {
			return nil, fmt.Errorf("test report: %s and %s were not scored on the same tests", a.Info.Model, m.Info.Model)
		}
		if mi > 0 && samplingText(m.Info.Sample) != r.Sampling {
			return nil, fmt.Errorf("test report: %s scored %s, %s %s", a.Info.Model, r.Sampling, m.Info.Model, samplingText(m.Info.Sample))
		}
		r.Models = append(r.Models, m.Info.Model)
		r.LabelMatch = append(r.LabelMatch, m.Info.LabelMatch())
		r.Scores = append(r.Scores, m.Result.Score)
		for _, f := range m.Info.Flags {
			if len(ms) > 1 {
				f = string(rune('A'+mi)) + ": " + f
			}
			r.Flags = append(r.Flags, f)
		}
		byFunc := map[string][]metrics.CaseVerdict{}
		for _, c := range m.Cases {
			byFunc[c.Functionality] = append(byFunc[c.Functionality], c)
		}
		for _, fc := range byFunc {
			worst := metrics.WorstFirst(fc)
			for _, c := range worst[:min(len(worst), FailingShown)] {
				r.Failing[c.Functionality] = append(r.Failing[c.Functionality], FailingCase{Model: mi, CaseVerdict: c})
			}
		}
	}
	for i, f := range a.Result.Functionalities {
		row := TestRow{Name: f.Name, Capability: f.Class, Type: string(f.Type), Description: a.Info.Descriptions[f.Name], Excluded: f.Excluded}
		for _, m := range ms {
			row.Stats = append(row.Stats, testStats(m.Result.Functionalities[i]))
		}
		r.Tests = append(r.Tests, row)
	}
	r.ScoreNote = scoreNote(a.Result)
	r.Matrix = testMatrix(r.Tests, len(ms))
	for _, m := range ms {
		if m.Calibration != nil {
			r.Calibration = append(r.Calibration, m.Calibration)
		}
	}
	if len(ms) == 2 {
		r.compare(ms[0].Cases, ms[1].Cases)
	}
	return r, nil
}

// compare fills a two-model report's comparison columns: per test the
// fail-rate difference B − A, McNemar's exact test (metrics.McNemarExact:
// of the cases both scored — neither filtered — on which the verdicts
// differ, how many B passes, against Binomial(n, ½), two-sided as
// scipy.stats.binomtest), the Benjamini–Hochberg q over the tests with a
// p-value, and the flips; and lists each test's flipped cases first
// among its failing cases (Failing), the failing model's worst first.
func (r *TestReport) compare(a, b []metrics.CaseVerdict) {
	type key struct {
		f  string
		id int
	}
	other := make(map[key]metrics.CaseVerdict, len(b))
	for _, c := range b {
		other[key{c.Functionality, c.Case}] = c
	}
	hits := map[string][2][]float64{}
	flips := map[string][]FailingCase{}
	for _, ca := range a {
		cb, ok := other[key{ca.Functionality, ca.Case}]
		if !ok || ca.Verdict == metrics.Filtered || cb.Verdict == metrics.Filtered {
			continue
		}
		h := hits[ca.Functionality]
		h[0] = append(h[0], passed(ca.Verdict))
		h[1] = append(h[1], passed(cb.Verdict))
		hits[ca.Functionality] = h
		switch {
		case ca.Verdict == metrics.Fail && cb.Verdict == metrics.Pass:
			flips[ca.Functionality] = append(flips[ca.Functionality], FailingCase{Model: 0, Flip: true, CaseVerdict: ca})
		case ca.Verdict == metrics.Pass && cb.Verdict == metrics.Fail:
			flips[ca.Functionality] = append(flips[ca.Functionality], FailingCase{Model: 1, Flip: true, CaseVerdict: cb})
		}
	}
	var ps []float64
	var rows []int
	for i := range r.Tests {
		t := &r.Tests[i]
		if fa, fb := t.Stats[0].FailRate, t.Stats[1].FailRate; fa != nil && fb != nil {
			d := *fb - *fa
			t.Diff = &d
		}
		fl := flips[t.Name]
		t.Flips = len(fl)
		h := hits[t.Name]
		if len(h[0]) > 0 {
			p, _ := metrics.McNemarExact(h[0], h[1])
			t.P = &p
			ps = append(ps, p)
			rows = append(rows, i)
		}
		slices.SortStableFunc(fl, func(x, y FailingCase) int { return cmp.Compare(y.Violation, x.Violation) })
		shown := fl[:min(len(fl), FailingShown)]
		for _, c := range r.Failing[t.Name] {
			if !slices.ContainsFunc(shown, func(f FailingCase) bool { return f.Case == c.Case && f.Model == c.Model }) {
				shown = append(shown, c)
			}
		}
		if len(shown) > 0 {
			r.Failing[t.Name] = shown
		}
	}
	for j, q := range metrics.BenjaminiHochberg(ps) {
		v := q
		r.Tests[rows[j]].Q = &v
	}
}

func passed(v metrics.Verdict) float64 {
	if v == metrics.Pass {
		return 1
	}
	return 0
}

func sameTests(a, b *metrics.Result) bool {
	return slices.EqualFunc(a.Functionalities, b.Functionalities, func(x, y metrics.FunctionalityResult) bool { return x.Name == y.Name })
}

func samplingText(s *Sample) string {
	if s == nil {
		return "every case of every test"
	}
	return fmt.Sprintf("CheckList's sampling: at most %d cases per test, drawn as suite.run(n=%d, seed=%d) draws them", s.N, s.N, s.Seed)
}

func testStats(f metrics.FunctionalityResult) TestStats {
	s := TestStats{Cases: f.Cases, Filtered: f.Filtered, Fails: f.Failed}
	if n := f.Cases - f.Filtered; n > 0 {
		v := 100 * float64(f.Failed) / float64(n)
		s.FailRate = &v
	}
	return s
}

// scoreNote says which tests the suite score leaves out and why.
func scoreNote(res *metrics.Result) string {
	var excluded, empty []string
	scored := 0
	for _, f := range res.Functionalities {
		switch {
		case f.Excluded:
			excluded = append(excluded, `"`+f.Name+`"`)
		case f.PassRate == nil:
			empty = append(empty, `"`+f.Name+`"`)
		default:
			scored++
		}
	}
	note := fmt.Sprintf("mean pass rate (100 − fail rate) over %d of %d tests", scored, len(res.Functionalities))
	if len(excluded) > 0 {
		why := "--exclude"
		if res.Task == "sentiment" && len(excluded) == len(metrics.UnscorableSentiment) {
			why = "BeLUGA leaves them out: a confident model has every case filtered"
		}
		note += fmt.Sprintf("; leaves out %s (%s)", strings.Join(excluded, ", "), why)
	}
	if len(empty) > 0 {
		note += fmt.Sprintf("; and %s (every case filtered)", strings.Join(empty, ", "))
	}
	return note
}

func testMatrix(tests []TestRow, models int) TestMatrix {
	var caps []string
	for _, c := range checkListCapabilities {
		if slices.ContainsFunc(tests, func(t TestRow) bool { return t.Capability == c }) {
			caps = append(caps, c)
		}
	}
	for _, t := range tests {
		if !slices.Contains(caps, t.Capability) {
			caps = append(caps, t.Capability)
		}
	}
	var types []string
	for _, tt := range suites.TestTypes() {
		types = append(types, string(tt))
	}
	m := TestMatrix{Capabilities: caps, Types: types, Cells: make([][]MatrixCell, len(caps))}
	for i, c := range caps {
		m.Cells[i] = make([]MatrixCell, len(types))
		for j, ty := range types {
			cell := MatrixCell{Worst: make([]*float64, models)}
			for _, t := range tests {
				if t.Capability != c || t.Type != ty {
					continue
				}
				cell.Tests++
				for k, s := range t.Stats {
					if s.FailRate != nil && (cell.Worst[k] == nil || *s.FailRate > *cell.Worst[k]) {
						v := *s.FailRate
						cell.Worst[k] = &v
						if k == 0 {
							cell.WorstTest = t.Name
						}
					}
				}
			}
			m.Cells[i][j] = cell
		}
	}
	return m
}

// testSections are the report's sections in order (the file comment).
var testSections = []func(w io.Writer, r *TestReport, md bool) error{
	writeTestSummary, writeTestMatrix, writeTestTable, writeTestFailures, writeTestCalibration,
}

// WriteMarkdown writes the report as Markdown that fits a page: the
// per-test table has a row per test and seven columns (nine with two
// models, and the comparison's), the grid one row per capability.
func (r *TestReport) WriteMarkdown(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "# %s\n\n", mdCell(r.Title)); err != nil {
		return err
	}
	for _, s := range testSections {
		if err := s(w, r, true); err != nil {
			return err
		}
	}
	return nil
}

// WriteText writes what beluga test prints: the per-test table with fail
// rates first (it fits the first screen), the suite score, the grid and
// the label match; failing cases are beluga failures' to list.
func (r *TestReport) WriteText(w io.Writer) error {
	for _, s := range []func(io.Writer, *TestReport, bool) error{writeTestTable, writeTestSummary, writeTestMatrix} {
		if err := s(w, r, false); err != nil {
			return err
		}
	}
	return nil
}

func pct(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", *v)
}

func writeTestSummary(w io.Writer, r *TestReport, md bool) error {
	bullet := ""
	if md {
		bullet = "- "
	}
	var b strings.Builder
	for i, m := range r.Models {
		name := ""
		if len(r.Models) > 1 {
			name = fmt.Sprintf(" (%s)", string(rune('A'+i)))
		}
		fmt.Fprintf(&b, "%sModel%s: %s; classes matched: %s\n", bullet, name, m, r.LabelMatch[i])
	}
	fmt.Fprintf(&b, "%sSuite: %s (%s), %d tests; cases scored: %s\n", bullet, r.Suite, r.Task, len(r.Tests), r.Sampling)
	for i, s := range r.Scores {
		name := ""
		if len(r.Models) > 1 {
			name = fmt.Sprintf(" of %s", string(rune('A'+i)))
		}
		fmt.Fprintf(&b, "%sSuite score%s: %s — %s\n", bullet, name, pct(s), r.ScoreNote)
	}
	for _, f := range r.Flags {
		fmt.Fprintf(&b, "%sWarning: %s\n", bullet, f)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTestMatrix(w io.Writer, r *TestReport, md bool) error {
	m := r.Matrix
	var rows [][]string
	head := append([]string{"capability"}, m.Types...)
	for i, c := range m.Capabilities {
		row := []string{c}
		for _, cell := range m.Cells[i] {
			if cell.Tests == 0 {
				row = append(row, "")
				continue
			}
			var vals []string
			for _, v := range cell.Worst {
				vals = append(vals, pct(v))
			}
			row = append(row, fmt.Sprintf("%s (%d)", strings.Join(vals, " / "), cell.Tests))
		}
		rows = append(rows, row)
	}
	title := "Fail rates by capability and test type: the worst test's fail rate (number of tests), as CheckList's visual summary"
	if len(r.Models) > 1 {
		title += "; A / B"
	}
	return writeGrid(w, md, "## "+title, title+":", 1, head, rows)
}

func writeTestTable(w io.Writer, r *TestReport, md bool) error {
	head := []string{"test", "capability", "type", "n", "filtered", "fails", "fail rate"}
	two := len(r.Models) > 1
	if two {
		head = []string{"test", "capability", "type", "n", "fails A", "fails B", "fail rate A", "fail rate B", "B − A", "p", "q", "flips"}
	}
	var rows [][]string
	for _, t := range r.Tests {
		name := t.Name
		if t.Excluded {
			name += " (not in the score)"
		}
		a := t.Stats[0]
		if !two {
			rows = append(rows, []string{name, t.Capability, t.Type, strconv.Itoa(a.Cases), strconv.Itoa(a.Filtered), strconv.Itoa(a.Fails), pct(a.FailRate)})
			continue
		}
		b := t.Stats[1]
		rows = append(rows, []string{name, t.Capability, t.Type, strconv.Itoa(a.Cases), strconv.Itoa(a.Fails), strconv.Itoa(b.Fails),
			pct(a.FailRate), pct(b.FailRate), signed(t.Diff), pvalue(t.P), pvalue(t.Q), strconv.Itoa(t.Flips)})
	}
	if !md {
		// Printed, the names go last: CheckList's run to 90 characters,
		// and the numbers stay on the first screen's left.
		head = append(head[1:], head[0])
		for i, row := range rows {
			rows[i] = append(row[1:], row[0])
		}
	}
	title := "Tests"
	if two {
		// The fail rates rest on different cases where the models filter
		// different ones; p rests on the cases both scored.
		title = "Tests: fail rates of A and B, each over the cases that model did not filter; McNemar's exact p over the cases both scored, Benjamini–Hochberg q over the tests"
	}
	return writeGrid(w, md, "## "+title, "", 3, head, rows)
}

func signed(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%+.1f", *v)
}

func pvalue(v *float64) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(*v, 'g', 3, 64)
}

// writeGrid writes a table as Markdown (with a heading; the first left
// columns aligned left, the others right) or aligned text.
func writeGrid(w io.Writer, md bool, mdTitle, textTitle string, left int, head []string, rows [][]string) error {
	if md {
		var b strings.Builder
		b.WriteString(mdTitle + "\n\n|")
		for _, h := range head {
			b.WriteString(" " + mdCell(h) + " |")
		}
		b.WriteString("\n|")
		for i := range head {
			if i < left {
				b.WriteString("---|")
			} else {
				b.WriteString("--:|")
			}
		}
		b.WriteString("\n")
		for _, row := range rows {
			b.WriteString("|")
			for _, c := range row {
				b.WriteString(" " + mdCell(c) + " |")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	if textTitle != "" {
		if _, err := fmt.Fprintln(w, textTitle); err != nil {
			return err
		}
	}
	// The last cell ends no column, so that no line ends in spaces.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// mdCell escapes what would end a Markdown table cell or start markup.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`, "<", "&lt;").Replace(s)
}

// writeTestFailures lists per test its worst failing cases (Markdown
// only: beluga test points to beluga failures for the text).
func writeTestFailures(w io.Writer, r *TestReport, md bool) error {
	if !md || len(r.Failing) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Failing cases, worst first (at most %d per test and model; ✗ marks the inputs that break the expectation)\n\n", FailingShown)
	if len(r.Models) > 1 {
		b.WriteString("Cases one model passes and the other fails (flips) come first.\n\n")
	}
	for _, t := range r.Tests {
		cs := r.Failing[t.Name]
		if len(cs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "### %s (%s, %s)\n\n", mdCell(t.Name), mdCell(t.Capability), t.Type)
		if t.Description != "" {
			fmt.Fprintf(&b, "%s\n\n", mdCell(t.Description))
		}
		fmt.Fprintf(&b, "Expects: %s.\n\n", mdCell(cs[0].Expect))
		for _, c := range cs {
			who := ""
			if len(r.Models) > 1 {
				who = " — failed by " + string(rune('A'+c.Model))
				if c.Flip {
					who += ", passed by " + string(rune('A'+1-c.Model))
				}
			}
			fmt.Fprintf(&b, "- case %d%s:\n", c.Case, who)
			writeCaseInputs(&b, c.CaseVerdict)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCaseInputs lists a case's original and the inputs that break it
// (all inputs of a short case), as beluga failures does.
func writeCaseInputs(b *strings.Builder, c metrics.CaseVerdict) {
	kept := 0
	for i, in := range c.Inputs {
		if len(c.Inputs) > metrics.FoldAbove && i > 0 && !in.Breaks() {
			kept++
			continue
		}
		mark := ""
		if in.Breaks() {
			mark = "✗ "
		}
		// A code span shows the text as it is; only its own backticks and
		// line breaks would end or split it.
		text := in.Text
		if in.Pair != "" {
			text += " / " + in.Pair
		}
		text = strings.NewReplacer("`", "'", "\n", " ").Replace(text)
		fmt.Fprintf(b, "  - %s`%s` → %s", mark, text, mdCell(in.Pred))
		if in.PredClass != nil && *in.PredClass >= 0 && *in.PredClass < len(in.Probs) {
			fmt.Fprintf(b, " (p=%.3f)", in.Probs[*in.PredClass])
		}
		if in.Label != "" {
			fmt.Fprintf(b, ", expected %s", mdCell(in.Label))
		}
		if in.Breaks() && in.Violation > 0 {
			fmt.Fprintf(b, "; %s", metrics.ViolationText(c.Type, in.Violation))
		}
		b.WriteString("\n")
	}
	if kept > 0 {
		fmt.Fprintf(b, "  - … and %d more perturbations that keep the expectation\n", kept)
	}
}

// WriteTestInfo writes test.json.
func WriteTestInfo(path string, t *TestInfo) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'))
}

// IsTestDir reports whether dir is a folder beluga test wrote.
func IsTestDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, TestInfoFile))
	return err == nil
}

// ReadTestDir reads a folder beluga test wrote: what it tested, the
// results and the case verdicts (cases.jsonl).
func ReadTestDir(dir string) (TestModel, error) {
	var m TestModel
	b, err := os.ReadFile(filepath.Join(dir, TestInfoFile))
	if err != nil {
		return m, fmt.Errorf("%s: not a folder beluga test wrote: %w", dir, err)
	}
	m.Info = &TestInfo{}
	if err := json.Unmarshal(b, m.Info); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, TestInfoFile), err)
	}
	path := filepath.Join(dir, TestResultsFile)
	if b, err = os.ReadFile(path); err != nil {
		return m, err
	}
	m.Result = &metrics.Result{}
	if err := json.Unmarshal(b, m.Result); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	if m.Cases, err = metrics.ReadCases(filepath.Join(dir, TestCasesFile)); err != nil {
		return m, err
	}
	if m.Calibration, err = ReadTestCalibration(dir); err != nil {
		return m, err
	}
	return m, checkCases(dir, m)
}

// checkCases refuses a case file that does not hold the results' cases.
func checkCases(dir string, m TestModel) error {
	n := map[string]int{}
	for _, c := range m.Cases {
		n[c.Functionality]++
	}
	for _, f := range m.Result.Functionalities {
		if n[f.Name] != f.Cases {
			return fmt.Errorf("%s: %s has %d cases of %q, %s says %d", dir, TestCasesFile, n[f.Name], f.Name, TestResultsFile, f.Cases)
		}
	}
	return nil
}

// ReadTestReport reads one folder beluga test wrote, or two to compare
// (the second model against the first, Compare), into their report.
func ReadTestReport(dirs ...string) (*TestReport, []TestModel, error) {
	if len(dirs) == 0 || len(dirs) > 2 {
		return nil, nil, fmt.Errorf("%d test folders (want one, or two to compare)", len(dirs))
	}
	ms := make([]TestModel, len(dirs))
	for i, d := range dirs {
		m, err := ReadTestDir(d)
		if err != nil {
			return nil, nil, err
		}
		ms[i] = m
	}
	r, err := NewTestReport(TestTitle(ms[0].Info.Model, ms[0].Info.Suite), ms...)
	return r, ms, err
}
