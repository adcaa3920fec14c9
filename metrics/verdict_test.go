package metrics

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

func intp(i int) *int { return &i }

// pp builds a 3-class sentiment prediction from its probabilities.
func pp(p0, p1, p2 float64) Prediction {
	probs := []float64{p0, p1, p2}
	return Prediction{Class: Argmax(probs), Probs: probs}
}

func cls(c int) Prediction { return Prediction{Class: c, Probs: oneHot(c)} }

func oneHot(c int) []float64 {
	p := []float64{0, 0}
	p[c] = 1
	return p
}

var (
	expEq       = suites.Expectation{Kind: suites.ExpectEq, Agg: suites.AggAll}
	expPredNot0 = suites.Expectation{Kind: suites.ExpectPredNot, Value: intp(0), Agg: suites.AggAll}
	expNeutral  = suites.Expectation{Kind: suites.ExpectAllowForNeutral, Agg: suites.AggAll}
	expInv      = suites.Expectation{Kind: suites.ExpectInv, Tolerance: 0.1, Agg: suites.AggAllExceptFirst}
	expIntens   = suites.Expectation{Kind: suites.ExpectMonotonic, Increasing: true, Tolerance: 0.1, Slice: "orig_pred != 1", SliceAgg: suites.AggAllExceptFirst, Agg: suites.AggAllExceptFirst, Direction: "not_less_confident"}
	expReduce   = suites.Expectation{Kind: suites.ExpectMonotonic, Increasing: false, Tolerance: 0.1, Slice: "orig_pred != 1", SliceAgg: suites.AggAllExceptFirst, Agg: suites.AggAllExceptFirst, Direction: "not_more_confident"}
	expAddPos   = suites.Expectation{Kind: suites.ExpectPositiveChange, Tolerance: 0.1, Direction: "not_more_negative", Agg: suites.AggAllExceptFirst}
	expAddNeg   = suites.Expectation{Kind: suites.ExpectPositiveChange, Tolerance: 0.1, Direction: "not_more_positive", Agg: suites.AggAllExceptFirst}
	expQQPName  = suites.Expectation{Kind: suites.ExpectEq, Value: intp(0), Slice: "orig_pred == 1", SliceAgg: suites.AggAll, Agg: suites.AggAllExceptFirst, Direction: "pred_is_0"}
	expQQPPara  = suites.Expectation{Kind: suites.ExpectEq, Value: intp(1), Agg: suites.AggAll, Direction: "pred_is_1"}
	expTriplet  = suites.Expectation{Kind: suites.ExpectImplicationTriplet, Agg: suites.AggAllExceptFirst}
)

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name   string
		expect suites.Expectation
		labels []suites.Label
		preds  []Prediction
		opt    Options
		want   Verdict
	}{
		{"eq pass", expEq, []suites.Label{suites.ClassLabel(2)}, []Prediction{pp(.1, 0, .9)}, Options{}, Pass},
		{"eq fail", expEq, []suites.Label{suites.ClassLabel(2)}, []Prediction{pp(.9, 0, .1)}, Options{}, Fail},
		{"eq without label fails", expEq, nil, []Prediction{pp(.9, 0, .1)}, Options{}, Fail},
		{"not negative: neutral passes", expPredNot0, nil, []Prediction{pp(.3, .7, 0)}, Options{}, Pass},
		{"not negative: negative fails", expPredNot0, nil, []Prediction{pp(.8, 0, .2)}, Options{}, Fail},
		{"allow for neutral: positive on neutral label", expNeutral, []suites.Label{suites.ClassLabel(1)}, []Prediction{pp(.1, 0, .9)}, Options{}, Pass},
		{"allow for neutral: negative on neutral label", expNeutral, []suites.Label{suites.ClassLabel(1)}, []Prediction{pp(.9, 0, .1)}, Options{}, Fail},
		{"allow for neutral: other labels need equality", expNeutral, []suites.Label{suites.ClassLabel(0)}, []Prediction{pp(.3, .7, 0)}, Options{}, Fail},
		{"INV same class", expInv, nil, []Prediction{pp(.1, 0, .9), pp(.3, 0, .7)}, Options{}, Pass},
		{"INV class flips within tolerance", expInv, nil, []Prediction{pp(0, .55, .45), pp(0, .46, .54)}, Options{}, Pass},
		{"INV class flips beyond tolerance", expInv, nil, []Prediction{pp(0, .6, .4), pp(0, .4, .6)}, Options{}, Fail},
		{"INV tolerance option", expInv, nil, []Prediction{pp(0, .6, .4), pp(0, .4, .6)}, Options{Tolerance: ptr(0.25)}, Pass},
		{"INV ignores the original", expInv, nil, []Prediction{pp(.9, 0, .1)}, Options{}, Pass},
		{"intensifier keeps confidence", expIntens, nil, []Prediction{pp(.05, 0, .95), pp(.1, 0, .9)}, Options{}, Pass},
		{"intensifier loses confidence", expIntens, nil, []Prediction{pp(.05, 0, .95), pp(.25, 0, .75)}, Options{}, Fail},
		{"intensifier sliced: neutral original", expIntens, nil, []Prediction{pp(.2, .8, 0), pp(1, 0, 0)}, Options{}, Filtered},
		{"intensifier filtered: original confidence ≤ 0.1", expIntens, nil, []Prediction{pp(0, 0, 0), pp(0, 0, 1)}, Options{}, Filtered},
		{"reducer filtered: original confidence ≥ 0.9", expReduce, nil, []Prediction{pp(.05, 0, .95), pp(.0, 0, 1)}, Options{}, Filtered},
		{"reducer lowers confidence", expReduce, nil, []Prediction{pp(.2, 0, .8), pp(.4, 0, .6)}, Options{}, Pass},
		{"reducer raises confidence too much", expReduce, nil, []Prediction{pp(.2, 0, .8), pp(.05, 0, .95)}, Options{}, Fail},
		{"add positive: moves negative within tolerance", expAddPos, nil, []Prediction{pp(.5, 0, .5), pp(.52, 0, .48)}, Options{}, Pass},
		{"add positive: moves negative", expAddPos, nil, []Prediction{pp(.5, 0, .5), pp(.7, 0, .3)}, Options{}, Fail},
		{"add negative: moves positive", expAddNeg, nil, []Prediction{pp(.5, 0, .5), pp(.3, 0, .7)}, Options{}, Fail},
		{"add negative: moves negative", expAddNeg, nil, []Prediction{pp(.5, 0, .5), pp(.9, 0, .1)}, Options{}, Pass},
		{"QQP name change: non-duplicate", expQQPName, nil, []Prediction{cls(1), cls(0), cls(0)}, Options{}, Pass},
		{"QQP name change: still duplicate", expQQPName, nil, []Prediction{cls(1), cls(0), cls(1)}, Options{}, Fail},
		{"QQP name change: sliced out", expQQPName, nil, []Prediction{cls(0), cls(1), cls(1)}, Options{}, Filtered},
		{"QQP paraphrase includes the first pair", expQQPPara, nil, []Prediction{cls(0), cls(1)}, Options{}, Fail},
		{"triplet: transitive", expTriplet, nil, []Prediction{cls(1), cls(1), cls(1)}, Options{}, Pass},
		{"triplet: not transitive", expTriplet, nil, []Prediction{cls(1), cls(1), cls(0)}, Options{}, Fail},
		{"triplet: CheckList always fails (0,1,·)", expTriplet, nil, []Prediction{cls(0), cls(1), cls(0)}, Options{}, Fail},
		{"triplet: corrected (0,1,0) passes", expTriplet, nil, []Prediction{cls(0), cls(1), cls(0)}, Options{Triplet: TripletCorrected}, Pass},
		{"triplet: CheckList filters (1,0,·)", expTriplet, nil, []Prediction{cls(1), cls(0), cls(1)}, Options{}, Filtered},
		{"triplet: corrected (1,0,1) fails", expTriplet, nil, []Prediction{cls(1), cls(0), cls(1)}, Options{Triplet: TripletCorrected}, Fail},
		{"triplet: (0,0,·) filtered", expTriplet, nil, []Prediction{cls(0), cls(0), cls(1)}, Options{}, Filtered},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &suites.Functionality{Name: "f", Expect: tc.expect}
			c := &suites.Case{Labels: tc.labels, Inputs: make([]suites.Input, len(tc.preds))}
			got, err := Evaluate(f, c, tc.preds, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("verdict %s, want %s", got, tc.want)
			}
		})
	}
}

func ptr(f float64) *float64 { return &f }

func TestSquash(t *testing.T) {
	margin := 1 / 3.
	lo, hi := 0.5-margin/2, 0.5+margin/2 // runtime float64 arithmetic, as numpy does
	tests := []struct {
		p     float64
		mode  SquashMode
		class int
		probs [3]float64
	}{
		{0.2, SquashCheckList, 0, [3]float64{0.8, 0, 0.2}},
		{0.9, SquashCheckList, 2, [3]float64{0.09999999999999998, 0, 0.9}},
		{0.5, SquashCheckList, 1, [3]float64{0, 1, 0}},
		{0.4, SquashCheckList, 1, [3]float64{1 - (1 - 3*0.09999999999999998), 1 - 3*0.09999999999999998, 0}},
		{lo, SquashCheckList, 0, [3]float64{0, 0, 0}},
		{hi, SquashCheckList, 0, [3]float64{0, 0, 0}},
		{lo, SquashCorrected, 0, [3]float64{1 - lo, 0, lo}},
		{hi, SquashCorrected, 2, [3]float64{1 - hi, 0, hi}},
		{margin, SquashCheckList, 0, [3]float64{1 - margin, 0, margin}}, // 1/3 in float64 lies below the band
	}
	for _, tc := range tests {
		got := Squash(tc.p, tc.mode)
		if got.Class != tc.class || [3]float64(got.Probs) != tc.probs {
			t.Errorf("Squash(%v, %v) = %d %v, want %d %v", tc.p, tc.mode, got.Class, got.Probs, tc.class, tc.probs)
		}
	}
}

func TestReadPredictionsErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, text string
		format     Format
		want       string
	}{
		{"too few", "0 0.9 0.1\n", PredAndSoftmax, "line 1: 1 predictions for 2 scored inputs"},
		{"too many", "0 0.9 0.1\n1 0.2 0.8\n0 0.7 0.3\n", PredAndSoftmax, "line 3: more predictions than the 2 scored inputs"},
		{"not a number", "0 0.9 0.1\n1 0.2 x\n", PredAndSoftmax, "line 2 field probability 1"},
		{"bad sum", "0.5 0.6\n0.1 0.9\n", Softmax, "line 1 field probabilities: sum to 1.1"},
		{"class out of range", "3 0.9 0.1\n0 0.9 0.1\n", PredAndSoftmax, "line 1 field pred"},
		{"binary not a probability", "0.3\n1.7\n", BinaryConf, "line 2 field probability 0"},
		{"pred_only not a class", "1\npositive\n", PredOnly, "line 2 field pred"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			os.WriteFile(path, []byte(tc.text), 0o644)
			_, err := ReadPredictions(path, tc.format, 2, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want it to name %s and contain %q", err, path, tc.want)
			}
		})
	}
}

func TestReadPredictionsFormats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p")
	os.WriteFile(path, []byte("0.5\n0.7\n"), 0o644)
	ps, err := ReadPredictions(path, BinaryConf, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].Class != 0 || ps[1].Class != 1 || ps[1].Probs[1] != 0.7 {
		t.Errorf("binary_conf read as %+v (a tie must predict 0)", ps)
	}
}

// TestSquash32MatchesNumpy checks Squash32 against BeLUGA's pred_and_conf
// run by numpy on a float32 softmax (testdata/gen_squash32.py), the band
// edges included: squashing the widened float64 value (Squash) gets
// float32(1/3) and float32(2/3) wrong.
func TestSquash32MatchesNumpy(t *testing.T) {
	b, err := os.ReadFile("testdata/squash32.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref []struct {
		P     float64
		Class int
		Probs [3]float64
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	differs := 0
	for _, r := range ref {
		got := Squash32(float32(r.P), SquashCheckList)
		if got.Class != r.Class || [3]float64(got.Probs) != r.Probs {
			t.Errorf("Squash32(%v) = %d %v, numpy %d %v", float32(r.P), got.Class, got.Probs, r.Class, r.Probs)
		}
		if wide := Squash(r.P, SquashCheckList); wide.Class != r.Class || [3]float64(wide.Probs) != r.Probs {
			differs++
		}
	}
	if differs == 0 {
		t.Error("no reference value tells float32 squashing from float64 squashing")
	}
}

// TestScoreFloat32 checks that Options.Float32 reaches the squashing of
// 2-way sentiment predictions: at p = float32(2/3) BeLUGA's float32 model
// predicts negative (CheckList's edge), the widened value neutral.
func TestScoreFloat32(t *testing.T) {
	s := &suites.Suite{Name: "s", Task: "sentiment", Labels: []string{"negative", "neutral", "positive"}, ModelLabels: []string{"negative", "positive"},
		Functionalities: []*suites.Functionality{{Name: "f", Class: "c", Type: suites.MFT,
			Expect: suites.Expectation{Kind: suites.ExpectEq, Value: intp(0), Agg: suites.AggAll},
			Cases:  []*suites.Case{{ID: 0, Inputs: []suites.Input{{Text: "x"}}}}}}}
	p := float64(float32(2.0 / 3))
	pred := []Prediction{{Class: 1, Probs: []float64{1 - p, p}}}
	for _, tc := range []struct {
		float32 bool
		want    Verdict
	}{{false, Fail}, {true, Pass}} {
		r, err := Score(s, pred, ScoreOptions{Options: Options{Float32: tc.float32}})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Cases[0].Verdict; got != tc.want {
			t.Errorf("Float32 %v: verdict %v, want %v", tc.float32, got, tc.want)
		}
	}
}

// TestModesReadWhatTheyWrite: a result's triplet and squash modes are read
// back from the names they are written with, and another name is refused
// naming the kind of mode.
func TestModesReadWhatTheyWrite(t *testing.T) {
	type opts struct {
		Triplet TripletMode `json:"triplet"`
		Squash  SquashMode  `json:"squash"`
	}
	for _, in := range []opts{{TripletCheckList, SquashCheckList}, {TripletCorrected, SquashCorrected}, {TripletCorrected, SquashCheckList}} {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out opts
		if err := json.Unmarshal(b, &out); err != nil || out != in {
			t.Errorf("%s read back as %+v (%v), want %+v", b, out, err, in)
		}
	}
	for _, tc := range []struct{ json, want string }{
		{`{"triplet":"faithful"}`, `triplet mode "faithful": want checklist or corrected`},
		{`{"squash":"Corrected"}`, `squash mode "Corrected": want checklist or corrected`},
	} {
		var out opts
		if err := json.Unmarshal([]byte(tc.json), &out); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.json, err, tc.want)
		}
	}
}
