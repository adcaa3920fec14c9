//go:build !before

package main

import (
	"context"
	"os"
	"time"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

// tokenCacheSeconds is what a run of a sweep spends on tokenisation once
// the sweep's first run has filled the token cache: reading the suite's,
// SST-2 train's and dev's encodings back.
func tokenCacheSeconds(tk *tokenize.WordPiece, suiteInputs []suites.Input, sets ...[]datasets.Example) float64 {
	dir, err := os.MkdirTemp("", "gogrid-tokens")
	if err != nil {
		return -1
	}
	defer os.RemoveAll(dir)
	c, err := tokenize.NewCache(dir)
	if err != nil {
		return -1
	}
	suiteIn := make([]tokenize.Input, len(suiteInputs))
	for i, x := range suiteInputs {
		suiteIn[i] = tokenize.Input(x)
	}
	lists := [][]tokenize.Input{suiteIn}
	for _, set := range sets {
		in := make([]tokenize.Input, len(set))
		for i, e := range set {
			in[i] = tokenize.Input{Text: e.Text, Pair: e.Pair, IsPair: e.IsPair}
		}
		lists = append(lists, in)
	}
	for _, l := range lists {
		if _, err := c.Encode(context.Background(), tk, l); err != nil {
			return -1
		}
	}
	t := time.Now()
	for _, l := range lists {
		if _, err := c.Encode(context.Background(), tk, l); err != nil {
			return -1
		}
	}
	return since(t)
}

// lpCachedMethod is LP or LP-FT with the lp-frozen-eval correction.
func lpCachedMethod(name string) (train.Method, error) {
	d := train.BeLUGA.Methods
	d.LPFrozenEval = true
	return train.NewMethod(name, d)
}

// measureCachedProbe measures an update of each frozen phase with
// lp-frozen-eval once the encoder's features are in the cache: a first pass
// on 64 MFT rows fills a cache directory, the timed second one reads it
// back and trains the head. Other phases get 0 (the caller uses the
// faithful cost).
func measureCachedProbe(ctx context.Context, m *models.BERT, method string, phasesOf func(config, method string, hp train.Hyper, lpCached bool) ([]train.Phase, error), config string, hp train.Hyper, d train.Data) ([]float64, error) {
	small := train.Data{Suite: &train.SuiteData{MFT: d.Suite.MFT[:min(64, len(d.Suite.MFT))]}}
	dir, err := os.MkdirTemp("", "gogrid-features")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	phases, err := phasesOf(config, method, hp, true)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(phases))
	for i, ph := range phases {
		if !ph.Frozen {
			continue
		}
		for pass := 0; pass < 2; pass++ {
			fresh, err := phasesOf(config, method, hp, true)
			if err != nil {
				return nil, err
			}
			t := time.Now()
			curve, err := train.Train(ctx, m, small, fresh[i:i+1], train.TrainOptions{Seed: 42, Cache: dir})
			if err != nil {
				return nil, err
			}
			out[i] = since(t) / float64(len(curve))
		}
	}
	return out, nil
}

// buildSuiteData and iidRows are package train's, for the sentiment task.
func buildSuiteData(s *suites.Suite, fold *splits.Fold, tk train.Tokenizer) (*train.SuiteData, error) {
	return train.BuildSuiteData(s, suites.SplitTrain, fold, tk, train.BuiltinTasks["sentiment"])
}

func iidRows(examples []datasets.Example, tk train.Tokenizer) ([]train.Row, error) {
	return train.IIDRows(examples, tk, 2)
}
