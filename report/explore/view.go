package explore

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

// Num is a number that is JSON null when it is NaN (no value).
type Num float64

// MarshalJSON writes null for NaN and ±Inf, else the shortest decimal.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 6, 64), nil
}

// UnmarshalJSON reads null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// View is everything the page shows except the test cases, which are read
// per functionality (CaseSet) when the page opens one.
type View struct {
	Title string `json:"title"`
	// Significance is the p-value under which a cell is marked.
	Significance float64 `json:"significance"`
	// CI is the level of the table's bootstrap intervals in percent (0: none).
	CI         float64      `json:"ci"`
	Replicates []string     `json:"replicates"`
	Table      TableView    `json:"table"`
	Tasks      []TaskView   `json:"tasks"`
	Funcs      []FuncView   `json:"funcs"`
	Runs       []RunView    `json:"runs"`
	Warnings   []string     `json:"warnings,omitempty"`
	Rows       []RowSummary `json:"rows"`
	// Footnotes explain the table's flag marks (report.Table.Footnotes).
	Footnotes []string `json:"footnotes,omitempty"`
	// Partial lists, per row, the runs of the sweep a partial report
	// lacks (report.Table.Partial), shown above the table; PartialMark
	// marks the cells they leave incomplete.
	Partial     []string `json:"partial,omitempty"`
	PartialMark string   `json:"partial_mark,omitempty"`
	// Baseline is the row every other is tested against (report.Table.
	// Baseline), -1 for none; BaselineLabel names it.
	Baseline      int    `json:"baseline"`
	BaselineLabel string `json:"baseline_label,omitempty"`
	// Groups are the per-group tables (report.Table.GroupLines), one per
	// task and held-out score; GroupFootnotes explain their marks
	// (report.Table.GroupFootnotes).
	Groups         []GroupTableView `json:"groups"`
	GroupFootnotes []string         `json:"group_footnotes,omitempty"`
	// Test is a test report (FromTest): the page draws its sections
	// instead of Table 3, the heatmap and the group tables.
	Test *report.TestReport `json:"test,omitempty"`
}

// GroupTableView is one per-group table: a task's held-out score, its
// lines (a trained row on the whole column, then on each group) and what
// their cases are.
type GroupTableView struct {
	Task  string          `json:"task"`
	Score string          `json:"score"`
	Title string          `json:"title"`
	Note  string          `json:"note"`
	Lines []GroupLineView `json:"lines"`
}

// GroupLineView is one line of a per-group table: every value on the
// group's cases, as report.GroupLine holds them, with each value's marks
// (flags, MarkTrivial), the gap's p-value and intervals when asked.
// CasesMarks are the group's balance marks (report.GroupMarks: skewed
// share of T_test, few T_test cases).
type GroupLineView struct {
	Row        int    `json:"row"`
	Group      string `json:"group"`
	Cases      int    `json:"cases"`
	CasesMarks string `json:"cases_marks,omitempty"`
	Baseline   Num    `json:"baseline"`
	Trivial    Num    `json:"constant"`
	TrivialBy  string `json:"constant_by,omitempty"`
	Seen       Num    `json:"seen"`
	SeenMarks  string `json:"seen_marks,omitempty"`
	Held       Num    `json:"held"`
	HeldMarks  string `json:"held_marks,omitempty"`
	HeldLo     Num    `json:"held_lo"`
	HeldHi     Num    `json:"held_hi"`
	Gap        Num    `json:"gap"`
	GapP       Num    `json:"gap_p"`
	GapLo      Num    `json:"gap_lo"`
	GapHi      Num    `json:"gap_hi"`
}

// RowSummary names a table row (configuration × method).
type RowSummary struct {
	Label         string `json:"label"`
	Configuration string `json:"configuration"`
	Method        string `json:"method"`
	// Reference marks a row computed, not trained (report --baselines:
	// majority class, constant predictors): never bold, never tested.
	Reference bool `json:"reference,omitempty"`
}

// TableView is Table 3: report.Table.Columns over report.Table.Rows.
type TableView struct {
	Columns []ColumnView `json:"columns"`
	// Cells[i][j] is row i's cell in column j.
	Cells [][]CellView `json:"cells"`
}

// ColumnView is one column: its header ("G_seen SENT"), measure ("G_seen",
// "IID", "Avg") and task ("" for Avg).
type ColumnView struct {
	Header  string `json:"header"`
	Measure string `json:"measure"`
	Task    string `json:"task"`
}

// CellView is one table cell: the value (mean over replicates), its
// standard error over replicates, the p-values against the baseline over
// cases (McNemar / approximate randomisation) and over seeds (paired t),
// the bootstrap interval, the significance mark (+1 / −1 / 0), whether it
// is set in bold (report.Table.Bold), the value per replicate, the runs
// that produced it, and the sanity flags of those runs.
type CellView struct {
	Value Num `json:"v"`
	SE    Num `json:"se"`
	P     Num `json:"p"`
	PSeed Num `json:"ps"`
	Lo    Num `json:"lo"`
	Hi    Num `json:"hi"`
	// Reps is the value per replicate (a seed, or a seed × axis value),
	// when there are several (report.Column.Reps).
	Reps map[string]Num `json:"reps,omitempty"`
	Mark int            `json:"mark,omitempty"`
	Best bool           `json:"best,omitempty"`
	Runs []string       `json:"runs,omitempty"`
	// FlagMarks are the cell's footnote marks as Table 3 writes them
	// (report.Column.Marks): the sanity flags of the runs behind the cell
	// (report.Row.Flags), MarkTrivial, and a metadata group column's skew
	// mark; Flags are the flags as "run kind: reason"; a flagged cell is
	// never bold.
	FlagMarks string   `json:"flag_marks,omitempty"`
	Flags     []string `json:"flags,omitempty"`
}

// TaskView is one task's interactive heatmap.
type TaskView struct {
	Name string `json:"name"`
	// Funcs are indices into View.Funcs in Figure 1's column order.
	Funcs []int `json:"funcs"`
	// Heatmap has one line per table row × figure score.
	Heatmap []HeatLine `json:"heatmap"`
}

// HeatLine is one heatmap line: a table row's pass rates for one score,
// or for one group of a metadata score (Score "meta:COLUMN=VALUE"), on
// that score's or group's cases.
type HeatLine struct {
	Row   int    `json:"row"`
	Score string `json:"score"`
	// Label names the score as the table does (target_ident=women).
	Label string `json:"label"`
	// Suite is the suite score (the mean pass rate).
	Suite Num `json:"suite"`
	// Cells follow TaskView.Funcs.
	Cells []HeatCell `json:"cells"`
}

// HeatCell is one functionality's pass rate in percent, the number of its
// cases not filtered out, and the runs (one per replicate) it comes from.
type HeatCell struct {
	Rate Num `json:"rate"`
	// Colour is the cell's fill, report.Rocket of the rate (grey: none).
	Colour string   `json:"c"`
	Cases  int      `json:"n"`
	Runs   []string `json:"runs,omitempty"`
}

// FuncView describes one functionality.
type FuncView struct {
	ID          int    `json:"id"`
	Task        string `json:"task"`
	Name        string `json:"name"`
	Class       string `json:"class"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
}

// RunView is one run: what it is, the hyper-parameters it used, its timing,
// its training curve and the warnings recorded for it.
type RunView struct {
	ID            string         `json:"id"`
	Task          string         `json:"task"`
	Configuration string         `json:"configuration"`
	Method        string         `json:"method"`
	Score         string         `json:"score"`
	Fold          string         `json:"fold,omitempty"`
	Seed          int64          `json:"seed"`
	Replicate     string         `json:"replicate"`
	Row           int            `json:"row"`
	Hyper         map[string]any `json:"hyper,omitempty"`
	// Used is the package train spec the run was trained with (its
	// hyper-parameters as resolved), without file paths.
	Used map[string]any `json:"used,omitempty"`
	// Funcs are the functionalities (View.Funcs indices) the run was scored on.
	Funcs      []int              `json:"funcs"`
	IIDMetrics map[string]float64 `json:"iid_metrics,omitempty"`
	Seconds    Num                `json:"seconds"`
	Start      string             `json:"start,omitempty"`
	Host       string             `json:"host,omitempty"`
	// Curve is the stored training curve, thinned to at most CurvePoints
	// points per batch kind (each the mean of its stretch of updates).
	Curve []CurvePoint `json:"curve,omitempty"`
	// Warnings are the run's sanity flags (result.json) and the findings
	// of the input checks its trainer ran (train/input_checks.json:
	// overlaps, unknown tokens, truncation), each "kind: reason".
	Warnings []string `json:"warnings,omitempty"`
	// Coverage is the tokenizer's coverage of each data set the run read
	// (inputcheck.Coverage in words: rows, unknown tokens, truncation).
	Coverage []string `json:"coverage,omitempty"`
}

// CurvePoint is one point of a thinned training curve.
type CurvePoint struct {
	Step int    `json:"s"`
	Kind string `json:"k"`
	Loss Num    `json:"l"`
}

// CurvePoints is the most points per batch kind a run's curve keeps.
const CurvePoints = 200

// Options control what Build reads.
type Options struct {
	// Report passes the table's options (trials, seed, intervals).
	Report report.Options
	// Title heads the page (default: the store directory's name).
	Title string
}

// Source is a store read for the page: its view and every run's cases.
type Source struct {
	View *View
	// Table is the table the view shows, for the other formats.
	Table *report.Table
	// suites[task] is the suite opened for the task, nil when its file
	// could not be read (descriptions, texts, splits); index caches where
	// each functionality's lines are in every case file read.
	store   *experiments.Store
	funcIDs map[string]map[string]int // task → name → View.Funcs index
	suites  map[string]*suites.Suite
	index   caseIndex
	// caseFiles are the case files of runs outside a store (FromResult).
	caseFiles map[string]string
}

// Build reads the done runs among runs of a store into a Source: Table 3
// and Figure 1's pass rates from report.FromStore, each run's spec, timing,
// curve and scored functionalities from its directory, and functionality
// descriptions from the suite its trainer read (when that file is still
// there).
func Build(store *experiments.Store, runs []experiments.Run, opt Options) (*Source, error) {
	tab, err := report.FromStore(store, runs, opt.Report)
	if err != nil {
		return nil, err
	}
	return build(store, tab, runs, opt)
}

func build(store *experiments.Store, tab *report.Table, runs []experiments.Run, opt Options) (*Source, error) {
	// The table's runs: done, search runs left out.
	var done []experiments.Run
	for _, r := range runs {
		if !experiments.IsSearchScore(r.Score) && !tab.Lacks(r.ID()) && store.State(r.ID()) == experiments.Done {
			done = append(done, r)
		}
	}
	title := opt.Title
	if title == "" {
		title = filepath.Base(filepath.Clean(store.Dir))
	}
	src := &Source{Table: tab, store: store, funcIDs: map[string]map[string]int{},
		suites: map[string]*suites.Suite{}}
	v := &View{Title: title, Significance: report.Significance, CI: tab.CI, Replicates: tab.Replicates}
	if lines := tab.Partial(); len(lines) > 0 {
		// The runs beluga report --partial names, above the table.
		v.Partial, v.PartialMark = lines, report.MarkIncomplete
	}
	src.View = v
	rowOf := map[[3]string]int{} // configuration, method, axes → row
	for i, r := range tab.Rows {
		rowOf[[3]string{r.Configuration, r.Method, r.Axes}] = i
		v.Rows = append(v.Rows, RowSummary{Label: r.Label(), Configuration: r.Configuration, Method: r.Method, Reference: r.Reference})
	}
	// Functionalities in suite order per task.
	for _, task := range tab.Tasks {
		src.funcIDs[task] = map[string]int{}
		for _, f := range tab.Functionalities[task] {
			src.funcIDs[task][f.Name] = len(v.Funcs)
			v.Funcs = append(v.Funcs, FuncView{ID: len(v.Funcs), Task: task, Name: f.Name, Class: f.Class, Type: f.Type})
		}
	}
	// Runs.
	type cellKey struct {
		task  string
		row   int
		score string
	}
	type foldKey struct {
		task  string
		row   int
		score string
		fold  string
	}
	cellRuns := map[cellKey][]string{}
	heatRuns := map[cellKey]map[int][]string{} // → func id → runs
	funcCases := map[cellKey]map[int]int{}
	foldRuns := map[foldKey]map[int][]string{} // a metadata group's runs, by func id
	foldCases := map[foldKey]map[int]int{}
	for _, r := range done {
		id := r.ID()
		dir := store.RunDir(id)
		res, err := experiments.ReadResult(dir)
		if err != nil {
			return nil, fmt.Errorf("run %s (%s): %w", id, r.Label(), err)
		}
		row := rowOf[[3]string{r.Configuration, r.Method, r.Axes()}]
		rv := RunView{ID: id, Task: r.Task, Configuration: r.Configuration, Method: r.Method, Score: r.Score,
			Fold: r.Fold, Seed: r.Seed, Replicate: report.Replicate(r), Row: row, Hyper: r.SweptValues(),
			IIDMetrics: res.IIDMetrics, Seconds: Num(math.NaN())}
		k := cellKey{r.Task, row, r.Score}
		cellRuns[k] = append(cellRuns[k], id)
		if heatRuns[k] == nil {
			heatRuns[k], funcCases[k] = map[int][]string{}, map[int]int{}
		}
		for _, f := range res.Functionalities {
			fid, ok := src.funcIDs[r.Task][f.Name]
			if !ok {
				continue
			}
			rv.Funcs = append(rv.Funcs, fid)
			heatRuns[k][fid] = append(heatRuns[k][fid], id)
			n := 0
			for i := 0; i < len(f.Verdicts); i++ {
				if f.Verdicts[i] != experiments.Filtered {
					n++
				}
			}
			funcCases[k][fid] = n
			if r.Fold != "" {
				fk := foldKey{r.Task, row, r.Score, r.Fold}
				if foldRuns[fk] == nil {
					foldRuns[fk], foldCases[fk] = map[int][]string{}, map[int]int{}
				}
				foldRuns[fk][fid] = append(foldRuns[fk][fid], id)
				foldCases[fk][fid] = n
			}
		}
		if err := readRunExtras(dir, &rv, src, r.Task); err != nil {
			return nil, fmt.Errorf("run %s (%s): %w", id, r.Label(), err)
		}
		v.Runs = append(v.Runs, rv)
	}
	// Table 3, from package report.
	cols := tab.Columns()
	bold := tab.Bold(cols)
	v.Footnotes = tab.Footnotes()
	for _, c := range cols {
		m, task := report.SplitHeader(c.Header)
		v.Table.Columns = append(v.Table.Columns, ColumnView{Header: c.Header, Measure: m, Task: task})
	}
	for i, r := range tab.Rows {
		line := make([]CellView, len(cols))
		for j, c := range cols {
			iv := c.CI(r)
			val := c.Value(r)
			cv := CellView{Value: Num(val), SE: Num(c.SE(r)), P: Num(c.P(r)), PSeed: Num(c.PSeeds(r)),
				Lo: Num(iv.Lo), Hi: Num(iv.Hi), Mark: tab.Mark(c, r), Best: !math.IsNaN(val) && bold(j, r)}
			if reps := c.Reps(r); len(reps) > 1 {
				cv.Reps = map[string]Num{}
				for rep, x := range reps {
					cv.Reps[rep] = Num(x)
				}
			}
			if fs := c.Flags(r); !math.IsNaN(val) || report.Incomplete(fs) {
				cv.FlagMarks = c.Marks(r)
				for _, f := range fs {
					cv.Flags = append(cv.Flags, f.Run+" "+f.Kind+": "+f.Reason)
				}
			}
			m, task := report.SplitHeader(c.Header)
			if m == "Avg" {
				line[j] = cv
				continue
			}
			for _, score := range columnScores(m, r.Configuration == experiments.ConfigIID) {
				for _, t := range tab.Tasks {
					if task == "" || t == task {
						cv.Runs = append(cv.Runs, cellRuns[cellKey{t, i, score}]...)
					}
				}
			}
			line[j] = cv
		}
		v.Table.Cells = append(v.Table.Cells, line)
	}
	// Figure 1 as a grid, from the same table: per row a line per figure
	// score (report.Table.FigureScores), a metadata score's groups
	// included, each on its cases; the baseline's lines are its own
	// verdicts on those cases, so a line is kept only where it differs
	// from its first (its whole-suite line).
	scores := tab.FigureScores()
	for _, task := range tab.Tasks {
		tv := TaskView{Name: task}
		for _, k := range tab.FigureOrder(task) {
			tv.Funcs = append(tv.Funcs, src.funcIDs[task][tab.Functionalities[task][k].Name])
		}
		for i, r := range tab.Rows {
			var first []float64
			for si, score := range scores {
				suite, rates := tab.FigureValues(r, task, score)
				meta, group, isGroup := tab.FigureGroup(score)
				from := cellKey{task, i, meta}
				baseline := r.Configuration == experiments.ConfigIID || r.Reference
				if r.Configuration == experiments.ConfigIID {
					from.score = experiments.ScoreIID
				}
				if baseline && si > 0 && slices.EqualFunc(first, rates, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
					continue // the baseline's pass rates on these cases are those of its first line
				}
				if si == 0 {
					first = rates
				}
				hl := HeatLine{Row: i, Score: score, Label: report.ScoreLabel(score), Suite: Num(suite)}
				for _, k := range tab.FigureOrder(task) {
					fid := src.funcIDs[task][tab.Functionalities[task][k].Name]
					rate := math.NaN()
					if k < len(rates) {
						rate = rates[k]
					}
					col := report.Rocket(rate / 100)
					runs := heatRuns[from][fid]
					cases := funcCases[from][fid]
					if isGroup && !baseline {
						runs, cases = foldRuns[foldKey{task, i, meta, group}][fid], foldCases[foldKey{task, i, meta, group}][fid]
					}
					hl.Cells = append(hl.Cells, HeatCell{Rate: Num(rate), Colour: fmt.Sprintf("#%02x%02x%02x", col.R, col.G, col.B), Cases: cases, Runs: runs})
				}
				tv.Heatmap = append(tv.Heatmap, hl)
			}
		}
		v.Tasks = append(v.Tasks, tv)
	}
	// The per-group tables, from the same table.
	v.Baseline = -1
	if b := tab.Baseline(); b != nil {
		v.Baseline = slices.Index(tab.Rows, b)
		v.BaselineLabel = b.Label()
	}
	v.Groups = []GroupTableView{}
	lines := tab.GroupLines()
	v.GroupFootnotes = tab.GroupFootnotes(lines)
	for _, l := range lines {
		if n := len(v.Groups); n == 0 || v.Groups[n-1].Task != l.Task || v.Groups[n-1].Score != l.Score {
			name, cases := tab.CaseSet(l.Task, l.Score, "")
			if name == "" {
				name = fmt.Sprintf("the whole suite (%d cases)", cases)
			}
			v.Groups = append(v.Groups, GroupTableView{Task: l.Task, Score: l.Score, Title: l.Task + ", held out by " + report.ScoreLabel(l.Score),
				Note: "Suite scores (T_test pass rates, %) on each group's cases; the first line of a row is the whole column, on " + name + ". Gap = seen − held out; p: approximate randomisation of the seen run against the held-out folds on the same cases."})
		}
		g := &v.Groups[len(v.Groups)-1]
		g.Lines = append(g.Lines, GroupLineView{Row: slices.Index(tab.Rows, l.Row), Group: l.Group, Cases: l.Cases, CasesMarks: report.GroupMarks(l),
			Baseline: Num(l.Baseline.Value), Trivial: Num(l.Trivial), TrivialBy: l.TrivialBy,
			Seen: Num(l.Seen.Value), SeenMarks: report.CellMarks(l.Row, l.Seen), Held: Num(l.HeldOut.Value), HeldMarks: report.CellMarks(l.Row, l.HeldOut),
			HeldLo: Num(l.HeldOut.CI.Lo), HeldHi: Num(l.HeldOut.CI.Hi), Gap: Num(l.Gap.Value), GapP: Num(l.Gap.P), GapLo: Num(l.Gap.CI.Lo), GapHi: Num(l.Gap.CI.Hi)})
	}
	// Descriptions from the suites.
	for i := range v.Funcs {
		f := &v.Funcs[i]
		if s := src.suites[f.Task]; s != nil {
			for _, sf := range s.Functionalities {
				if sf.Name == f.Name {
					f.Description = sf.Description
				}
			}
		}
	}
	return src, nil
}

// columnScores lists the run scores a row's value in a column is computed
// from: the baseline's all come from its one i.i.d. run; a trained row's
// i.i.d. score comes from its seen run, and its G of a score from the seen
// run's i.i.d. score and that score's runs' pass rates.
func columnScores(measure string, baseline bool) []string {
	if baseline {
		return []string{experiments.ScoreIID}
	}
	switch {
	case measure == "IID", strings.HasPrefix(measure, "IID:"):
		// The i.i.d. score and the evaluation sets' are the seen run's.
		return []string{experiments.ScoreSeen}
	case measure == "Avg":
		return nil
	}
	for _, s := range experiments.Scores {
		switch measure {
		case "T_" + s:
			return []string{s}
		case "G_" + s:
			if s == experiments.ScoreSeen {
				return []string{s}
			}
			return []string{experiments.ScoreSeen, s}
		}
	}
	return nil
}

// trainSpec is what the adapter reads of a run's train_spec.json.
type trainSpec struct {
	Suite string `json:"suite"`
}

// pathKeys are train spec fields that name files on the machine that
// trained, left out of RunView.Used.
var pathKeys = []string{"suite", "iid_train", "iid_dev", "iid_test", "from_iid", "out", "model"}

// readRunExtras fills a run's timing, train spec, curve, warnings and input
// coverage, and opens its task's suite the first time one is met.
func readRunExtras(dir string, rv *RunView, src *Source, task string) error {
	if b, err := os.ReadFile(filepath.Join(dir, experiments.TimingFile)); err == nil {
		var t experiments.Timing
		if err := json.Unmarshal(b, &t); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, experiments.TimingFile), err)
		}
		rv.Seconds, rv.Host = Num(t.Seconds), t.Host
		if !t.Start.IsZero() {
			rv.Start = t.Start.UTC().Format("2006-01-02 15:04:05Z")
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, experiments.TrainSpecFile)); err == nil {
		path := filepath.Join(dir, experiments.TrainSpecFile)
		var used map[string]any
		if err := json.Unmarshal(b, &used); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var ts trainSpec
		_ = json.Unmarshal(b, &ts) // the same bytes decoded above
		if _, seen := src.suites[task]; !seen && ts.Suite != "" {
			// A suite that moved or is gone leaves descriptions and (for
			// case files written before they carried texts) texts out.
			s, err := suites.Open(ts.Suite)
			if err != nil {
				src.View.Warnings = append(src.View.Warnings, fmt.Sprintf("task %s: suite not read (%v): no descriptions", task, err))
			}
			src.suites[task] = s
		}
		for _, k := range pathKeys {
			if k == "model" {
				if m, ok := used[k].(map[string]any); ok {
					delete(m, "vocab")
					delete(m, "path")
				}
				continue
			}
			delete(used, k)
		}
		rv.Used = used
	}
	if path, err := report.FindCurve(dir); err == nil {
		curve, err := report.ReadCurve(path)
		if err != nil {
			return err
		}
		rv.Curve = thin(curve, CurvePoints)
	}
	w, err := readWarnings(filepath.Join(dir, experiments.ResultFile))
	if err != nil {
		return err
	}
	rv.Warnings = w
	return readInputChecks(filepath.Join(dir, "train", train.InputChecksFile), rv)
}

// readInputChecks adds the input checks a run's trainer stored, when it
// stored them, to the run's coverage and warnings.
func readInputChecks(path string, rv *RunView) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var r inputcheck.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, c := range r.Coverage {
		rv.Coverage = append(rv.Coverage, c.String())
	}
	for _, f := range r.Findings {
		rv.Warnings = append(rv.Warnings, "input check "+f.Check+": "+f.Message)
	}
	return nil
}

// readWarnings reads the flags a result may carry beside its verdicts
// (constant predictions, a suite never learnt, tokenizer coverage): any
// "warnings" or "flags" list of strings or of objects, shown as "kind:
// reason" (package experiments' Flag) or their "message".
func readWarnings(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	for _, key := range []string{"warnings", "flags"} {
		m, ok := raw[key]
		if !ok {
			continue
		}
		var list []json.RawMessage
		if err := json.Unmarshal(m, &list); err != nil {
			return nil, fmt.Errorf("%s: field %s: %w", path, key, err)
		}
		for _, item := range list {
			var s string
			if json.Unmarshal(item, &s) == nil {
				out = append(out, s)
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal(item, &obj); err != nil {
				return nil, fmt.Errorf("%s: field %s: %w", path, key, err)
			}
			kind, _ := obj["kind"].(string)
			msg, ok := obj["reason"].(string)
			if !ok {
				msg, ok = obj["message"].(string)
			}
			switch {
			case ok && kind != "":
				out = append(out, kind+": "+msg)
			case ok:
				out = append(out, msg)
			default:
				b, _ := json.Marshal(obj)
				out = append(out, string(b))
			}
		}
	}
	return out, nil
}

// thin keeps at most n points per batch kind, each the mean loss of its
// stretch of consecutive updates of that kind (a non-finite loss, stored as
// −1, is left out of the mean).
func thin(curve []report.CurvePoint, n int) []CurvePoint {
	byKind := map[string][]report.CurvePoint{}
	var kinds []string
	for _, p := range curve {
		if _, ok := byKind[p.Kind]; !ok {
			kinds = append(kinds, p.Kind)
		}
		byKind[p.Kind] = append(byKind[p.Kind], p)
	}
	var out []CurvePoint
	for _, k := range kinds {
		pts := byKind[k]
		size := (len(pts) + n - 1) / n
		for i := 0; i < len(pts); i += size {
			end := min(i+size, len(pts))
			sum, m := 0.0, 0
			for _, p := range pts[i:end] {
				if p.Loss >= 0 {
					sum += p.Loss
					m++
				}
			}
			l := math.NaN()
			if m > 0 {
				l = sum / float64(m)
			}
			out = append(out, CurvePoint{Step: pts[end-1].Step, Kind: k, Loss: Num(l)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Step < out[j].Step })
	return out
}

// FromDir reads every done run of a store directory for the page, its
// table as `beluga report DIR` builds it (report.FromDir).
func FromDir(dir string, opt Options) (*Source, error) {
	tab, err := report.FromDir(dir, opt.Report)
	if err != nil {
		return nil, err
	}
	store := &experiments.Store{Dir: dir}
	runs, err := store.Runs()
	if err != nil {
		return nil, err
	}
	return build(store, tab, runs, opt)
}

// errNoCases marks a run without a case file.
var errNoCases = errors.New("no case file")

// scanLines calls fn on every line of a file (blank ones too) with its
// 1-based number.
func scanLines(path string, fn func(line []byte, n int) error) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errNoCases
		}
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(sc.Bytes(), n); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
