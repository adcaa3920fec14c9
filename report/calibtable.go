package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/csvcell"
	"github.com/beluga-nlp/beluga/metrics"
)

// IIDPredictionsFile is where, in a run directory, package train writes
// each i.i.d. test example's label, prediction and probabilities.
const IIDPredictionsFile = "train/iid_predictions.jsonl"

// CalibrationLine is one column of a sweep (a task, row and score, over
// its folds and replicates) measured for calibration and its worst group:
// whether behavioural learning changes how well a model's confidence
// matches its accuracy, on the i.i.d. test set and on the suite cases the
// column scores (held-out ones for a held-out score).
type CalibrationLine struct {
	Task, Configuration, Method, Axes, Score string
	// Runs is the number of done runs pooled (folds × replicates).
	Runs int
	// IID pools the runs' i.i.d. test predictions (each run's count once),
	// Width and Mass its equal-width and equal-mass calibration; Test the
	// same over the labelled inputs of the suite cases the runs scored.
	// N = 0 when no run left predictions with probabilities.
	IID, IIDMass, Test, TestMass metrics.Calibration
	// Worst is the group with the lowest pass rate: a fold of a held-out
	// score (a functionality, class, test type or metadata value), a
	// functionality for the seen and i.i.d. scores.
	Worst WorstGroup
}

// WorstGroup is a group's pass rate over the cases the column's runs
// scored (pooled over replicates) with its 95 % Wilson score interval,
// as WILDS-style worst-group reports give it.
type WorstGroup struct {
	Name           string
	Passed, Scored int
	// Rate, Lo and Hi are percentages; NaN when no group has a scored case.
	Rate, Lo, Hi float64
}

// CalibrationLines measures every column of the done runs: each task,
// row (configuration, method, axes) and score, in run order. Calibration
// reads each run's train/iid_predictions.jsonl and train/cases.jsonl
// (runs written without them count for the worst group only); bins is the
// number of reliability bins.
func CalibrationLines(store *experiments.Store, runs []experiments.Run, bins int) ([]CalibrationLine, error) {
	if bins < 1 {
		return nil, fmt.Errorf("calibration: %d bins", bins)
	}
	type key struct{ task, config, method, axes, score string }
	type acc struct {
		line      CalibrationLine
		iid, test []metrics.CaseInput
		groups    []string
		counts    map[string][2]int // group → passed, scored
	}
	var order []key
	cols := map[key]*acc{}
	for _, r := range runs {
		if experiments.IsSearchScore(r.Score) || store.State(r.ID()) != experiments.Done {
			continue
		}
		k := key{r.Task, r.Configuration, r.Method, r.Axes(), r.Score}
		a := cols[k]
		if a == nil {
			a = &acc{line: CalibrationLine{Task: r.Task, Configuration: r.Configuration, Method: r.Method, Axes: r.Axes(), Score: r.Score}, counts: map[string][2]int{}}
			cols[k] = a
			order = append(order, k)
		}
		a.line.Runs++
		dir := store.RunDir(r.ID())
		res, err := experiments.ReadResult(dir)
		if err != nil {
			return nil, fmt.Errorf("calibration: run %s: %w", r.ID(), err)
		}
		for _, f := range res.Functionalities {
			g := f.Name
			if r.Score != experiments.ScoreSeen && r.Score != experiments.ScoreIID {
				g = r.Fold
			}
			c, ok := a.counts[g]
			if !ok {
				a.groups = append(a.groups, g)
			}
			for i := 0; i < len(f.Verdicts); i++ {
				switch f.Verdicts[i] {
				case experiments.Pass:
					c[0]++
					c[1]++
				case experiments.Fail:
					c[1]++
				}
			}
			a.counts[g] = c
		}
		iid, err := readInputLines(filepath.Join(dir, IIDPredictionsFile))
		if err != nil {
			return nil, fmt.Errorf("calibration: run %s: %w", r.ID(), err)
		}
		a.iid = append(a.iid, iid...)
		cases, err := metrics.ReadCases(filepath.Join(dir, experiments.CasesFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("calibration: run %s: %w", r.ID(), err)
		}
		for _, c := range cases {
			if c.Verdict != metrics.Filtered {
				a.test = append(a.test, c.Inputs...)
			}
		}
	}
	out := make([]CalibrationLine, 0, len(order))
	for _, k := range order {
		a := cols[k]
		l := a.line
		var err error
		for _, m := range []struct {
			ins  []metrics.CaseInput
			b    metrics.Binning
			into *metrics.Calibration
		}{{a.iid, metrics.EqualWidth, &l.IID}, {a.iid, metrics.EqualMass, &l.IIDMass}, {a.test, metrics.EqualWidth, &l.Test}, {a.test, metrics.EqualMass, &l.TestMass}} {
			*m.into = metrics.Calibration{ECE: math.NaN(), Brier: math.NaN()}
			if !metrics.AnyLabelled(m.ins) {
				continue
			}
			if *m.into, err = metrics.CalibrateInputs(m.ins, bins, m.b); err != nil {
				return nil, fmt.Errorf("calibration: %s %s %s: %w", l.Task, l.Configuration, l.Score, err)
			}
		}
		l.Worst = worstGroup(a.groups, a.counts)
		out = append(out, l)
	}
	return out, nil
}

// z95 is the normal quantile of a two-sided 95 % interval.
const z95 = 1.959963984540054

// worstGroup is the group, of groups in order, with the lowest pass rate
// among those with a scored case (the first of equals), with its Wilson
// interval; counts are each group's passed and scored cases.
func worstGroup(groups []string, counts map[string][2]int) WorstGroup {
	w := WorstGroup{Rate: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	for _, g := range groups {
		c := counts[g]
		if c[1] == 0 {
			continue
		}
		rate := 100 * float64(c[0]) / float64(c[1])
		if math.IsNaN(w.Rate) || rate < w.Rate {
			lo, hi := metrics.Wilson(c[0], c[1], z95)
			w = WorstGroup{Name: g, Passed: c[0], Scored: c[1], Rate: rate, Lo: 100 * lo, Hi: 100 * hi}
		}
	}
	return w
}

// worstJSON is a WorstGroup as JSON holds it: NaN as null.
type worstJSON struct {
	Name   string   `json:"name"`
	Passed int      `json:"passed"`
	Scored int      `json:"scored"`
	Rate   *float64 `json:"pass_rate"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
}

// MarshalJSON writes the group with a rate and interval of null when it
// has none (NaN, which JSON cannot hold).
func (w WorstGroup) MarshalJSON() ([]byte, error) {
	num := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		return &v
	}
	return json.Marshal(worstJSON{w.Name, w.Passed, w.Scored, num(w.Rate), num(w.Lo), num(w.Hi)})
}

// UnmarshalJSON reads what MarshalJSON writes, null as NaN.
func (w *WorstGroup) UnmarshalJSON(b []byte) error {
	var j worstJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	num := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*w = WorstGroup{Name: j.Name, Passed: j.Passed, Scored: j.Scored, Rate: num(j.Rate), Lo: num(j.Lo), Hi: num(j.Hi)}
	return nil
}

// readInputLines reads a file of prediction lines (metrics.CaseInput);
// a file that does not exist has none.
func readInputLines(path string) ([]metrics.CaseInput, error) {
	ins, err := metrics.ReadInputLines(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ins, err
}

// calibrationHead are the calibration table's columns. ece_iid, brier_iid
// and ece_test (the score's suite cases) are the names a study asks for:
// whether a configuration changes calibration on held-out functionalities.
var calibrationHead = []string{"task", "config", "method", "score", "runs",
	"iid_n", "ece_iid", "ece_mass_iid", "brier_iid", "test_n", "ece_test", "ece_mass_test", "brier_test",
	"worst_group", "worst_pass_rate", "worst_lo", "worst_hi", "worst_cases"}

func (l CalibrationLine) cells(num func(float64) string) []string {
	method := l.Method
	if l.Axes != "" {
		method += " " + l.Axes
	}
	n := func(c metrics.Calibration) string {
		if c.N == 0 {
			return ""
		}
		return strconv.Itoa(c.N)
	}
	worstCases := ""
	if l.Worst.Scored > 0 {
		worstCases = strconv.Itoa(l.Worst.Scored)
	}
	return []string{l.Task, l.Configuration, method, l.Score, strconv.Itoa(l.Runs),
		n(l.IID), num(l.IID.ECE), num(l.IIDMass.ECE), num(l.IID.Brier), n(l.Test), num(l.Test.ECE), num(l.TestMass.ECE), num(l.Test.Brier),
		l.Worst.Name, num(l.Worst.Rate), num(l.Worst.Lo), num(l.Worst.Hi), worstCases}
}

// WriteCalibrationCSV writes the lines at full precision, empty where a
// value is not measured.
func WriteCalibrationCSV(w io.Writer, lines []CalibrationLine) error {
	cw := csvcell.NewWriter(w)
	cw.Write(calibrationHead)
	for _, l := range lines {
		cw.Write(l.cells(csvNum))
	}
	cw.Flush()
	return cw.Error()
}

// WriteCalibrationMarkdown writes the lines as a Markdown table, with a
// note saying what each measure is.
func WriteCalibrationMarkdown(w io.Writer, lines []CalibrationLine, bins int) error {
	var b strings.Builder
	b.WriteString("| task | config | method | score | runs | i.i.d. n | ECE | ECE (mass) | Brier | test n | ECE | ECE (mass) | Brier | worst group | pass rate | 95% CI | cases |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|\n")
	three := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	for _, l := range lines {
		c := l.cells(three)
		ci := "–"
		if !math.IsNaN(l.Worst.Lo) {
			ci = fmt.Sprintf("[%.1f, %.1f]", l.Worst.Lo, l.Worst.Hi)
		}
		rate := "–"
		if !math.IsNaN(l.Worst.Rate) {
			rate = fmt.Sprintf("%.1f", l.Worst.Rate)
		}
		cells := append(c[:13:13], mdEscape(l.Worst.Name), rate, ci, c[17])
		for i := range 4 {
			cells[i] = mdEscape(cells[i])
		}
		for i := range cells {
			if cells[i] == "" {
				cells[i] = "–"
			}
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	fmt.Fprintf(&b, "\nECE: expected calibration error of the top label over %d equal-width bins (ECE (mass): equal-mass bins), in [0, 1]; Brier: the multi-class Brier score, in [0, 2]; lower is better. i.i.d.: the runs' i.i.d. test predictions; test: the labelled inputs of the suite cases the score's runs scored (the held-out cases for a held-out score), each pooled over the column's runs. Worst group: the fold (held-out scores) or functionality (seen, iid) with the lowest pass rate, with its 95%% Wilson interval.\n", bins)
	_, err := io.WriteString(w, b.String())
	return err
}
