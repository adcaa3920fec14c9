package explore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/suites"
)

// CasesFile is where a run's trainer writes its per-case verdicts, one JSON
// object per line (package metrics' CaseVerdict), under the run's train/.
const CasesFile = "cases.jsonl"

// CaseSet is one functionality's test cases (T_test, as scored) and what
// each run scored on it predicted.
type CaseSet struct {
	Func int `json:"func"`
	// Expect says in words what the functionality expects, as the case
	// files record it (empty for files written before they did).
	Expect string `json:"expect,omitempty"`
	// Labels name the suite's classes, the order of each prediction's
	// probabilities (none where the suite was not found).
	Labels []string   `json:"labels,omitempty"`
	Cases  []CaseView `json:"cases"`
	// Runs[run] follows Cases.
	Runs map[string]*RunCases `json:"runs"`
}

// CaseView is one test case: its id in the functionality, split and
// metadata when the suite has them, and its inputs (for INV and DIR the
// original first) with the expected label of each.
type CaseView struct {
	ID     int             `json:"id"`
	Split  string          `json:"split,omitempty"`
	Meta   json.RawMessage `json:"meta,omitempty"`
	Inputs []InputView     `json:"inputs,omitempty"`
}

// InputView is one input's text (and pair text) and expected label.
type InputView struct {
	Text  string `json:"text"`
	Pair  string `json:"pair,omitempty"`
	Label string `json:"label,omitempty"`
}

// RunCases is one run's outcome on a CaseSet's cases: V[i] is case i's
// verdict (P pass, F fail, - filtered, ? not scored by this run), Pred[i]
// and Probs[i] the predicted label and probabilities of each input (empty
// for case files written before they carried predictions).
//
// In[i] is case i's verdict per input (P, F, -; empty for case files
// written before per-input verdicts): F marks an input that breaks the
// expectation, Viol[i] each input's violation (metrics.InputVerdict,
// rounded to 3 decimals), Worst[i] the case's largest.
type RunCases struct {
	V     string        `json:"v"`
	Pred  [][]string    `json:"pred,omitempty"`
	Probs [][][]float64 `json:"probs,omitempty"`
	In    []string      `json:"in,omitempty"`
	Viol  [][]float64   `json:"viol,omitempty"`
	Worst []float64     `json:"worst,omitempty"`
}

// caseLine is a line of a case file, old (functionality, case, verdict) or
// new (with class, type, expectation, and inputs with predictions).
type caseLine struct {
	Functionality string          `json:"functionality"`
	Case          int             `json:"case"`
	Verdict       string          `json:"verdict"`
	Expect        string          `json:"expect"`
	Split         string          `json:"split"`
	Meta          json.RawMessage `json:"meta"`
	Violation     float64         `json:"violation"`
	Inputs        []struct {
		Text      string    `json:"text"`
		Pair      string    `json:"pair"`
		Label     string    `json:"label"`
		Pred      string    `json:"pred"`
		Probs     []float64 `json:"probs"`
		Verdict   string    `json:"verdict"`
		Violation float64   `json:"violation"`
	} `json:"inputs"`
}

// span is the byte range of one functionality's lines in a case file.
type span struct{ start, end int64 }

// caseIndex caches, per run, where each functionality's lines are.
type caseIndex struct {
	mu    sync.Mutex
	spans map[string]map[string][]span // run → functionality → spans
}

// errNoFunc marks a request for a functionality the store does not have.
var errNoFunc = errors.New("no functionality")

var verdictByte = map[string]byte{"pass": experiments.Pass, "fail": experiments.Fail, "filtered": experiments.Filtered}

// Cases reads functionality fid's cases from every run scored on it.
func (s *Source) Cases(fid int) (*CaseSet, error) {
	if fid < 0 || fid >= len(s.View.Funcs) {
		return nil, fmt.Errorf("%w %d (the store has %d)", errNoFunc, fid, len(s.View.Funcs))
	}
	f := s.View.Funcs[fid]
	cs := &CaseSet{Func: fid, Runs: map[string]*RunCases{}}
	lines := map[string]map[int]*caseLine{}
	ids := map[int]bool{}
	var runs []string
	for _, rv := range s.View.Runs {
		if !slices.Contains(rv.Funcs, fid) {
			continue
		}
		got, err := s.readFunc(rv.ID, f.Name)
		if errors.Is(err, errNoCases) {
			got, err = s.fromResult(rv.ID, f.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", rv.ID, err)
		}
		m := map[int]*caseLine{}
		for i := range got {
			m[got[i].Case] = &got[i]
			ids[got[i].Case] = true
		}
		lines[rv.ID] = m
		runs = append(runs, rv.ID)
	}
	order := make([]int, 0, len(ids))
	for id := range ids {
		order = append(order, id)
	}
	sort.Ints(order)
	var suiteCases map[int]*suites.Case
	var labels []string
	var suiteExpect string
	if st := s.suites[f.Task]; st != nil {
		labels = st.Labels
		for _, sf := range st.Functionalities {
			if sf.Name == f.Name {
				suiteExpect = metrics.Describe(sf.Expect, st.Labels)
				suiteCases = map[int]*suites.Case{}
				for _, c := range sf.Cases {
					suiteCases[c.ID] = c
				}
			}
		}
	}
	cs.Labels = labels
	for _, id := range order {
		cv := CaseView{ID: id}
		// The text from the first run whose case file carries it, else
		// from the suite.
		for _, r := range runs {
			if l := lines[r][id]; l != nil && len(l.Inputs) > 0 {
				for _, in := range l.Inputs {
					cv.Inputs = append(cv.Inputs, InputView{Text: in.Text, Pair: in.Pair, Label: in.Label})
				}
				cv.Split = l.Split
				if len(l.Meta) > 0 && string(l.Meta) != "null" {
					cv.Meta = l.Meta
				}
				if cs.Expect == "" {
					cs.Expect = l.Expect
				}
				break
			}
		}
		if sc := suiteCases[id]; sc != nil {
			if cv.Inputs == nil {
				for i, in := range sc.Inputs {
					iv := InputView{Text: in.Text}
					if in.IsPair {
						iv.Pair = in.Pair
					}
					if l, ok := sc.LabelFor(i); ok {
						iv.Label = labelName(l, labels)
					}
					cv.Inputs = append(cv.Inputs, iv)
				}
			}
			if cv.Split == "" {
				cv.Split = string(sc.Split)
			}
			if cv.Meta == nil && len(sc.Meta) > 0 && string(sc.Meta) != "null" {
				cv.Meta = sc.Meta
			}
		}
		cs.Cases = append(cs.Cases, cv)
	}
	if cs.Expect == "" {
		// Case files written before they carried the expectation.
		cs.Expect = suiteExpect
	}
	for _, r := range runs {
		cs.Runs[r] = runCases(order, lines[r])
	}
	return cs, nil
}

// runCases is one run's outcome on the cases in order (ids), from its
// case lines.
func runCases(order []int, lines map[int]*caseLine) *RunCases {
	rc := &RunCases{}
	v := make([]byte, len(order))
	hasPred := false
	for i, id := range order {
		l := lines[id]
		if l == nil {
			v[i] = '?'
			continue
		}
		v[i] = verdictByte[l.Verdict]
		if len(l.Inputs) > 0 && l.Inputs[0].Pred != "" {
			hasPred = true
		}
	}
	rc.V = string(v)
	if hasPred {
		rc.Pred = make([][]string, len(order))
		rc.Probs = make([][][]float64, len(order))
		rc.In = make([]string, len(order))
		rc.Viol = make([][]float64, len(order))
		rc.Worst = make([]float64, len(order))
		for i, id := range order {
			l := lines[id]
			if l == nil {
				continue
			}
			rc.Worst[i] = round3(l.Violation)
			in := make([]byte, 0, len(l.Inputs))
			for _, x := range l.Inputs {
				if b, ok := verdictByte[x.Verdict]; ok {
					in = append(in, b)
				}
				rc.Viol[i] = append(rc.Viol[i], round3(x.Violation))
			}
			if len(in) == len(l.Inputs) {
				rc.In[i] = string(in)
			}
			for _, in := range l.Inputs {
				rc.Pred[i] = append(rc.Pred[i], in.Pred)
				// Probabilities are finite (softmax outputs); plain
				// float64s encode much faster than Num.
				pr := make([]float64, len(in.Probs))
				for k, p := range in.Probs {
					pr[k] = round3(p)
				}
				rc.Probs[i] = append(rc.Probs[i], pr)
			}
		}
	}
	return rc
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func labelName(l suites.Label, labels []string) string {
	if l.IsAnswer {
		return l.Answer
	}
	if l.Class >= 0 && l.Class < len(labels) {
		return labels[l.Class]
	}
	return fmt.Sprint(l.Class)
}

// casesPath is a run's case file.
func (s *Source) casesPath(run string) string {
	if p, ok := s.caseFiles[run]; ok {
		return p
	}
	return filepath.Join(s.store.RunDir(run), "train", CasesFile)
}

// readFunc returns a run's case lines of one functionality. The first read
// of a run's file indexes where every functionality's lines are, so that
// opening another functionality reads only its own lines.
func (s *Source) readFunc(run, name string) ([]caseLine, error) {
	path := s.casesPath(run)
	s.index.mu.Lock()
	if s.index.spans == nil {
		s.index.spans = map[string]map[string][]span{}
	}
	spans, ok := s.index.spans[run]
	s.index.mu.Unlock()
	if !ok {
		var err error
		spans, err = indexCases(path)
		if err != nil {
			return nil, err
		}
		if _, own := s.caseFiles[run]; !own {
			// A store's run: its verdicts as the run wrote them (done).
			if err := experiments.VerifyPart(s.store.RunDir(run), experiments.CasesFile, nil); err != nil {
				return nil, err
			}
		}
		s.index.mu.Lock()
		s.index.spans[run] = spans
		s.index.mu.Unlock()
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []caseLine
	for _, sp := range spans[name] {
		buf := make([]byte, sp.end-sp.start)
		if _, err := f.ReadAt(buf, sp.start); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for len(buf) > 0 {
			line, rest, _ := bytes.Cut(buf, []byte{'\n'})
			buf = rest
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var l caseLine
			if err := json.Unmarshal(line, &l); err != nil {
				return nil, fmt.Errorf("%s at byte %d: %w", path, sp.start, err)
			}
			if _, ok := verdictByte[l.Verdict]; !ok {
				return nil, fmt.Errorf("%s: case %d of %q: field verdict: %q is not pass, fail or filtered", path, l.Case, l.Functionality, l.Verdict)
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// indexCases scans a case file once, recording each functionality's byte
// ranges (a functionality's lines are consecutive in files package train
// writes; any order is read correctly).
func indexCases(path string) (map[string][]span, error) {
	out := map[string][]span{}
	var off, start int64
	cur, first := "", true
	err := scanLines(path, func(line []byte, _ int) error {
		if len(bytes.TrimSpace(line)) == 0 {
			off += int64(len(line)) + 1
			return nil
		}
		var head struct {
			Functionality string `json:"functionality"`
			Case          int    `json:"case"`
			Verdict       string `json:"verdict"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return err
		}
		if _, ok := verdictByte[head.Verdict]; !ok {
			return fmt.Errorf("case %d of %q: field verdict: %q is not pass, fail or filtered", head.Case, head.Functionality, head.Verdict)
		}
		if first || head.Functionality != cur {
			if !first {
				out[cur] = append(out[cur], span{start, off})
			}
			cur, start, first = head.Functionality, off, false
		}
		off += int64(len(line)) + 1
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !first {
		out[cur] = append(out[cur], span{start, off})
	}
	return out, nil
}

// fromResult builds case lines from a run's result.json verdicts when it
// has no case file: case ids are then the positions among the scored cases.
func (s *Source) fromResult(run, name string) ([]caseLine, error) {
	res, err := experiments.ReadResult(s.store.RunDir(run))
	if err != nil {
		return nil, err
	}
	var out []caseLine
	for _, f := range res.Functionalities {
		if f.Name != name {
			continue
		}
		for i := 0; i < len(f.Verdicts); i++ {
			v := map[byte]string{experiments.Pass: "pass", experiments.Fail: "fail", experiments.Filtered: "filtered"}[f.Verdicts[i]]
			out = append(out, caseLine{Functionality: name, Case: i, Verdict: v})
		}
	}
	return out, nil
}

// Query selects and pages a CaseSet's cases for a table on the page.
type Query struct {
	// Runs are the columns shown, in order; Focus the run whose verdict
	// Verdict filters on (default: the last of Runs).
	Runs  []string
	Focus string
	// Verdict keeps cases whose verdict in Focus is P, F or -; "" keeps all.
	Verdict string
	// Split keeps cases of that split; Meta keeps cases whose metadata
	// field Meta[0] equals Meta[1].
	Split string
	Meta  [2]string
	// Search keeps cases one of whose texts contains it (case-insensitive).
	Search string
	// FlipsFirst puts first the cases the shown runs disagree on (one
	// passes, another fails): two models compared (beluga test compare).
	FlipsFirst bool
	// Offset and Limit page the result (Limit 0: all).
	Offset, Limit int
}

// Page is one page of a query's cases: Total matched, and the rows shown.
type Page struct {
	Func   int       `json:"func"`
	Expect string    `json:"expect,omitempty"`
	Labels []string  `json:"labels,omitempty"`
	Total  int       `json:"total"`
	Rows   []PageRow `json:"rows"`
	// Runs are the query's runs, the order of each row's Runs.
	Runs []string `json:"runs"`
	// Splits and Meta list the values the set's cases have (before
	// filtering), for the page's filters: Meta[field] holds the values of
	// each scalar metadata field.
	Splits []string            `json:"splits"`
	Meta   map[string][]string `json:"meta"`
}

// PageRow is one case with each queried run's verdict, predictions and
// probabilities.
type PageRow struct {
	Case CaseView     `json:"case"`
	Runs []RunOutcome `json:"runs"`
}

// RunOutcome is one run's verdict on a case ("?" when it did not score it)
// with its prediction and probabilities per input.
//
// In and Viol are its inputs' verdicts and violations, Worst the case's
// largest violation (RunCases).
type RunOutcome struct {
	V     string      `json:"v"`
	Pred  []string    `json:"pred,omitempty"`
	Probs [][]float64 `json:"probs,omitempty"`
	In    string      `json:"in,omitempty"`
	Viol  []float64   `json:"viol,omitempty"`
	Worst float64     `json:"worst,omitempty"`
}

// Select applies q to cs: with FlipsFirst the cases the shown runs
// disagree on first; then the cases the focus run fails, then the
// more of the shown runs fail a case the earlier, then the larger the focus
// run's violation (worst first, as CheckList's summary), then by case id. The page's own script sorts
// and filters the same way on the embedded cases.
func (cs *CaseSet) Select(q Query) Page {
	p := Page{Func: cs.Func, Expect: cs.Expect, Labels: cs.Labels, Runs: append([]string{}, q.Runs...), Rows: []PageRow{}}
	p.Splits, p.Meta = cs.facets()
	focus := q.Focus
	if focus == "" && len(q.Runs) > 0 {
		focus = q.Runs[len(q.Runs)-1]
	}
	search := strings.ToLower(q.Search)
	type hit struct {
		i, fails int
		flip     bool
		worst    float64
	}
	var hits []hit
	for i, c := range cs.Cases {
		if q.Verdict != "" {
			rc := cs.Runs[focus]
			if rc == nil || string(rc.V[i]) != q.Verdict {
				continue
			}
		}
		if q.Split != "" && c.Split != q.Split {
			continue
		}
		if q.Meta[0] != "" && metaValue(c.Meta, q.Meta[0]) != q.Meta[1] {
			continue
		}
		if search != "" && !slices.ContainsFunc(c.Inputs, func(in InputView) bool {
			return strings.Contains(strings.ToLower(in.Text), search) || strings.Contains(strings.ToLower(in.Pair), search)
		}) {
			continue
		}
		// The focus run's failures first, then by how many shown runs fail.
		fails := 0
		if rc := cs.Runs[focus]; rc != nil && rc.V[i] == experiments.Fail {
			fails = len(q.Runs) + 1
		}
		for _, r := range q.Runs {
			if rc := cs.Runs[r]; rc != nil && rc.V[i] == experiments.Fail {
				fails++
			}
		}
		worst := 0.0
		if rc := cs.Runs[focus]; rc != nil && rc.Worst != nil {
			worst = rc.Worst[i]
		}
		hits = append(hits, hit{i, fails, q.FlipsFirst && cs.flips(q.Runs, i), worst})
	}
	sort.SliceStable(hits, func(a, b int) bool {
		if hits[a].flip != hits[b].flip {
			return hits[a].flip
		}
		if hits[a].fails != hits[b].fails {
			return hits[a].fails > hits[b].fails
		}
		return hits[a].worst > hits[b].worst
	})
	p.Total = len(hits)
	lo := min(max(q.Offset, 0), len(hits))
	hi := len(hits)
	if q.Limit > 0 {
		hi = min(lo+q.Limit, hi)
	}
	for _, h := range hits[lo:hi] {
		row := PageRow{Case: cs.Cases[h.i], Runs: []RunOutcome{}}
		for _, r := range q.Runs {
			o := RunOutcome{V: "?"}
			if rc := cs.Runs[r]; rc != nil {
				o.V = string(rc.V[h.i])
				if rc.Pred != nil {
					o.Pred, o.Probs = rc.Pred[h.i], rc.Probs[h.i]
					o.In, o.Viol, o.Worst = rc.In[h.i], rc.Viol[h.i], rc.Worst[h.i]
				}
			}
			row.Runs = append(row.Runs, o)
		}
		p.Rows = append(p.Rows, row)
	}
	return p
}

// metaValue returns a case metadata field as text ("" when absent or when
// the metadata is not an object).
func metaValue(meta json.RawMessage, key string) string {
	if len(meta) == 0 {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(meta, &m) != nil {
		return ""
	}
	v, ok := m[key]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// flips reports whether, of runs, one passes case i and another fails it.
func (cs *CaseSet) flips(runs []string, i int) bool {
	pass, fail := false, false
	for _, r := range runs {
		if rc := cs.Runs[r]; rc != nil {
			pass = pass || rc.V[i] == experiments.Pass
			fail = fail || rc.V[i] == experiments.Fail
		}
	}
	return pass && fail
}

// facets are the splits and the metadata values of cs's cases, sorted.
func (cs *CaseSet) facets() ([]string, map[string][]string) {
	p := Page{Splits: []string{}, Meta: map[string][]string{}}
	for _, c := range cs.Cases {
		if c.Split != "" && !slices.Contains(p.Splits, c.Split) {
			p.Splits = append(p.Splits, c.Split)
		}
		var m map[string]any
		if len(c.Meta) > 0 && json.Unmarshal(c.Meta, &m) == nil {
			for k, v := range m {
				switch v.(type) {
				case nil, map[string]any, []any:
					continue
				}
				if s := metaValue(c.Meta, k); !slices.Contains(p.Meta[k], s) {
					p.Meta[k] = append(p.Meta[k], s)
				}
			}
		}
	}
	sort.Strings(p.Splits)
	for _, vs := range p.Meta {
		sort.Strings(vs)
	}
	return p.Splits, p.Meta
}
