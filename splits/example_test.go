package splits_test

import (
	"fmt"

	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// Assign gives every functionality BeLUGA's 50/25/25 split of its test
// cases (sklearn's train_test_split twice, numpy's legacy RandomState with
// seed 123): 34 cases become 17 / 8 / 9.
func ExampleAssign() {
	f := &suites.Functionality{Name: "single positive words", Class: "Vocabulary", Type: suites.MFT}
	for i := 0; i < 34; i++ {
		f.Cases = append(f.Cases, &suites.Case{ID: i, Inputs: []suites.Input{{Text: fmt.Sprint("word ", i)}}})
	}
	s := &suites.Suite{Name: "demo", Functionalities: []*suites.Functionality{f}}
	splits.Assign(s, splits.BeLUGASeed)
	n := map[suites.Split]int{}
	for _, c := range f.Cases {
		n[c.Split]++
	}
	fmt.Println(n[suites.SplitTrain], n[suites.SplitValidation], n[suites.SplitTest])
	// Output: 17 8 9
}
