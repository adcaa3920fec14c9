package azimuth_test

import (
	"fmt"

	"github.com/beluga-nlp/beluga/suites/azimuth"
)

func ExamplePerturb() {
	for _, m := range azimuth.Perturb("Well, I'm not sure.", 0, azimuth.DefaultOptions()) {
		if m.Family == azimuth.Punctuation || m.Test == "Contractions" {
			fmt.Printf("%s: %s\n", azimuth.Functionality(m.Test, m.Type), m.Text)
		}
	}
	// Output:
	// Question Mark: Replacement: Well, I'm not sure?
	// Ending Period: Deletion: Well, I'm not sure
	// Inner Comma: Deletion: Well I'm not sure.
	// Inner Period: Insertion: Well, I'm. not sure.
	// Contractions: Expansion: Well, I am not sure.
}
