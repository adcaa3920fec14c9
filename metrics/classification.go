package metrics

import "fmt"

// ClassScores are one class's scores among labelled predictions.
type ClassScores struct {
	// Precision is the fraction of the predictions of the class that are
	// right, Recall the fraction of its gold examples predicted as it, F1
	// their harmonic mean; each 0 when its denominator is (scikit-learn's
	// zero_division=0).
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	// Support is the number of gold examples of the class, Predicted the
	// number of predictions of it.
	Support   int `json:"support"`
	Predicted int `json:"predicted"`
}

// Classification is how class predictions compare with gold labels: what
// Azimuth and scikit-learn's classification_report show for a labelled
// data set.
type Classification struct {
	N int `json:"n"`
	// Accuracy is the fraction of predictions equal to the gold class.
	Accuracy float64 `json:"accuracy"`
	// MacroF1 is the unweighted mean of every class's F1, over all the
	// task's classes (a class neither in the gold labels nor predicted
	// counts as 0, as in package train's macro_f1; scikit-learn averages
	// over the classes present unless given labels).
	MacroF1 float64 `json:"macro_f1"`
	// Classes holds each class's scores, in class order.
	Classes []ClassScores `json:"classes"`
	// Confusion[g][p] counts the examples of gold class g predicted as p.
	Confusion [][]int `json:"confusion"`
}

// Classify compares predicted with gold classes among classes classes.
func Classify(pred, gold []int, classes int) (Classification, error) {
	if len(pred) != len(gold) {
		return Classification{}, fmt.Errorf("classification: %d predictions but %d gold labels", len(pred), len(gold))
	}
	if len(pred) == 0 {
		return Classification{}, fmt.Errorf("classification: no labelled predictions")
	}
	if classes < 1 {
		return Classification{}, fmt.Errorf("classification: %d classes", classes)
	}
	c := Classification{N: len(pred), Classes: make([]ClassScores, classes), Confusion: make([][]int, classes)}
	for g := range c.Confusion {
		c.Confusion[g] = make([]int, classes)
	}
	right := 0
	for i := range pred {
		p, g := pred[i], gold[i]
		if p < 0 || p >= classes || g < 0 || g >= classes {
			return Classification{}, fmt.Errorf("classification: example %d: predicted class %d, gold class %d, outside the %d classes", i, p, g, classes)
		}
		c.Confusion[g][p]++
		if p == g {
			right++
		}
	}
	c.Accuracy = float64(right) / float64(len(pred))
	for k := range c.Classes {
		s := &c.Classes[k]
		tp := c.Confusion[k][k]
		for j := range classes {
			s.Support += c.Confusion[k][j]
			s.Predicted += c.Confusion[j][k]
		}
		if s.Predicted > 0 {
			s.Precision = float64(tp) / float64(s.Predicted)
		}
		if s.Support > 0 {
			s.Recall = float64(tp) / float64(s.Support)
		}
		s.F1 = f1(tp, s.Predicted, s.Support)
		c.MacroF1 += s.F1
	}
	c.MacroF1 /= float64(classes)
	return c, nil
}

// MacroF1 is the mean F1 over classes classes (see Classification), the
// i.i.d. metric macro_f1; pred and gold must be classes below classes.
func MacroF1(pred, gold []int, classes int) float64 {
	sum := 0.0
	for c := range classes {
		sum += F1(pred, gold, c)
	}
	return sum / float64(classes)
}
