package train

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/prompt"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// TrainedFile is the run file that lists what a run trained on, was
// validated on and was scored on (Trained). It is an output of the run,
// not part of its identity: the store's done records it as every other
// file of the run.
const TrainedFile = "trained.json"

// Trained says which rows and cases a run read, by role: "trained" (what
// its own training phases drew batches from), "validation" (what a
// search's objective reads: the i.i.d. validation part and the suite's
// T_val) and "scored" (the i.i.d. test rows, the evaluation sets and the
// T_test cases its scores are computed on). Each part lists its file's
// lines or its suite's case ids as ranges ("1-40,45"), and a digest of
// that list: two runs trained on the same rows have the same digest.
type Trained struct {
	// Recipe says how the lists were drawn from the run's spec, so that
	// they can be derived again and checked against the digests.
	Recipe string        `json:"recipe"`
	IID    []TrainedPart `json:"iid,omitempty"`
	Suite  []TrainedPart `json:"suite,omitempty"`
	// Demonstrations are a prompted run's, every one in prompt order
	// (empty for a zero-shot run; absent for a trained one).
	Demonstrations []prompt.Demo `json:"demonstrations,omitzero"`
}

// TrainedPart is one part of a run's data.
type TrainedPart struct {
	Role string `json:"role"`
	Name string `json:"name"`
	File string `json:"file"`
	// Rows counts an i.i.d. part's rows, Cases a suite part's test cases
	// (Inputs their inputs).
	Rows   int `json:"rows,omitempty"`
	Cases  int `json:"cases,omitempty"`
	Inputs int `json:"inputs,omitempty"`
	// Labels counts an i.i.d. part's rows per task label.
	Labels []datasets.LabelCount `json:"labels,omitempty"`
	// Lines are an i.i.d. part's file lines (a built-in reader's rows:
	// "row N" positions, written as negative numbers' absolute values
	// under "rows"), as ranges.
	Lines string `json:"lines,omitempty"`
	// Questions are a SQuAD-format part's questions by their 1-based
	// position in the file's reading order (articles, paragraphs,
	// questions), as ranges.
	Questions string `json:"questions,omitempty"`
	// Functionalities list a suite part's case ids per functionality.
	Functionalities []FunctionalityCases `json:"functionalities,omitempty"`
	// Digest is the SHA-256 of the part's file name and list.
	Digest string `json:"digest"`
}

// FunctionalityCases are the ids of one functionality's cases in a part.
type FunctionalityCases struct {
	Name  string `json:"name"`
	Cases string `json:"cases"`
}

// TrainedCounts is what a run trained on in two numbers: i.i.d. rows and
// suite cases (0 where it trained on none).
func (t *Trained) TrainedCounts() (iidRows, suiteCases int) {
	for _, p := range t.IID {
		if p.Role == "trained" {
			iidRows += p.Rows
		}
	}
	for _, p := range t.Suite {
		if p.Role == "trained" {
			suiteCases += p.Cases
		}
	}
	return iidRows, suiteCases
}

// trainedRecipe is Trained.Recipe: the order in which a run's data is
// drawn (the functions named are this package's).
const trainedRecipe = "i.i.d. train: the file's training part (a split's train part, or the train file), its first iid_limit rows, then " +
	"train_size (or train_fraction) rows of them drawn by label with the run's seed (subsample); validation and test parts whole. " +
	"Suite: BeLUGA's split (splits.Assign, seed 42) where the suite has none; trained: each functionality's T_train cases, " +
	"the first suite_limit of them in suite order (of those the fold keeps, with suite_limit_after_hold_out), less the cases the " +
	"held-out fold removes; validation: every T_val case; scored: the T_test cases of the functionalities the fold scores, the first " +
	"eval_limit of each, a metadata fold's held-out cases among them"

// rangesOf writes sorted whole numbers as ranges: 1-3,5,7-8.
func rangesOf(xs []int) string {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	var b strings.Builder
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(xs[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(xs[j]))
		}
		i = j + 1
	}
	return b.String()
}

// digestOf is a part's digest: SHA-256 of its file's base name and its
// lists, so that a moved file keeps the digest.
func digestOf(file string, list any) string {
	b, _ := json.Marshal(list)
	h := sha256.Sum256(append([]byte(filepath.Base(file)+"\n"), b...))
	return hex.EncodeToString(h[:])
}

// trainedPart is a trained record of the i.i.d. part named name, restricted to
// the rows at positions keep (nil: all).
func (d *iidData) trainedPart(role, name string, keep []int) (TrainedPart, bool) {
	k := slices.IndexFunc(d.parts, func(p inputcheck.Part) bool { return p.Name == name })
	if k < 0 {
		return TrainedPart{}, false
	}
	lines, rows := d.lines[k], d.parts[k].Rows
	if keep != nil {
		lines, rows = datasets.Pick(lines, keep), datasets.Pick(rows, keep)
	}
	abs := make([]int, len(lines))
	for i, l := range lines {
		abs[i] = max(l, -l)
	}
	p := TrainedPart{Role: role, Name: name, File: d.files[k], Rows: len(rows), Lines: rangesOf(abs)}
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.Label]++
	}
	for _, l := range d.labelNames {
		p.Labels = append(p.Labels, datasets.LabelCount{Label: l, Rows: counts[l]})
	}
	p.Digest = digestOf(p.File, p.Lines)
	return p, true
}

// trainedSuitePart is a trained record of the cases of s that keep takes.
func trainedSuitePart(role, name, file string, s *suites.Suite, keep func(*suites.Functionality, *suites.Case) bool) TrainedPart {
	p := TrainedPart{Role: role, Name: name, File: file}
	for _, f := range s.Functionalities {
		var ids []int
		for _, c := range f.Cases {
			if keep(f, c) {
				ids = append(ids, c.ID)
				p.Cases++
				p.Inputs += len(c.Inputs)
			}
		}
		if len(ids) > 0 {
			p.Functionalities = append(p.Functionalities, FunctionalityCases{Name: f.Name, Cases: rangesOf(ids)})
		}
	}
	p.Digest = digestOf(file, p.Functionalities)
	return p
}

// trainedRecord is what a classification run reads: the i.i.d. training
// rows it keeps (positions kept in the training part), the validation and
// test parts, the evaluation sets and the suite's parts under its fold
// and limits.
func trainedRecord(spec RunSpec, d *iidData, kept []int, suite *suites.Suite, fold *splits.Fold) *Trained {
	t := &Trained{Recipe: trainedRecipe}
	if spec.config().IID {
		if p, ok := d.trainedPart("trained", "i.i.d. train", kept); ok {
			t.IID = append(t.IID, p)
		}
	}
	for _, name := range []string{"i.i.d. dev", "i.i.d. validation half"} {
		if p, ok := d.trainedPart("validation", name, nil); ok {
			t.IID = append(t.IID, p)
		}
	}
	for _, name := range []string{"i.i.d. test", "i.i.d. test half"} {
		if p, ok := d.trainedPart("scored", name, nil); ok {
			t.IID = append(t.IID, p)
		}
	}
	for i, e := range d.eval {
		if i < len(spec.IIDEval) {
			f := spec.IIDEval[i].Path
			t.IID = append(t.IID, TrainedPart{Role: "scored", Name: "i.i.d. evaluation set " + e.name, File: f, Rows: len(e.examples),
				Lines: "all", Digest: digestOf(f, "all")})
		}
	}
	t.Suite = trainedSuiteParts(spec, suite, fold)
	return t
}

// trainedSuiteParts are the suite's parts a run trains on (when its
// configuration trains on the suite), validates on and is scored on.
func trainedSuiteParts(spec RunSpec, suite *suites.Suite, fold *splits.Fold) []TrainedPart {
	var parts []TrainedPart
	if spec.config().Suite {
		capped := spec.trainingSuite(suite, fold)
		parts = append(parts, trainedSuitePart("trained", "suite T_train", spec.Suite, capped, func(f *suites.Functionality, c *suites.Case) bool {
			// BuildSuiteData's rule: a fold leaves out what it holds out.
			return c.Split == suites.SplitTrain && (fold == nil || !fold.HoldsOut(f, c))
		}))
	}
	parts = append(parts, trainedSuitePart("validation", "suite T_val", spec.Suite, suite, func(_ *suites.Functionality, c *suites.Case) bool {
		return c.Split == suites.SplitValidation
	}))
	scored := scoredSuite(suite, fold, spec.EvalLimit)
	return append(parts, trainedSuitePart("scored", "suite T_test", spec.Suite, scored, func(f *suites.Functionality, c *suites.Case) bool {
		if c.Split != suites.SplitTest {
			return false
		}
		return fold == nil || !fold.ByMeta() || fold.HoldsOut(f, c)
	}))
}

// spanQuestions are a span run's i.i.d. questions by position: those it
// trains on (in trainFile: the train file, or the dev file when it trains
// on dev's validation half) and dev's validation and test halves.
type spanQuestions struct {
	trainFile        string
	train, val, test []int
}

// spanTrainedRecord is what a span run reads: its SQuAD questions by
// position and the suite's parts, as a classification run's record.
func spanTrainedRecord(spec RunSpec, q spanQuestions, suite *suites.Suite, fold *splits.Fold) *Trained {
	t := &Trained{Recipe: spanTrainedRecipe}
	part := func(role, name, file string, pos []int) TrainedPart {
		ones := make([]int, len(pos))
		for i, p := range pos {
			ones[i] = p + 1
		}
		p := TrainedPart{Role: role, Name: name, File: file, Rows: len(pos), Questions: rangesOf(ones)}
		p.Digest = digestOf(file, p.Questions)
		return p
	}
	if spec.config().IID {
		t.IID = append(t.IID, part("trained", "i.i.d. train", q.trainFile, q.train))
	}
	t.IID = append(t.IID, part("validation", "i.i.d. validation half", spec.IIDDev, q.val),
		part("scored", "i.i.d. test half", spec.IIDDev, q.test))
	t.Suite = trainedSuiteParts(spec, suite, fold)
	return t
}

// spanTrainedRecipe is Trained.Recipe for span runs (prepareRead's order).
const spanTrainedRecipe = "i.i.d.: the dev file halved as BeLUGA does (datasets.Halve, seed 42: validation half, test half); trained: the train " +
	"file's questions (dev's validation half where train and dev are one file), their first iid_limit, then train_size (or " +
	"train_fraction) of them drawn with the run's seed (subsample). Suite: as a classification run's"

// String says what a run trained on in one line, for logs.
func (t *Trained) String() string {
	if t.Demonstrations != nil {
		return fmt.Sprintf("prompted with %d demonstrations, trained on nothing", len(t.Demonstrations))
	}
	iid, cases := t.TrainedCounts()
	return fmt.Sprintf("trained on %d i.i.d. rows and %d suite cases", iid, cases)
}

// indices are 0 … n-1.
func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// trainedSize adds to r the size and label counts of the training rows a
// run keeps of its i.i.d. training part (positions kept), when they are
// fewer than the part: input_checks.json then says what trained, beside
// the pool it was drawn from.
func (d *iidData) trainedSize(r *inputcheck.Report, kept []int) {
	k := slices.IndexFunc(d.parts, func(p inputcheck.Part) bool { return p.Name == "i.i.d. train" })
	if k < 0 {
		return
	}
	p := d.parts[k]
	p.Name, p.Rows = "i.i.d. train, trained on", datasets.Pick(p.Rows, kept)
	r.AddSizes(d.labelNames, []inputcheck.Part{p}, nil)
	if last := r.Parts[len(r.Parts)-1]; once(last.String()) {
		slog.Info("input data", "part", last.Name, "figures", last.String())
	}
}

// DataOf is what a run would train, validate and be scored on, read from
// its suite and i.i.d. files without a model: the record its trained.json
// will hold (beluga status --sizes for runs not done).
//
// It checks only what it reads: a run whose starting model or searched
// hyper-parameters another run provides (from_iid, a search's choice) is
// drawn the same before they exist.
func DataOf(spec RunSpec) (*Trained, error) {
	if _, err := LookupConfiguration(spec.Configuration); err != nil {
		return nil, err
	}
	suite, fold, err := spec.openSuite()
	if err != nil {
		return nil, err
	}
	if spec.ResolvedKind() == KindSpan {
		_, _, q, err := spec.spanIID()
		if err != nil {
			return nil, err
		}
		return spanTrainedRecord(spec, q, suite, fold), nil
	}
	iid, err := spec.readTaskIID()
	if err != nil {
		return nil, err
	}
	kept := trainPart(&spec, indices(len(iid.train)), func(i int) int { return iid.train[i].Label })
	return trainedRecord(spec, &iid, kept, suite, fold), nil
}
