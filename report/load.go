package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
)

// A table is computed from the runs of a sweep that are done. A run that
// is not — missing (never launched), incomplete, running, failed, stale
// (its inputs changed since it ran: it measured other data) or damaged
// (its files are not what its done marker recorded) — is a gap: FromStore
// refuses a sweep with gaps, naming each, unless Options.Partial, which
// builds the table without them and marks every cell a gap leaves
// incomplete (MarkIncomplete, explained in a footnote). Runs of one task
// that read different content for one input (two versions of a suite) are
// refused unless Options.MixedInputs: their numbers are not comparable.

// Gap is a run of the sweep a table has no result of, and why.
type Gap struct {
	Run    experiments.Run
	State  experiments.State
	Reason string
	// Dir is the run's directory in the store.
	Dir string
}

// IncompleteError refuses a sweep with gaps (Options.Partial reports it).
type IncompleteError struct {
	Store string
	Total int
	Gaps  []Gap
}

func (e *IncompleteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "run store %s lacks %d of the sweep's %d runs (beluga report --partial writes the table without them, marking each cell they leave incomplete %s):", e.Store, len(e.Gaps), e.Total, MarkIncomplete)
	for _, line := range gapLines(e.Gaps) {
		b.WriteString("\n  " + line)
	}
	return b.String()
}

// gapLines lists gaps per row (configuration × method), in the sweep's
// order: the row, then one line per run with its state and why.
func gapLines(gaps []Gap) []string {
	var rows []string
	byRow := map[string][]string{}
	for _, g := range gaps {
		r := g.Run
		row := (&Row{Configuration: r.Configuration, Method: r.Method, Axes: r.Axes()}).Label()
		if _, ok := byRow[row]; !ok {
			rows = append(rows, row)
		}
		byRow[row] = append(byRow[row], "  "+runGapText(g))
	}
	var out []string
	for _, row := range rows {
		out = append(out, row+":")
		out = append(out, byRow[row]...)
	}
	return out
}

// runGapText says what a gap is: its run, state, and why; a damaged or stale
// run's directory too.
func runGapText(g Gap) string {
	r := g.Run
	what := r.Task + " " + r.Score
	if r.Fold != "" {
		what += " -" + r.Fold
	}
	switch r.Score {
	case experiments.ScoreSearch:
		what = r.Task + " search (its choice trains the row's runs)"
	case experiments.ScoreTrial:
		what = r.Task + " search trial (its search's choice trains the row's runs)"
	}
	s := fmt.Sprintf("%s %s: %s", r.ID(), what, g.State)
	if g.Reason != "" {
		s += ": " + strings.ReplaceAll(strings.TrimSpace(g.Reason), "\n", "; ")
	}
	if g.State == experiments.Damaged || g.State == experiments.Failed {
		s += " (" + g.Dir + ")"
	}
	return s
}

// MixedInputsError refuses runs of one task that read different content
// for one of their inputs.
type MixedInputsError struct {
	Task, Field string
	// Versions are the inputs' versions, each with the runs that read it.
	Versions []InputVersion
}

// InputVersion is one version of an input and the runs that read it.
type InputVersion struct {
	Input experiments.Input
	Runs  []string
}

func (e *MixedInputsError) Error() string {
	var parts []string
	for _, v := range e.Versions {
		what := fmt.Sprintf("sha256 %.12s…", v.Input.SHA256)
		if v.Input.Cases > 0 {
			what += fmt.Sprintf(", %d cases", v.Input.Cases)
		}
		runs := v.Runs
		if len(runs) > 3 {
			runs = append(slices.Clone(runs[:3]), "…")
		}
		parts = append(parts, fmt.Sprintf("%d runs read %s (%s)", len(v.Runs), what, strings.Join(runs, ", ")))
	}
	return fmt.Sprintf("task %s: the runs read different %s: %s; their numbers are not comparable: report the spec (the runs of its inputs as they are now), or pass --mixed-inputs", e.Task, e.Field, strings.Join(parts, "; "))
}

// checkInputs refuses runs of one task whose inputs of one field differ.
func checkInputs(runs []experiments.Run) error {
	type key struct{ task, field string }
	versions := map[key][]InputVersion{}
	var order []key
	for _, r := range runs {
		for _, in := range r.Inputs {
			k := key{r.Task, in.Field}
			vs, seen := versions[k]
			if !seen {
				order = append(order, k)
			}
			i := slices.IndexFunc(vs, func(v InputVersion) bool { return v.Input.SHA256 == in.SHA256 })
			if i < 0 {
				vs = append(vs, InputVersion{Input: in})
				i = len(vs) - 1
			}
			vs[i].Runs = append(vs[i].Runs, r.ID())
			versions[k] = vs
		}
	}
	for _, k := range order {
		if vs := versions[k]; len(vs) > 1 {
			return &MixedInputsError{Task: k.task, Field: k.field, Versions: vs}
		}
	}
	return nil
}

// split reads the state of every run of a sweep: the done runs a table is
// built from (searches left out), and the gaps.
func split(store *experiments.Store, runs []experiments.Run, opt Options) (done []experiments.Run, gaps []Gap) {
	for _, rs := range experiments.StatusOf(store, runs, opt.Inputs).Runs {
		if rs.State == experiments.Done {
			if !experiments.IsSearchScore(rs.Spec.Score) {
				done = append(done, rs.Spec)
			}
			continue
		}
		dir := store.RunDir(rs.ID)
		if rs.State == experiments.Stale && rs.Was != rs.ID {
			dir = store.RunDir(rs.Was)
		}
		gaps = append(gaps, Gap{Run: rs.Spec, State: rs.State, Reason: rs.Reason, Dir: dir})
	}
	return done, gaps
}

// MarkIncomplete marks a cell that runs of the sweep not done leave
// incomplete (Options.Partial).
const MarkIncomplete = "¶"

// flagIncomplete is the kind of the flag a gap puts on the cells it
// leaves incomplete.
const flagIncomplete = "incomplete"

// markGaps puts a flag of kind incomplete on every cell a gap leaves
// incomplete — a baseline's every cell of its task (it stands for every
// score), a seen run's i.i.d. and seen cells, a held-out run's cells of
// its score, a search's every cell of its row and task — and Avg; a gap of
// a row the table lacks altogether is said in the footnote (missingRows).
func (t *Table) markGaps(gaps []Gap) {
	for _, g := range gaps {
		r := g.Run
		f := RunFlag{Run: r.ID(), Label: r.Label(), Flag: metrics.Flag{Kind: flagIncomplete, Reason: strings.TrimPrefix(runGapText(g), r.ID()+" ")}}
		if !slices.Contains(t.Tasks, r.Task) {
			// No run of its task is done: the table has no column of it.
			t.missingRows = append(t.missingRows, f)
			continue
		}
		var row *Row
		for _, x := range t.Rows {
			if !x.Reference && x.key() == rowKeyOf(r) {
				row = x
			}
		}
		if row == nil {
			// No run of its row is done: the row is shown, every cell
			// marked, rather than left out (the baseline first).
			row = &Row{Configuration: r.Configuration, Method: r.Method, Axes: r.Axes()}
			if r.Configuration == experiments.ConfigIID {
				t.Rows = append([]*Row{row}, t.Rows...)
			} else {
				t.Rows = append(t.Rows, row)
			}
		}
		var keys []CellKey
		iid := func() {
			keys = append(keys, IIDKey(r.Task))
			for _, set := range t.EvalSets[r.Task] {
				keys = append(keys, EvalSetKey(r.Task, set))
			}
		}
		score := func(s string) {
			keys = append(keys, GKey(r.Task, s), SuiteKey(r.Task, s, ""))
			for _, grp := range t.Groups[r.Task][s] {
				keys = append(keys, SuiteKey(r.Task, s, grp))
			}
		}
		switch r.Score {
		case experiments.ScoreIID, experiments.ScoreSearch, experiments.ScoreTrial:
			iid()
			for _, s := range t.Scores {
				score(s)
			}
		case experiments.ScoreSeen:
			iid()
			score(r.Score)
		default:
			score(r.Score)
		}
		keys = append(keys, AvgKey)
		for _, k := range keys {
			c := row.cell(k)
			c.Flags = appendNew(c.Flags, f)
		}
	}
}

// incomplete says whether flags mark a cell incomplete.
func incomplete(fs []RunFlag) bool {
	return slices.ContainsFunc(fs, func(f RunFlag) bool { return f.Kind == flagIncomplete })
}

// Incomplete says whether a cell's flags mark it incomplete (a value of
// NaN then shows the mark too).
func Incomplete(fs []RunFlag) bool { return incomplete(fs) }

// shown says whether a cell's flags are shown: a cell with a value shows
// every flag, one without only the mark of its gaps.
func shown(c Cell) bool { return !math.IsNaN(c.Value) || incomplete(c.Flags) }

// SortRuns orders runs read from a store directory as Expand would have
// listed them (FromDir), tasks in BeLUGA's order, others by name.
func SortRuns(runs []experiments.Run) { sortRuns(runs) }
