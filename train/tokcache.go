package train

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/suites"
)

// tokKey identifies an input as a tokenizer sees it.
type tokKey struct {
	text, pair string
	isPair     bool
}

// pretokenized answers Encode from encodings computed ahead (read from a
// tokenize.Cache), and asks the tokenizer it wraps for any other input. Its
// map is only read after construction, so it is safe for concurrent use.
type pretokenized struct {
	tk   predict.Tokenizer
	encs map[tokKey]models.Encoding
}

func (p *pretokenized) Encode(text, pair string, isPair bool) (models.Encoding, error) {
	if !isPair {
		pair = ""
	}
	if e, ok := p.encs[tokKey{text, pair, isPair}]; ok {
		return e, nil
	}
	return p.tk.Encode(text, pair, isPair)
}

// withTokenCache returns a tokenizer that encodes every input of suite and
// of the i.i.d. sets as tk does, each list read from (or tokenised once
// into) the content-addressed cache in dir/tokens: the runs of a sweep that share
// a suite, a dataset and a tokenizer tokenise them once. It returns tk
// itself when dir is empty or tk's encodings cannot be cached (it has no
// fingerprint). Encodings are identical either way.
func withTokenCache(ctx context.Context, tk predict.Tokenizer, dir string, suite *suites.Suite, sets ...[]datasets.Example) (predict.Tokenizer, error) {
	enc, ok := tk.(tokenize.Encoder)
	if dir == "" || !ok {
		return tk, nil
	}
	cache, err := tokenize.NewCache(filepath.Join(dir, "tokens"))
	if err != nil {
		return nil, err
	}
	var lists [][]tokenize.Input
	var in []tokenize.Input
	for _, f := range suite.Functionalities {
		for _, c := range f.Cases {
			for _, x := range c.Inputs {
				in = append(in, tokenize.Input(x))
			}
		}
	}
	lists = append(lists, in)
	for _, set := range sets {
		if len(set) == 0 {
			continue
		}
		in := make([]tokenize.Input, len(set))
		for i, e := range set {
			in[i] = tokenize.Input{Text: e.Text, Pair: e.Pair, IsPair: e.IsPair}
		}
		lists = append(lists, in)
	}
	p := &pretokenized{tk: tk, encs: map[tokKey]models.Encoding{}}
	for _, list := range lists {
		encs, err := cache.Encode(ctx, enc, list)
		if err != nil {
			return nil, fmt.Errorf("tokenise through the cache in %s: %w", dir, err)
		}
		for i, in := range list {
			k := tokKey{in.Text, in.Pair, in.IsPair}
			if !in.IsPair {
				k.pair = ""
			}
			p.encs[k] = encs[i]
		}
	}
	return p, nil
}
