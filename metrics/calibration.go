package metrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
)

// Calibration asks whether a model's confidence means what it says: of the
// predictions made with confidence 0.8, are 80 % right? It is measured on
// labelled predictions (the user's own data, a suite's labelled inputs, a
// run's i.i.d. test set) from the top label: each prediction's confidence
// is the probability it gives its predicted class, and it is correct when
// that class is the gold one (Guo et al., 2017, "On Calibration of Modern
// Neural Networks").
//
// The confidences are grouped into reliability bins, each bin's mean
// confidence set beside its accuracy (the reliability diagram), and the
// expected calibration error is the bins' mean gap weighted by their size:
//
//	ECE = Σ_b (n_b / N) · |accuracy_b − confidence_b|
//
// Two binnings are offered, as in scikit-learn's calibration_curve:
//
//   - EqualWidth (sklearn's strategy="uniform"): n bins of width 1/n, edges
//     i/n as numpy's linspace(0, 1, n+1) computes them. Simple to read, but
//     a confident model puts nearly everything in the last bin.
//   - EqualMass (sklearn's strategy="quantile"): edges at the i/n quantiles
//     of the confidences (numpy's linear percentile), so each bin holds
//     about N/n predictions; ties at an edge fall into one bin, which can
//     leave others empty. Less biased for confident models (Nixon et al.,
//     2019; Roelofs et al., 2022).
//
// A confidence c falls into bin b when edge_b < c ≤ edge_{b+1}; the first
// bin also holds c = edge_0 (numpy's searchsorted(edges[1:-1], c), side
// "left", as sklearn's calibration_curve assigns them). Empty bins carry
// no weight.
//
// The Brier score is Brier's (1950) original multi-class form, the mean
// squared distance between the probability vector and the one-hot gold
// label:
//
//	Brier = (1/N) Σ_i Σ_k (p_ik − [k = y_i])²
//
// between 0 (certain and right) and 2 (certain and wrong). For two classes
// it is twice scikit-learn's brier_score_loss, which scores only the
// positive class's probability. Lower is better for both measures.
//
// testdata/gen_calibration.py computes the same measures with sklearn and
// numpy on fixtures; TestCalibrationMatchesSklearn compares them.

// Binning is how confidences in [0, 1] are grouped into reliability bins.
type Binning string

// The binnings; see the package's calibration documentation above.
const (
	EqualWidth Binning = "width"
	EqualMass  Binning = "mass"
)

// DefaultBins is the number of reliability bins when none is given: 10, as
// in Guo et al. and sklearn's calibration_curve.
const DefaultBins = 10

// ParseBinning accepts a binning's name or sklearn's name for it (uniform,
// quantile).
func ParseBinning(s string) (Binning, error) {
	switch s {
	case "width", "equal-width", "uniform":
		return EqualWidth, nil
	case "mass", "equal-mass", "quantile":
		return EqualMass, nil
	}
	return "", fmt.Errorf("unknown binning %q (want width or mass; sklearn's uniform and quantile)", s)
}

// ReliabilityBin is one bin of a reliability diagram.
type ReliabilityBin struct {
	// Lo and Hi are the bin's edges: it holds confidences in (Lo, Hi], the
	// first bin [Lo, Hi].
	Lo, Hi float64
	// N is the number of predictions in the bin.
	N int
	// Confidence is their mean confidence, Accuracy the fraction of them
	// that are right; both NaN when the bin is empty.
	Confidence, Accuracy float64
}

// Gap is the bin's accuracy minus its confidence: negative when the model
// is over-confident there.
func (b ReliabilityBin) Gap() float64 { return b.Accuracy - b.Confidence }

// Calibration is how well the confidences of N labelled predictions match
// their accuracy.
type Calibration struct {
	N       int
	Binning Binning
	// Bins are all the bins, empty ones included, in order of confidence.
	Bins []ReliabilityBin
	// ECE is the expected calibration error, in [0, 1].
	ECE float64
	// Brier is the multi-class Brier score, in [0, 2]; NaN when a
	// prediction carries no probability per class.
	Brier float64
	// Accuracy is the fraction of predictions that are right, Confidence
	// their mean confidence: over-confident when Confidence > Accuracy.
	Accuracy, Confidence float64
}

// Reliability bins N confidences in [0, 1] with whether each prediction was
// right, into bins bins of the binning, and computes the expected
// calibration error. Brier is left NaN (it needs the probability vectors:
// see Calibrate).
func Reliability(conf []float64, correct []bool, bins int, b Binning) (Calibration, error) {
	if len(conf) != len(correct) {
		return Calibration{}, fmt.Errorf("calibration: %d confidences but %d verdicts", len(conf), len(correct))
	}
	if len(conf) == 0 {
		return Calibration{}, fmt.Errorf("calibration: no labelled predictions")
	}
	if bins < 1 {
		return Calibration{}, fmt.Errorf("calibration: %d bins (want at least 1)", bins)
	}
	for i, c := range conf {
		if !(c >= 0 && c <= 1) {
			return Calibration{}, fmt.Errorf("calibration: confidence %d is %v, outside [0, 1]", i, c)
		}
	}
	edges, err := binEdges(conf, bins, b)
	if err != nil {
		return Calibration{}, err
	}
	out := Calibration{N: len(conf), Binning: b, Bins: make([]ReliabilityBin, bins), Brier: math.NaN()}
	sumConf := make([]float64, bins)
	sumRight := make([]float64, bins)
	inner := edges[1:bins]
	right := 0
	for i, c := range conf {
		k := sort.SearchFloat64s(inner, c)
		out.Bins[k].N++
		sumConf[k] += c
		out.Confidence += c
		if correct[i] {
			sumRight[k]++
			right++
		}
	}
	n := float64(len(conf))
	for k := range out.Bins {
		bin := &out.Bins[k]
		bin.Lo, bin.Hi = edges[k], edges[k+1]
		if bin.N == 0 {
			bin.Confidence, bin.Accuracy = math.NaN(), math.NaN()
			continue
		}
		m := float64(bin.N)
		bin.Confidence, bin.Accuracy = sumConf[k]/m, sumRight[k]/m
		out.ECE += m / n * math.Abs(bin.Accuracy-bin.Confidence)
	}
	out.Accuracy, out.Confidence = float64(right)/n, out.Confidence/n
	return out, nil
}

// binEdges returns the bins+1 edges of the binning over conf, computed as
// numpy does for sklearn's calibration_curve so that a confidence on an
// edge falls into the same bin: linspace(0, 1, bins+1), or
// percentile(conf, linspace(0, 1, bins+1)·100).
func binEdges(conf []float64, bins int, b Binning) ([]float64, error) {
	step := 1 / float64(bins)
	edges := make([]float64, bins+1)
	for i := range edges {
		edges[i] = float64(i) * step
	}
	edges[bins] = 1
	switch b {
	case EqualWidth:
	case EqualMass:
		sorted := slices.Clone(conf)
		slices.Sort(sorted)
		for i, q := range edges {
			edges[i] = Percentile(sorted, q*100)
		}
	default:
		return nil, fmt.Errorf("calibration: unknown binning %q", b)
	}
	return edges, nil
}

// Brier is the multi-class Brier score of probability vectors against gold
// classes (see the calibration documentation above): 0 for certain right
// answers, 2 for certain wrong ones.
func Brier(probs [][]float64, gold []int) (float64, error) {
	if len(probs) != len(gold) {
		return math.NaN(), fmt.Errorf("brier: %d probability vectors but %d gold labels", len(probs), len(gold))
	}
	if len(probs) == 0 {
		return math.NaN(), fmt.Errorf("brier: no labelled predictions")
	}
	sum := 0.0
	for i, p := range probs {
		if gold[i] < 0 || gold[i] >= len(p) {
			return math.NaN(), fmt.Errorf("brier: prediction %d has %d probabilities but gold class %d", i, len(p), gold[i])
		}
		s := 0.0
		for k, v := range p {
			d := v
			if k == gold[i] {
				d = v - 1
			}
			s += d * d
		}
		sum += s
	}
	return sum / float64(len(probs)), nil
}

// TopLabel returns each prediction's confidence (the probability of its
// predicted class; a scalar prediction's own confidence) and whether its
// class is the gold one.
func TopLabel(preds []Prediction, gold []int) (conf []float64, correct []bool, err error) {
	if len(preds) != len(gold) {
		return nil, nil, fmt.Errorf("calibration: %d predictions but %d gold labels", len(preds), len(gold))
	}
	conf, correct = make([]float64, len(preds)), make([]bool, len(preds))
	for i, p := range preds {
		if p.IsAnswer {
			return nil, nil, fmt.Errorf("calibration: prediction %d is an answer text, not a class", i)
		}
		conf[i] = p.Conf
		if p.Probs != nil {
			if p.Class < 0 || p.Class >= len(p.Probs) {
				return nil, nil, fmt.Errorf("calibration: prediction %d: class %d outside its %d probabilities", i, p.Class, len(p.Probs))
			}
			conf[i] = p.Probs[p.Class]
		}
		correct[i] = p.Class == gold[i]
	}
	return conf, correct, nil
}

// Calibrate measures the calibration of class predictions against gold
// classes: the reliability bins and ECE of their top labels, and the Brier
// score when every prediction carries a probability per class.
func Calibrate(preds []Prediction, gold []int, bins int, b Binning) (Calibration, error) {
	conf, correct, err := TopLabel(preds, gold)
	if err != nil {
		return Calibration{}, err
	}
	c, err := Reliability(conf, correct, bins, b)
	if err != nil {
		return Calibration{}, err
	}
	probs := make([][]float64, len(preds))
	for i, p := range preds {
		if p.Probs == nil {
			return c, nil
		}
		probs[i] = p.Probs
	}
	if c.Brier, err = Brier(probs, gold); err != nil {
		return Calibration{}, err
	}
	return c, nil
}

// CalibrateInputs measures the calibration of the labelled inputs among
// the lines of case files (train's cases.jsonl) and i.i.d. prediction
// files (iid_predictions.jsonl): those with a gold label, a predicted
// class and probabilities. A prediction is right when its label's name is
// the gold one. The Brier score needs each gold label's class index, which
// the lines give only through the predictions (pred, pred_class): it is
// NaN when some gold label is never predicted. n is the number of inputs
// used; none is an error.
func CalibrateInputs(ins []CaseInput, bins int, b Binning) (c Calibration, err error) {
	return calibrateInputs(ins, classesOf(ins), bins, b)
}

// classesOf maps the label names the lines predict to their classes.
func classesOf(ins []CaseInput) map[string]int {
	class := map[string]int{}
	for _, in := range ins {
		if in.PredClass != nil {
			class[in.Pred] = *in.PredClass
		}
	}
	return class
}

// labelled reports whether a line can be measured: a gold label, and a
// predicted class among its probabilities.
func labelled(in CaseInput) bool {
	return in.Label != "" && in.PredClass != nil && *in.PredClass >= 0 && *in.PredClass < len(in.Probs)
}

// AnyLabelled reports whether some line can be measured (labelled): what
// CalibrateInputs needs not to fail for want of lines.
func AnyLabelled(ins []CaseInput) bool { return slices.ContainsFunc(ins, labelled) }

// calibrateInputs is CalibrateInputs with the classes of the label names
// given (learnt from a larger set of lines than those measured).
func calibrateInputs(ins []CaseInput, class map[string]int, bins int, b Binning) (c Calibration, err error) {
	var conf []float64
	var correct []bool
	var used []CaseInput
	for _, in := range ins {
		if !labelled(in) {
			continue
		}
		conf = append(conf, in.Probs[*in.PredClass])
		correct = append(correct, in.Pred == in.Label)
		used = append(used, in)
	}
	if c, err = Reliability(conf, correct, bins, b); err != nil {
		return c, err
	}
	probs, gold := make([][]float64, len(used)), make([]int, len(used))
	for i, in := range used {
		k, ok := class[in.Label]
		if !ok {
			return c, nil
		}
		probs[i], gold[i] = in.Probs, k
	}
	if c.Brier, err = Brier(probs, gold); err != nil {
		return Calibration{}, err
	}
	return c, nil
}

// ReadInputLines reads a file of prediction lines, one CaseInput a line:
// train's iid_predictions.jsonl. Errors name the file and line.
func ReadInputLines(path string) ([]CaseInput, error) { return readJSONLines[CaseInput](path) }

// readJSONLines reads a file of one JSON value a line, blank lines
// skipped; an error names the file and line as path:line.
func readJSONLines[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Wilson is the Wilson score interval of a proportion of k successes in n
// trials at the normal quantile z (1.96 for 95 %): better behaved than the
// normal approximation near 0 and 1 and with few trials, where a worst
// group's pass rate usually lies. Both ends are NaN when n is 0.
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return math.NaN(), math.NaN()
	}
	p, nf := float64(k)/float64(n), float64(n)
	z2 := z * z
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return math.Max(0, centre-half), math.Min(1, centre+half)
}
