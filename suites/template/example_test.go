package template_test

import (
	"fmt"

	"github.com/beluga-nlp/beluga/suites/template"
)

func ExampleGenerate() {
	src := []byte(`name: example
class: Vocabulary
functionality: articles
type: MFT
label: positive
template: "It is {a:adj} {thing}."
lexicons:
  adj: [excellent, good]
  thing: [seat, meal]
`)
	res, err := template.Generate(src, "example.yaml", template.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Suite.Functionalities[0].Cases {
		fmt.Println(c.Inputs[0].Text)
	}
	// Output:
	// It is an excellent seat.
	// It is an excellent meal.
	// It is a good seat.
	// It is a good meal.
}
