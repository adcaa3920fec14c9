package suites_test

import (
	"fmt"
	"log"

	"github.com/beluga-nlp/beluga/suites"
)

// A suite is classes > functionalities > test cases; Load reads the native
// JSON-lines format (docs/suite-format.md).
func ExampleLoad() {
	s, err := suites.Load("testdata/tiny.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Name, s.Task, s.Classes())
	for _, f := range s.Functionalities {
		fmt.Printf("%s / %s (%s): %d cases\n", f.Class, f.Name, f.Type, len(f.Cases))
	}
	// Output:
	// tiny sentiment [Vocabulary Negation Robustness Taxonomy SRL]
	// Vocabulary / single positive words (MFT): 2 cases
	// Negation / not negative (MFT): 1 cases
	// Robustness / add typos (INV): 1 cases
	// Vocabulary / intensifiers (DIR): 1 cases
	// Taxonomy / synonym pairs (MFT): 1 cases
	// SRL / who did what (MFT): 1 cases
}
