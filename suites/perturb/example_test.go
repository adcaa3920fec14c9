package perturb_test

import (
	"fmt"

	"github.com/beluga-nlp/beluga/suites/perturb"
)

func ExampleApply() {
	p, _ := perturb.Lookup("contractions", perturb.Options{})
	cases, st := perturb.Apply([]string{"I can't wait.", "Nothing to do.", "It is what it is"}, p.Fn, 0, 1)
	for _, c := range cases {
		fmt.Printf("%q\n", c)
	}
	fmt.Printf("applied to %d of %d\n", st.Applied, st.Examples)
	// Output:
	// ["I can't wait." "I cannot wait."]
	// ["It is what it is" "It's what it is"]
	// applied to 2 of 3
}
