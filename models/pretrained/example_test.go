package pretrained_test

import (
	"context"
	"fmt"
	"log"

	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/pretrained"
)

// Load a hub checkpoint for a 3-class task (a new classifier head is
// initialised), predict, and save the model with its tokenizer. Not run:
// it needs the checkpoint in the hub cache or the network.
func ExampleLoad() {
	m, err := pretrained.Load(context.Background(), "google/bert_uncased_L-2_H-128_A-2",
		pretrained.Options{Labels: 3, MaxLength: 128})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("newly initialised:", m.Report.Initialised)
	outs, err := predict.Run(m.Classifier, m.Tokenizer, []predict.Input{{Text: "where is the station?"}}, 32)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(outs[0].Probs)
	if err := m.Save("runs/intent/model"); err != nil {
		log.Fatal(err)
	}
}
