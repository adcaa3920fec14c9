//go:build before

package main

import (
	"context"
	"fmt"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

// The tree before issue 15's work has no token cache and no lp-frozen-eval.

func tokenCacheSeconds(*tokenize.WordPiece, []suites.Input, ...[]datasets.Example) float64 { return -1 }

func lpCachedMethod(name string) (train.Method, error) {
	return nil, fmt.Errorf("no lp-frozen-eval in this tree")
}

func measureCachedProbe(context.Context, *models.BERT, string, func(config, method string, hp train.Hyper, lpCached bool) ([]train.Phase, error), string, train.Hyper, train.Data) ([]float64, error) {
	return nil, nil
}

// buildSuiteData and iidRows are package train's (sentiment only then).
func buildSuiteData(s *suites.Suite, fold *splits.Fold, tk train.Tokenizer) (*train.SuiteData, error) {
	return train.BuildSuiteData(s, suites.SplitTrain, fold, tk)
}

func iidRows(examples []datasets.Example, tk train.Tokenizer) ([]train.Row, error) {
	return train.IIDRows(examples, tk)
}
