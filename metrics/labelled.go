package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// Labelled is how a classifier does on labelled data beside a suite —
// the user's own dev set, as Azimuth shows it: accuracy, macro-F1,
// per-class precision and recall, the confusion matrix, and calibration
// in both binnings.
type Labelled struct {
	// Name says what the data is (a file name).
	Name string `json:"name"`
	// Labels are the class names, in class order.
	Labels         []string `json:"labels"`
	Classification `json:"classification"`
	// Width and Mass are the calibration over equal-width and equal-mass
	// bins (the same Brier score).
	Width Calibration `json:"calibration_width"`
	Mass  Calibration `json:"calibration_mass"`
}

// MeasureLabelled measures predictions against gold classes among labels.
func MeasureLabelled(name string, labels []string, preds []Prediction, gold []int, bins int) (*Labelled, error) {
	pred := make([]int, len(preds))
	for i, p := range preds {
		pred[i] = p.Class
	}
	c, err := Classify(pred, gold, len(labels))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	l := &Labelled{Name: name, Labels: labels, Classification: c}
	if l.Width, err = Calibrate(preds, gold, bins, EqualWidth); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if l.Mass, err = Calibrate(preds, gold, bins, EqualMass); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}

// FunctionalityCalibration is one functionality's calibration on its
// labelled inputs.
type FunctionalityCalibration struct {
	Functionality string      `json:"functionality"`
	Class         string      `json:"class"`
	Calibration   Calibration `json:"calibration"`
}

// Calibrations measures, per functionality of the result in suite order,
// the calibration on its labelled inputs (those with an expected label:
// MFT cases; INV and DIR compare predictions with each other and are left
// out), and over all of them together, first, as functionality "(all
// labelled inputs)". Cases filtered out count too: filtering says nothing
// of an input's label. Functionalities without labelled inputs are left
// out; none at all gives none.
func (r *Result) Calibrations(bins int, b Binning) ([]FunctionalityCalibration, error) {
	by := map[string][]CaseInput{}
	var order, classes []string
	var all, every []CaseInput
	for _, c := range r.Cases {
		if _, ok := by[c.Functionality]; !ok {
			order, classes = append(order, c.Functionality), append(classes, c.Class)
			by[c.Functionality] = nil
		}
		every = append(every, c.Inputs...)
		for _, in := range c.Inputs {
			if labelled(in) {
				by[c.Functionality] = append(by[c.Functionality], in)
				all = append(all, in)
			}
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	// A test's gold label may be one its inputs never get predicted (a
	// neutral test): the classes come from every prediction of the suite.
	known := classesOf(every)
	one := func(name, class string, ins []CaseInput) (FunctionalityCalibration, error) {
		c, err := calibrateInputs(ins, known, bins, b)
		if err != nil {
			return FunctionalityCalibration{}, fmt.Errorf("functionality %s: %w", name, err)
		}
		return FunctionalityCalibration{Functionality: name, Class: class, Calibration: c}, nil
	}
	first, err := one(AllLabelledInputs, "", all)
	if err != nil {
		return nil, err
	}
	out := []FunctionalityCalibration{first}
	for i, f := range order {
		if len(by[f]) == 0 {
			continue
		}
		fc, err := one(f, classes[i], by[f])
		if err != nil {
			return nil, err
		}
		out = append(out, fc)
	}
	return out, nil
}

// AllLabelledInputs names the line of Calibrations over every labelled
// input of the suite.
const AllLabelledInputs = "(all labelled inputs)"

// CaseConfidences returns the confidence of each scored case that passed
// and of each that failed: the probability the model gave its prediction
// for the case's first input (the original of an INV or DIR case, the one
// input of an MFT case). Filtered cases and inputs without probabilities
// are left out.
func (r *Result) CaseConfidences() (passing, failing []float64) {
	for _, c := range r.Cases {
		if len(c.Inputs) == 0 || c.Verdict == Filtered {
			continue
		}
		in := c.Inputs[0]
		if in.PredClass == nil || *in.PredClass < 0 || *in.PredClass >= len(in.Probs) {
			continue
		}
		conf := in.Probs[*in.PredClass]
		if c.Verdict == Fail {
			failing = append(failing, conf)
		} else {
			passing = append(passing, conf)
		}
	}
	return passing, failing
}

// WriteMarkdown writes the labelled data's measures: the headline numbers,
// per-class precision, recall and F1, and the confusion matrix.
func (l *Labelled) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d labelled examples: accuracy %.1f%%, macro-F1 %.1f%%; ECE %.3f (%d equal-width bins), %.3f (equal-mass)",
		l.N, 100*l.Accuracy, 100*l.MacroF1, l.Width.ECE, len(l.Width.Bins), l.Mass.ECE)
	if !math.IsNaN(l.Width.Brier) {
		fmt.Fprintf(&b, ", Brier %.3f", l.Width.Brier)
	}
	fmt.Fprintf(&b, "; mean confidence %.1f%%.\n\n", 100*l.Width.Confidence)
	b.WriteString("| class | precision | recall | F1 | gold | predicted |\n|---|---:|---:|---:|---:|---:|\n")
	for k, c := range l.Classes {
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.1f | %d | %d |\n", mdCell(l.Labels[k]), 100*c.Precision, 100*c.Recall, 100*c.F1, c.Support, c.Predicted)
	}
	b.WriteString("\nConfusion matrix (rows: gold class, columns: predicted class)\n\n| gold \\ predicted |")
	for _, name := range l.Labels {
		b.WriteString(" " + mdCell(name) + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(l.Labels)) + "\n")
	for g, row := range l.Confusion {
		b.WriteString("| " + mdCell(l.Labels[g]) + " |")
		for _, n := range row {
			fmt.Fprintf(&b, " %d |", n)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell keeps a name from breaking a Markdown table row.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}

// calibrationJSON is a Calibration as JSON holds it: NaN as null.
type calibrationJSON struct {
	N          int       `json:"n"`
	Binning    Binning   `json:"binning"`
	ECE        *float64  `json:"ece"`
	Brier      *float64  `json:"brier"`
	Accuracy   *float64  `json:"accuracy"`
	Confidence *float64  `json:"confidence"`
	Bins       []binJSON `json:"bins"`
}

type binJSON struct {
	Lo         float64  `json:"lo"`
	Hi         float64  `json:"hi"`
	N          int      `json:"n"`
	Confidence *float64 `json:"confidence"`
	Accuracy   *float64 `json:"accuracy"`
}

// nullable is v, or nil for NaN.
func nullable(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// orNaN is *p, or NaN for nil.
func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// UnmarshalJSON reads what MarshalJSON writes, null as NaN.
func (c *Calibration) UnmarshalJSON(b []byte) error {
	var j calibrationJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Calibration{N: j.N, Binning: j.Binning, ECE: orNaN(j.ECE), Brier: orNaN(j.Brier), Accuracy: orNaN(j.Accuracy), Confidence: orNaN(j.Confidence)}
	for _, x := range j.Bins {
		c.Bins = append(c.Bins, ReliabilityBin{Lo: x.Lo, Hi: x.Hi, N: x.N, Confidence: orNaN(x.Confidence), Accuracy: orNaN(x.Accuracy)})
	}
	return nil
}

// MarshalJSON writes a calibration with its NaNs (an empty bin's mean, a
// Brier score without probabilities) as null, which JSON can hold.
func (c Calibration) MarshalJSON() ([]byte, error) {
	j := calibrationJSON{N: c.N, Binning: c.Binning, ECE: nullable(c.ECE), Brier: nullable(c.Brier), Accuracy: nullable(c.Accuracy), Confidence: nullable(c.Confidence)}
	for _, b := range c.Bins {
		j.Bins = append(j.Bins, binJSON{Lo: b.Lo, Hi: b.Hi, N: b.N, Confidence: nullable(b.Confidence), Accuracy: nullable(b.Accuracy)})
	}
	return json.Marshal(j)
}
