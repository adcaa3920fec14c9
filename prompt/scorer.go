package prompt

import (
	"context"
	"fmt"
	"sync"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/pretrained"
)

// Request asks for the labels of one input: the prompt is Prefix (shared
// by a run's inputs) then Context (the rendered input); Options are the
// labels' verbalizers in label order.
type Request struct {
	Prefix  string   `json:"prefix"`
	Context string   `json:"context"`
	Options []string `json:"options"`
}

// Answer is what a model said to a Request: the options' log-likelihoods
// (natural log, summed over their tokens), or, from a generating model,
// its text and the label it names — Label -1 when it names none, which
// the run counts as unparsed and scores as a failure of that input, never
// as a label.
type Answer struct {
	LogLik []float64 `json:"loglik,omitempty"`
	Text   string    `json:"text,omitempty"`
	Label  int       `json:"label"`
}

// Unparsed says the answer names no label.
func (a Answer) Unparsed() bool { return a.LogLik == nil && a.Label < 0 }

// A Scorer answers requests, in their order.
type Scorer interface {
	Score(ctx context.Context, reqs []Request) ([]Answer, error)
	// Identity names the model and the way it is asked, for the request
	// cache's keys and the run's record.
	Identity() string
}

// LocalScorer scores options in process with a Go decoder: requests of
// one prefix go to models.CausalLM.Score together, the prefix encoded
// once.
type LocalScorer struct {
	LM *pretrained.LM
	// ID is the model's identity (its reference and weights' digest).
	ID string
	// Options are the scoring options (batching; the prefix cache).
	Options models.ScoreOptions

	mu sync.Mutex // one CausalLM is not safe for concurrent Score calls
}

// Identity names the in-process model.
func (s *LocalScorer) Identity() string { return "local:" + s.ID }

// Score answers every request with its options' log-likelihoods.
func (s *LocalScorer) Score(ctx context.Context, reqs []Request) ([]Answer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Answer, len(reqs))
	var order []string
	groups := map[string][]int{}
	for i, r := range reqs {
		if _, ok := groups[r.Prefix]; !ok {
			order = append(order, r.Prefix)
		}
		groups[r.Prefix] = append(groups[r.Prefix], i)
	}
	for _, prefix := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		idx := groups[prefix]
		items := make([]pretrained.TextItem, len(idx))
		for j, i := range idx {
			items[j] = pretrained.TextItem{Context: reqs[i].Context, Options: reqs[i].Options}
		}
		ll, _, err := s.LM.ScoreTexts(prefix, items, s.Options)
		if err != nil {
			return nil, fmt.Errorf("scoring %d prompts in process: %w", len(items), err)
		}
		for j, i := range idx {
			out[i] = Answer{LogLik: ll[j], Label: metrics.Argmax(ll[j])}
		}
	}
	return out, nil
}
