package pretrained_test

import (
	"context"
	"fmt"
	"log"

	"github.com/beluga-nlp/beluga/models"
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

// Score a zero-shot prompt with a decoder language model: the instructions
// run once (their keys and values are reused for every input), and each
// input's label verbalizers get their log-likelihoods; the label is the
// likeliest. The fixture is a random tiny GPT-2, so the labels mean nothing.
func ExampleLM_ScoreTexts() {
	lm, err := pretrained.LoadCausalLM(context.Background(), "../testdata/decoders/gpt2", pretrained.Options{})
	if err != nil {
		log.Fatal(err)
	}
	labels := []string{" good", " bad"}
	items := []pretrained.TextItem{
		{Context: "The movie was good. It was", Options: labels},
		{Context: "I don't think they'll like it. It was", Options: labels},
	}
	ll, st, err := lm.ScoreTexts("Is the review good or bad?\n", items, models.ScoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for i, row := range ll {
		best := 0
		for o := range row {
			if row[o] > row[best] {
				best = o
			}
		}
		fmt.Printf("input %d: %q (log-likelihoods %.2f, %.2f)\n", i, labels[best], row[0], row[1])
	}
	fmt.Println("sequences scored:", st.Sequences)
	// Output:
	// input 0: " good" (log-likelihoods -6.66, -7.39)
	// input 1: " good" (log-likelihoods -5.41, -7.13)
	// sequences scored: 4
}
