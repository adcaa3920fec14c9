package train

import (
	"fmt"
	"strconv"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// Tokenizer encodes inputs for a model.
type Tokenizer interface {
	Encode(text, pair string, isPair bool) (models.Encoding, error)
}

// Row is one labelled training input: an MFT input or an i.i.d. example,
// with its soft target over the task's classes (e.g. BeLUGA's sentiment
// training labels).
type Row struct {
	Enc    models.Encoding
	Target []float64
	Env    string // environment: "MFT/<functionality>" or "iid"
	// Span is a span feature's answer start and end token (reading
	// comprehension; Data.SpanLength), Target unused.
	Span [2]int
}

// Perturbed is one INV or DIR training case: the original and its
// perturbations, of which each visit trains on one drawn at random.
type Perturbed struct {
	Orig      models.Encoding
	Perts     []models.Encoding
	Direction losses.Direction // DIR only
	Env       string
	// Labels, for QQP's label-DIR cases, holds the class of the original
	// and of each perturbation; WithOriginal says whether the original is
	// trained on too (REFERENCE 1.5).
	Labels       []int
	WithOriginal bool
	// Classes is the task's number of classes (label-DIR targets).
	Classes int
	// Aligns, for span INV cases, pairs the original's token positions with
	// each perturbation's (losses.AlignSpans), one per perturbation.
	Aligns []losses.SpanAlignment
}

// SuiteData is the training view of a suite split, by test type.
type SuiteData struct {
	MFT      []Row
	INV, DIR []Perturbed
	// LabelDIR holds QQP's DIR cases, trained as labelled pairs.
	LabelDIR []Perturbed
}

// encodeCached tokenizes with a cache: suites repeat texts heavily.
type encodeCached struct {
	tk    Tokenizer
	cache map[[3]string]models.Encoding
}

func (e *encodeCached) encode(in suites.Input) (models.Encoding, error) {
	pair := ""
	if in.IsPair {
		pair = "1"
	}
	k := [3]string{in.Text, in.Pair, pair}
	if enc, ok := e.cache[k]; ok {
		return enc, nil
	}
	enc, err := e.tk.Encode(in.Text, in.Pair, in.IsPair)
	if err != nil {
		return enc, err
	}
	e.cache[k] = enc
	return enc, nil
}

// BuildSuiteData turns the cases of split (skipping the cases a held-out
// fold withholds, when fold is not nil: its functionalities', or for a
// metadata fold the cases of its value) into training data for task:
// its targets of the suite's labels (BeLUGA's sentiment soft labels, QQP's
// one-hot labels and label-DIR cases), DIR directions, and the type a
// functionality is trained as.
func BuildSuiteData(s *suites.Suite, split suites.Split, fold *splits.Fold, tk Tokenizer, task *Task) (*SuiteData, error) {
	if err := task.CheckSuite(s); err != nil {
		return nil, err
	}
	enc := &encodeCached{tk: tk, cache: map[[3]string]models.Encoding{}}
	d := &SuiteData{}
	for _, f := range s.Functionalities {
		if fold != nil && fold.Remove(f) && !fold.ByMeta() {
			continue
		}
		tt := f.TrainType()
		tr, err := trainingOf(f)
		if err != nil {
			return nil, err
		}
		kind := kinds[tr.Kind]
		labelDIR := task.labelDIR && f.Train.Direction == "label"
		var dir losses.Direction
		if kind.directed && !labelDIR {
			rule := f.Train.Direction
			if rule == "" {
				rule = tr.Direction
			}
			if dir, err = losses.ParseDirection(rule); err != nil {
				return nil, fmt.Errorf("functionality %q: %w", f.Name, err)
			}
		}
		env := string(tt) + "/" + f.Name
		for c := range f.CasesIn(split) {
			if fold != nil && fold.HoldsOut(f, c) {
				continue
			}
			encs := make([]models.Encoding, len(c.Inputs))
			for i, in := range c.Inputs {
				e, err := enc.encode(in)
				if err != nil {
					return nil, fmt.Errorf("functionality %q case %d: %w", f.Name, c.ID, err)
				}
				encs[i] = e
			}
			if kind.rows != nil {
				for i, e := range encs {
					y, err := task.rowTarget(s, f, c, i)
					if err != nil {
						return nil, err
					}
					rows := kind.rows(d)
					*rows = append(*rows, Row{Enc: e, Target: y, Env: env})
				}
				continue
			}
			if len(encs) < 2 {
				continue // nothing to compare the original with
			}
			p := Perturbed{Orig: encs[0], Perts: encs[1:], Direction: dir, Env: env}
			if kind.directed && labelDIR {
				if p.Labels, err = caseClasses(f, c); err != nil {
					return nil, err
				}
				// The original is a known duplicate (paraphrases) or part
				// of the labelled triplet (implications); with names
				// changed it may or may not be one, so it is left out.
				p.WithOriginal = f.Train.Label == "1" || f.Train.Label == ""
				p.Classes = len(task.Labels)
				d.LabelDIR = append(d.LabelDIR, p)
				continue
			}
			pairs := kind.pairs(d)
			*pairs = append(*pairs, p)
		}
	}
	return d, nil
}

// caseClasses returns the training class of every input of a label-DIR case.
func caseClasses(f *suites.Functionality, c *suites.Case) ([]int, error) {
	out := make([]int, len(c.Inputs))
	for i := range out {
		if f.Train.Label != "" {
			l, err := strconv.Atoi(f.Train.Label)
			if err != nil {
				return nil, fmt.Errorf("functionality %q: training label %q", f.Name, f.Train.Label)
			}
			out[i] = l
			continue
		}
		l, ok := c.LabelFor(i)
		if !ok || l.IsAnswer {
			return nil, fmt.Errorf("functionality %q case %d: a label-DIR input without a class", f.Name, c.ID)
		}
		out[i] = l.Class
	}
	return out, nil
}

// IIDRows encodes labelled i.i.d. examples (texts or pairs, class indices
// below classes) as rows with one-hot targets, as BeLUGA trains SST-2 and
// QQP in IID+T.
func IIDRows(examples []datasets.Example, tk Tokenizer, classes int) ([]Row, error) {
	rows := make([]Row, len(examples))
	for i, ex := range examples {
		e, err := tk.Encode(ex.Text, ex.Pair, ex.IsPair)
		if err != nil {
			return nil, err
		}
		if ex.Label < 0 || ex.Label >= classes {
			return nil, fmt.Errorf("i.i.d. example %d: label %d (want 0 to %d)", i, ex.Label, classes-1)
		}
		rows[i] = Row{Enc: e, Env: "iid", Target: make([]float64, classes)}
		rows[i].Target[ex.Label] = 1
	}
	return rows, nil
}

// rowTarget is the target input i of a labelled-row case (MFT) trains
// toward: its suite label (mftLabel) as the task's probabilities.
func (t *Task) rowTarget(s *suites.Suite, f *suites.Functionality, c *suites.Case, i int) ([]float64, error) {
	label, err := mftLabel(f, c, i)
	if err != nil {
		return nil, err
	}
	y, err := t.target(s, label)
	if err != nil {
		return nil, fmt.Errorf("functionality %q case %d: %w", f.Name, c.ID, err)
	}
	return y, nil
}

// mftLabel is the suite label input i of an MFT case trains toward: the
// functionality's training label, else the case's class label for it.
func mftLabel(f *suites.Functionality, c *suites.Case, i int) (string, error) {
	if f.Train.Label != "" {
		return f.Train.Label, nil
	}
	l, ok := c.LabelFor(i)
	if !ok || l.IsAnswer {
		return "", fmt.Errorf("functionality %q case %d: an %s input without a class label", f.Name, c.ID, f.TrainType())
	}
	return strconv.Itoa(l.Class), nil
}
