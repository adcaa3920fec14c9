package metrics

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// refCalibration is testdata/calibration.json, written by
// gen_calibration.py with sklearn's calibration_curve and numpy.
type refCalibration struct {
	Fixtures []refCalibrationFixture
	Wilson   []struct {
		K, N   int
		Lo, Hi float64
	}
}

type refCalibrationFixture struct {
	Name   string
	Probs  [][]float64
	Pred   []int
	Gold   []int
	Curves []struct {
		Bins     int
		Strategy string
		Sklearn  struct{ Accuracy, Confidence []float64 }
		Numpy    struct {
			Edges  []float64
			Counts []int
			ECE    float64
		}
	}
	Brier          float64
	BrierSklearn2x *float64 `json:"brier_sklearn2x"`
}

// calibrationTolerance bounds the disagreement with numpy: the bins are
// the same (edges are computed in numpy's order of operations), so only
// the order of the ECE's additions can differ.
const calibrationTolerance = 1e-12

// TestCalibrationMatchesSklearn checks Calibrate against sklearn's
// calibration_curve (both strategies) and an ECE and Brier score computed
// with numpy, on fixtures that include confidences lying exactly on the
// equal-width edges, ties that empty equal-mass bins, and predictions whose
// class is not their argmax.
func TestCalibrationMatchesSklearn(t *testing.T) {
	b, err := os.ReadFile("testdata/calibration.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref refCalibration
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for _, f := range ref.Fixtures {
		preds := make([]Prediction, len(f.Probs))
		for i, p := range f.Probs {
			preds[i] = Prediction{Class: f.Pred[i], Probs: p}
		}
		for _, c := range f.Curves {
			binning, err := ParseBinning(c.Strategy)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Calibrate(preds, f.Gold, c.Bins, binning)
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			where := f.Name + " " + c.Strategy + " " + strings.Repeat("|", c.Bins)
			// Edges and counts: numpy's.
			for k, bin := range got.Bins {
				if bin.Lo != c.Numpy.Edges[k] || bin.Hi != c.Numpy.Edges[k+1] {
					t.Errorf("%s bin %d: edges (%v, %v], numpy (%v, %v]", where, k, bin.Lo, bin.Hi, c.Numpy.Edges[k], c.Numpy.Edges[k+1])
				}
				if bin.N != c.Numpy.Counts[k] {
					t.Errorf("%s bin %d: %d predictions, numpy %d", where, k, bin.N, c.Numpy.Counts[k])
				}
			}
			// The non-empty bins' accuracy and confidence: sklearn's.
			k := 0
			for _, bin := range got.Bins {
				if bin.N == 0 {
					continue
				}
				if k >= len(c.Sklearn.Accuracy) {
					t.Errorf("%s: more non-empty bins than sklearn's %d", where, len(c.Sklearn.Accuracy))
					break
				}
				for _, d := range []float64{bin.Accuracy - c.Sklearn.Accuracy[k], bin.Confidence - c.Sklearn.Confidence[k]} {
					worst = math.Max(worst, math.Abs(d))
				}
				if far(bin.Accuracy-c.Sklearn.Accuracy[k], calibrationTolerance) || far(bin.Confidence-c.Sklearn.Confidence[k], calibrationTolerance) {
					t.Errorf("%s non-empty bin %d: accuracy %v confidence %v, sklearn %v %v", where, k, bin.Accuracy, bin.Confidence, c.Sklearn.Accuracy[k], c.Sklearn.Confidence[k])
				}
				k++
			}
			if k != len(c.Sklearn.Accuracy) {
				t.Errorf("%s: %d non-empty bins, sklearn %d", where, k, len(c.Sklearn.Accuracy))
			}
			worst = math.Max(worst, math.Abs(got.ECE-c.Numpy.ECE))
			if far(got.ECE-c.Numpy.ECE, calibrationTolerance) {
				t.Errorf("%s: ECE %v, numpy %v", where, got.ECE, c.Numpy.ECE)
			}
			worst = math.Max(worst, math.Abs(got.Brier-f.Brier))
			if far(got.Brier-f.Brier, calibrationTolerance) {
				t.Errorf("%s: Brier %v, numpy %v", f.Name, got.Brier, f.Brier)
			}
			if f.BrierSklearn2x != nil && far(got.Brier-*f.BrierSklearn2x, calibrationTolerance) {
				t.Errorf("%s: Brier %v, twice sklearn's brier_score_loss %v", f.Name, got.Brier, *f.BrierSklearn2x)
			}
		}
	}
	t.Logf("largest difference from sklearn/numpy: %g", worst)
	for _, w := range ref.Wilson {
		lo, hi := Wilson(w.K, w.N, 1.959963984540054)
		if far(lo-w.Lo, 1e-12) || far(hi-w.Hi, 1e-12) {
			t.Errorf("Wilson(%d, %d) = [%v, %v], scipy [%v, %v]", w.K, w.N, lo, hi, w.Lo, w.Hi)
		}
	}
}

// TestCalibrationByHand checks the measures on cases small enough to work
// out: a perfectly calibrated bin, certain wrong answers, and the bad
// inputs refused.
func TestCalibrationByHand(t *testing.T) {
	// Four predictions at 0.75, three right: calibrated, ECE 0; Brier of
	// [0.75, 0.25]: right (0.0625+0.0625), wrong (0.5625+0.5625).
	preds := []Prediction{
		{Class: 0, Probs: []float64{0.75, 0.25}}, {Class: 0, Probs: []float64{0.75, 0.25}},
		{Class: 0, Probs: []float64{0.75, 0.25}}, {Class: 0, Probs: []float64{0.75, 0.25}},
	}
	c, err := Calibrate(preds, []int{0, 0, 0, 1}, 10, EqualWidth)
	if err != nil {
		t.Fatal(err)
	}
	if far(c.ECE, 1e-15) || far(c.Brier-(3*0.125+1.125)/4, 1e-15) || c.Bins[7].N != 4 || c.Accuracy != 0.75 {
		t.Errorf("calibrated bin: ECE %v Brier %v bin 7 %+v accuracy %v", c.ECE, c.Brier, c.Bins[7], c.Accuracy)
	}
	// Certain and wrong: ECE 1, Brier 2.
	c, err = Calibrate([]Prediction{{Class: 1, Probs: []float64{0, 1}}}, []int{0}, 5, EqualMass)
	if err != nil || c.ECE != 1 || c.Brier != 2 {
		t.Errorf("certain and wrong: ECE %v Brier %v (%v)", c.ECE, c.Brier, err)
	}
	// A scalar confidence (pred_only) has an ECE and no Brier score.
	c, err = Calibrate([]Prediction{{Class: 1, Conf: 1}}, []int{1}, 5, EqualWidth)
	if err != nil || c.ECE != 0 || !math.IsNaN(c.Brier) {
		t.Errorf("scalar confidence: ECE %v Brier %v (%v)", c.ECE, c.Brier, err)
	}
	for _, tc := range []struct {
		name  string
		preds []Prediction
		gold  []int
		bins  int
		want  string
	}{
		{"no predictions", nil, nil, 10, "no labelled predictions"},
		{"lengths", preds, []int{0}, 10, "4 predictions but 1 gold"},
		{"no bins", preds, []int{0, 0, 0, 0}, 0, "0 bins"},
		{"confidence above 1", []Prediction{{Class: 0, Probs: []float64{1.5, -0.5}}}, []int{0}, 10, "outside [0, 1]"},
		{"NaN confidence", []Prediction{{Class: 0, Probs: []float64{math.NaN(), 0}}}, []int{0}, 10, "outside [0, 1]"},
		{"gold outside", []Prediction{{Class: 0, Probs: []float64{1, 0}}}, []int{2}, 10, "gold class 2"},
		{"class outside", []Prediction{{Class: 3, Probs: []float64{1, 0}}}, []int{0}, 10, "class 3 outside"},
	} {
		if _, err := Calibrate(tc.preds, tc.gold, tc.bins, EqualWidth); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ParseBinning("sideways"); err == nil {
		t.Error("ParseBinning accepted an unknown binning")
	}
}

// TestCalibrateInputs reads labelled lines as train writes them: unlabelled
// inputs (INV, DIR) are left out, rightness is by label name, and the Brier
// score needs every gold label's class, known only from the predictions.
func TestCalibrateInputs(t *testing.T) {
	zero, one := 0, 1
	ins := []CaseInput{
		{Label: "pos", Pred: "pos", PredClass: &one, Probs: []float64{0.2, 0.8}},
		{Label: "neg", Pred: "neg", PredClass: &zero, Probs: []float64{0.6, 0.4}},
		{Label: "", Pred: "neg", PredClass: &zero, Probs: []float64{0.9, 0.1}}, // an INV input
		{Label: "neg", Pred: "pos", PredClass: &one, Probs: []float64{0.3, 0.7}},
	}
	c, err := CalibrateInputs(ins, 10, EqualWidth)
	if err != nil {
		t.Fatal(err)
	}
	wantBrier := (2*0.04 + 2*0.16 + 2*0.49) / 3
	// Bins: 0.6 (right) alone, 0.7 (wrong) alone, 0.8 (right) alone.
	wantECE := (0.4 + 0.7 + 0.2) / 3
	if c.N != 3 || far(c.Brier-wantBrier, 1e-15) || far(c.ECE-wantECE, 1e-15) {
		t.Errorf("N %d ECE %v Brier %v, want 3 %v %v", c.N, c.ECE, c.Brier, wantECE, wantBrier)
	}
	// "neutral" is never predicted: its class is unknown, so no Brier score.
	c, err = CalibrateInputs(append(ins, CaseInput{Label: "neutral", Pred: "pos", PredClass: &one, Probs: []float64{0.1, 0.9}}), 10, EqualWidth)
	if err != nil || c.N != 4 || !math.IsNaN(c.Brier) {
		t.Errorf("unknown gold class: N %d Brier %v (%v)", c.N, c.Brier, err)
	}
	if _, err := CalibrateInputs(ins[2:3], 10, EqualWidth); err == nil {
		t.Error("no labelled input measured")
	}
}

// far reports whether a difference exceeds tol, NaN included (a NaN
// result must not pass as close).
func far(d, tol float64) bool { return !(math.Abs(d) <= tol) }
