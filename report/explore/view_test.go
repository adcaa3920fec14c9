package explore

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

var fastReport = report.Options{Trials: 200}

func same(a float64, b Num) bool {
	return (math.IsNaN(a) && math.IsNaN(float64(b))) || a == float64(b)
}

// Every number of the table and the heatmap is package report's: the view
// copies Table 3's cells (value, p-value, mark) and Figure 1's pass rates.
func TestViewIsTheTable(t *testing.T) {
	store, runs := sharedFixture(t)
	src, err := Build(store, runs, Options{Report: fastReport})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := report.FromStore(store, runs, fastReport)
	if err != nil {
		t.Fatal(err)
	}
	v := src.View
	cols := tab.Columns()
	if len(v.Table.Columns) != len(cols) || len(v.Table.Cells) != len(tab.Rows) {
		t.Fatalf("view table %d×%d, report table %d×%d", len(v.Table.Cells), len(v.Table.Columns), len(tab.Rows), len(cols))
	}
	marks := 0
	for i, r := range tab.Rows {
		for j, c := range cols {
			cell := v.Table.Cells[i][j]
			if !same(c.Value(r), cell.Value) || !same(c.P(r), cell.P) {
				t.Errorf("row %s column %s: view %v (p %v), table %v (p %v)", r.Label(), c.Header, cell.Value, cell.P, c.Value(r), c.P(r))
			}
			if cell.Mark != tab.Mark(c, r) {
				t.Errorf("row %s column %s: mark %d, want %d", r.Label(), c.Header, cell.Mark, tab.Mark(c, r))
			}
			if cell.Mark != 0 {
				marks++
			}
			if c.Header != "Avg" && !math.IsNaN(c.Value(r)) && len(cell.Runs) == 0 {
				t.Errorf("row %s column %s links to no run", r.Label(), c.Header)
			}
		}
	}
	if marks == 0 {
		t.Error("no cell is marked significant: the fixture's lp rows are 20 points worse")
	}
	checked := 0
	for ti, task := range v.Tasks {
		for _, line := range task.Heatmap {
			row := tab.Rows[line.Row]
			rates := tab.PassRates(row, tab.Tasks[ti], line.Score, "")
			for k, fid := range task.Funcs {
				want := rates[indexOf(tab.Functionalities[tab.Tasks[ti]], v.Funcs[fid].Name)]
				if c := line.Cells[k]; !same(want, c.Rate) || (!math.IsNaN(want) && (len(c.Runs) != 1 || c.Cases == 0)) {
					t.Errorf("%s %s %s: cell %+v, want rate %v from one run", row.Label(), line.Score, v.Funcs[fid].Name, c, want)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("empty heatmap")
	}
}

func indexOf(fs []report.Functionality, name string) int {
	for i, f := range fs {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// A functionality's cases carry each run's verdicts exactly as the run's
// result.json holds them, from case files of both formats, with texts and
// predictions where the file has them.
func TestCasesMatchResults(t *testing.T) {
	src := fixtureSource(t)
	withPred, without := 0, 0
	for fid, f := range src.View.Funcs {
		cs, err := src.Cases(fid)
		if err != nil {
			t.Fatal(err)
		}
		for id, rc := range cs.Runs {
			res, err := experiments.ReadResult(src.store.RunDir(id))
			if err != nil {
				t.Fatal(err)
			}
			var want string
			for _, fr := range res.Functionalities {
				if fr.Name == f.Name {
					want = fr.Verdicts
				}
			}
			if rc.V != want {
				t.Errorf("run %s %q: verdicts %q, result.json %q", id, f.Name, rc.V, want)
			}
			if rc.Pred != nil {
				withPred++
			} else {
				without++
			}
		}
		if len(cs.Cases) == 0 || cs.Cases[0].ID != 1 || len(cs.Cases[0].Inputs) == 0 {
			t.Errorf("%q: first case %+v, want id 1 with its text", f.Name, cs.Cases[:min(1, len(cs.Cases))])
		}
	}
	if withPred == 0 || without == 0 {
		t.Errorf("%d runs with predictions, %d without: the fixture has both formats", withPred, without)
	}
}

func TestSelect(t *testing.T) {
	cs := &CaseSet{Cases: []CaseView{
		{ID: 1, Split: "test", Meta: json.RawMessage(`{"template":"a"}`), Inputs: []InputView{{Text: "Good film"}}},
		{ID: 3, Split: "dev", Meta: json.RawMessage(`{"template":"b"}`), Inputs: []InputView{{Text: "bad film", Pair: "other"}}},
		{ID: 5, Split: "test", Meta: json.RawMessage(`{"template":"a"}`), Inputs: []InputView{{Text: "fine"}}},
		{ID: 7, Split: "test", Inputs: []InputView{{Text: "FILM noir"}}},
	}, Runs: map[string]*RunCases{"base": {V: "FPFP"}, "held": {V: "PF-F"}}}
	ids := func(p Page) string {
		var s []string
		for _, r := range p.Rows {
			s = append(s, string(rune('0'+r.Case.ID)))
		}
		return strings.Join(s, "")
	}
	for _, tc := range []struct {
		name string
		q    Query
		want string
		tot  int
	}{
		// The focus (last) run's failures first, then by failing runs.
		{"failing first", Query{Runs: []string{"base", "held"}}, "3715", 4},
		{"failing first, focus base", Query{Runs: []string{"held", "base"}}, "1537", 4},
		{"failing first, by count", Query{Runs: []string{"held", "base"}, Focus: "held"}, "3715", 4},
		// Two models compared: the cases one passes and the other fails
		// first (5: base fails, held filtered it).
		{"flips first", Query{Runs: []string{"held", "base"}, FlipsFirst: true}, "1375", 4},
		{"verdict of the last run", Query{Runs: []string{"base", "held"}, Verdict: "F"}, "37", 2},
		{"verdict of a named run", Query{Runs: []string{"base", "held"}, Focus: "base", Verdict: "F"}, "15", 2},
		{"filtered", Query{Runs: []string{"base", "held"}, Verdict: "-"}, "5", 1},
		{"split", Query{Runs: []string{"held"}, Split: "dev"}, "3", 1},
		{"metadata", Query{Runs: []string{"held"}, Meta: [2]string{"template", "a"}}, "15", 2},
		{"search is case-insensitive", Query{Runs: []string{"base"}, Search: "film"}, "137", 3},
		{"search reads pairs", Query{Runs: []string{"base"}, Search: "OTHER"}, "3", 1},
		{"paged", Query{Runs: []string{"base"}, Offset: 1, Limit: 2}, "53", 4},
		{"unknown run", Query{Runs: []string{"nope"}, Verdict: "F"}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := cs.Select(tc.q)
			if got := ids(p); got != tc.want || p.Total != tc.tot {
				t.Errorf("cases %q of %d, want %q of %d", got, p.Total, tc.want, tc.tot)
			}
		})
	}
	p := cs.Select(Query{Runs: []string{"base"}})
	if strings.Join(p.Splits, ",") != "dev,test" || strings.Join(p.Meta["template"], ",") != "a,b" {
		t.Errorf("facets %v %v", p.Splits, p.Meta)
	}
}

// A broken case file is refused with its path and line's byte offset, not
// shown as empty.
func TestBadCaseFile(t *testing.T) {
	store, runs := fixture(t) // its own: the test breaks a file
	src, err := Build(store, runs, Options{Report: fastReport})
	if err != nil {
		t.Fatal(err)
	}
	run := src.View.Runs[1].ID
	path := src.casesPath(run)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, edit, want string }{
		{"not JSON", strings.Replace(string(b), "{", "{oops", 1), "cases.jsonl:1"},
		{"unknown verdict", strings.Replace(string(b), `"verdict":"pass"`, `"verdict":"maybe"`, 1), "field verdict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tc.edit), 0o644); err != nil {
				t.Fatal(err)
			}
			src.index.spans = nil
			var err error
			for fid := range src.View.Funcs {
				if _, err = src.Cases(fid); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Base(path)) {
				t.Errorf("error %v, want one naming %s and %q", err, path, tc.want)
			}
		})
	}
}

// Sanity flags recorded in result.json (metrics.Flag: kind, reason,
// figures) are shown as the run's warnings; a result without them has none.
func TestWarningsFromResult(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, json, want string }{
		{"none", `{"functionalities":[]}`, ""},
		{"flags", `{"flags":[{"kind":"constant_iid","reason":"predicts positive for 100% of 872 examples","figures":{"share":1}}]}`,
			"constant_iid: predicts positive for 100% of 872 examples"},
		{"strings", `{"warnings":["coverage: 3% unknown tokens"]}`, "coverage: 3% unknown tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".json")
			if err := os.WriteFile(path, []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readWarnings(path)
			if err != nil || strings.Join(got, "|") != tc.want {
				t.Errorf("warnings %q (%v), want %q", got, err, tc.want)
			}
		})
	}
	path := filepath.Join(dir, "bad.json")
	os.WriteFile(path, []byte(`{"flags": 3}`), 0o644)
	if _, err := readWarnings(path); err == nil || !strings.Contains(err.Error(), "bad.json") || !strings.Contains(err.Error(), "flags") {
		t.Errorf("flags: 3 gives %v, want an error naming the file and field", err)
	}
}

// A run's sanity flags mark the cells it is behind, as in the Markdown
// table: footnote marks, the flag in words, never bold; and the run's page
// lists them as warnings.
func TestFlaggedCells(t *testing.T) {
	store, runs := fixture(t)
	var seen experiments.Run
	for _, r := range runs {
		if r.Score == experiments.ScoreSeen && r.Method == "vanilla" && r.Task == "SENT" {
			seen = r
			break
		}
	}
	res, err := experiments.ReadResult(store.RunDir(seen.ID()))
	if err != nil {
		t.Fatal(err)
	}
	res.Flags = []metrics.Flag{{Kind: metrics.FlagConstantIID, Reason: "predicts positive for all 300 examples"}}
	if err := experiments.WriteResult(store.RunDir(seen.ID()), res); err != nil {
		t.Fatal(err)
	}
	experimentstest.Reseal(t, store.RunDir(seen.ID()))
	src, err := Build(store, runs, Options{Report: fastReport})
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for i, line := range src.View.Table.Cells {
		for j, c := range line {
			if !slices.Contains(c.Runs, seen.ID()) || c.Value != c.Value {
				continue
			}
			if c.FlagMarks == "" || len(c.Flags) == 0 || !strings.Contains(c.Flags[0], "predicts positive") || c.Best {
				t.Errorf("row %d column %s behind the flagged run: %+v", i, src.View.Table.Columns[j].Header, c)
			}
			flagged++
		}
	}
	if flagged == 0 || len(src.View.Footnotes) == 0 {
		t.Errorf("%d flagged cells, footnotes %q", flagged, src.View.Footnotes)
	}
	for _, r := range src.View.Runs {
		if r.ID == seen.ID() && (len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], metrics.FlagConstantIID+": ")) {
			t.Errorf("run %s warnings %q", r.ID, r.Warnings)
		}
	}
}

// The input checks a run's trainer stored (train/input_checks.json) are on
// its page: the tokenizer's coverage of each data set, and each finding
// (unknown tokens, truncation, overlaps) among its warnings; a run without
// the file has neither.
func TestInputChecksOfRun(t *testing.T) {
	store, runs := fixture(t)
	var bad, none experiments.Run
	for _, r := range runs {
		switch {
		case r.Score == experiments.ScoreSeen && bad.Task == "":
			bad = r
		case r.Score == experiments.ScoreIID && none.Task == "":
			none = r
		}
	}
	checks := &inputcheck.Report{}
	checks.AddCoverage(inputcheck.Coverage{Data: "suite sentiment", Rows: 300, Words: 2400, Tokens: 2700, Unknown: 540,
		UnknownRate: 0.2, Truncated: 90, TruncatedRate: 0.3, MaxLength: 32, TokensPerWord: 1.125}, false)
	if err := writeInputChecks(store.RunDir(bad.ID()), checks); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(store.RunDir(none.ID()), "train", train.InputChecksFile)); err != nil {
		t.Fatal(err)
	}
	experimentstest.Reseal(t, store.RunDir(bad.ID()))
	experimentstest.Reseal(t, store.RunDir(none.ID()))
	src, err := Build(store, runs, Options{Report: fastReport})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, r := range src.View.Runs {
		switch r.ID {
		case bad.ID():
			found++
			if len(r.Coverage) != 1 || !strings.Contains(r.Coverage[0], "suite sentiment: 300 rows, [UNK] 20.0% of 2700 tokens") {
				t.Errorf("run %s coverage %q", r.ID, r.Coverage)
			}
			w := strings.Join(r.Warnings, "|")
			if !strings.Contains(w, "input check unknown_tokens: suite sentiment: 20.0%") || !strings.Contains(w, "input check truncation: suite sentiment: 30.0%") {
				t.Errorf("run %s warnings %q, want the unknown-token and truncation findings", r.ID, r.Warnings)
			}
		case none.ID():
			found++
			if len(r.Coverage) != 0 || len(r.Warnings) != 0 {
				t.Errorf("run %s without input checks: coverage %q, warnings %q", r.ID, r.Coverage, r.Warnings)
			}
		default:
			if len(r.Coverage) != 1 || len(r.Warnings) != 0 {
				t.Errorf("run %s: coverage %q, warnings %q, want the fixture's one line and no finding", r.ID, r.Coverage, r.Warnings)
			}
		}
	}
	if found != 2 {
		t.Fatalf("runs %s and %s not in the view", bad.ID(), none.ID())
	}
	if err := os.WriteFile(filepath.Join(store.RunDir(bad.ID()), "train", train.InputChecksFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(store, runs, Options{Report: fastReport}); err == nil || !strings.Contains(err.Error(), train.InputChecksFile) {
		t.Errorf("a broken input_checks.json gives %v, want an error naming it", err)
	}
}

// Each functionality's description comes from the suite file the runs'
// trainer read (train_spec.json's suite), when it can be read.
func TestDescriptionsFromSuite(t *testing.T) {
	store, runs := fixture(t)
	src, err := Build(store, runs, Options{Report: fastReport})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.View.Warnings) == 0 || !strings.Contains(src.View.Warnings[0], "no descriptions") {
		t.Errorf("the fixture's missing suite: warnings %q, want one saying there are no descriptions", src.View.Warnings)
	}
	s := &suites.Suite{Name: "sentiment", Labels: []string{"negative", "positive"}}
	for i, f := range src.View.Funcs {
		if f.Task != "SENT" || slices.ContainsFunc(s.Functionalities, func(g *suites.Functionality) bool { return g.Name == f.Name }) {
			continue
		}
		typ, expect := suites.TestType(f.Type), suites.DefaultExpectation(suites.TestType(f.Type))
		if typ == suites.DIR {
			expect = suites.Expectation{Kind: suites.ExpectMonotonic, Increasing: true, Tolerance: 0.1, Agg: suites.AggAllExceptFirst}
		}
		s.Functionalities = append(s.Functionalities, &suites.Functionality{Name: f.Name, Class: f.Class, Type: typ,
			Description: "what " + f.Name + " tests", Expect: expect,
			Cases: []*suites.Case{{ID: i, Inputs: []suites.Input{{Text: "a fine film"}, {Text: "a fine movie"}}, Labels: []suites.Label{suites.ClassLabel(1)}}}})
	}
	path := filepath.Join(t.TempDir(), "sentiment.jsonl")
	var b strings.Builder
	if err := suites.Write(&b, s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Task != "SENT" {
			continue
		}
		p := filepath.Join(store.RunDir(r.ID()), experiments.TrainSpecFile)
		b, err := os.ReadFile(p)
		if err != nil {
			continue // a search run, not run
		}
		var ts map[string]any
		if err := json.Unmarshal(b, &ts); err != nil {
			t.Fatal(err)
		}
		ts["suite"] = path
		if b, err = json.Marshal(ts); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		experimentstest.Reseal(t, store.RunDir(r.ID()))
	}
	if src, err = Build(store, runs, Options{Report: fastReport}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range src.View.Funcs {
		want := ""
		if f.Task == "SENT" {
			want = "what " + f.Name + " tests"
			n++
		}
		if f.Description != want {
			t.Errorf("%s %q: description %q, want %q", f.Task, f.Name, f.Description, want)
		}
	}
	if n == 0 {
		t.Fatal("no SENT functionality in the view")
	}
	// The case sets name the suite's classes, the order of every
	// prediction's probabilities.
	for fid, f := range src.View.Funcs {
		if f.Task != "SENT" {
			continue
		}
		cs, err := src.Cases(fid)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cs.Labels, s.Labels) {
			t.Errorf("%s: case labels %v, want the suite's %v", f.Name, cs.Labels, s.Labels)
		}
		break
	}
	for _, w := range src.View.Warnings {
		if strings.HasPrefix(w, "task SENT") {
			t.Errorf("the suite read: warning %q", w)
		}
	}
}

// The tests' environment variables name paths from the repository root, as
// the README's commands give them (BELUGA_EXPLORE_STORE=quickstart-out), not
// from this package's directory, where go test runs.
func TestRootPath(t *testing.T) {
	if _, err := os.Stat(filepath.Join(rootPath("report"), "explore", "doc.go")); err != nil {
		t.Errorf("rootPath(report): %v", err)
	}
	if abs := filepath.Join(t.TempDir(), "store"); rootPath(abs) != abs || rootPath("") != "" {
		t.Errorf("rootPath changes %q or the empty path", abs)
	}
}
