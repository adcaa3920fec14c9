package experiments

import (
	"context"
	"fmt"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
)

// TokenizerCorpus gives what a tokenizer for one of the spec's declared
// tasks may learn from: the texts of its i.i.d. training part (the training
// file, or the training part of a split one) and the path of its suite,
// whose training split alone the caller reads, split as the task's runs
// split it (stratify: its split: {stratify: COLUMN}, "" for the suite's
// own or BeLUGA's). Dev and test parts are never
// read, so a tokenizer trained on them cannot have seen a scored text. task
// may be empty when the spec has one task.
func (s *Spec) TokenizerCorpus(ctx context.Context, data *datasets.Cache, task string) (texts []string, suite, stratify string, err error) {
	var names []string
	for i, t := range s.Tasks {
		names = append(names, t.Name)
		if task != "" && t.Name != task {
			continue
		}
		if task == "" && len(s.Tasks) > 1 {
			break
		}
		field := fmt.Sprintf("tasks[%d]", i)
		decl, err := t.declaration(field)
		if err != nil {
			return nil, "", "", err
		}
		if decl != nil && decl.Train != nil {
			f := *decl.Train
			f.Path = s.resolve(f.Path)
			var xs []datasets.Example
			if f.Split != nil {
				parts, _, err := f.Parts()
				if err != nil {
					return nil, "", "", fmt.Errorf("field %s.train: %w", field, err)
				}
				xs = parts[0]
			} else if xs, err = f.Read(); err != nil {
				return nil, "", "", fmt.Errorf("field %s.train: %w", field, err)
			}
			for _, x := range xs {
				texts = append(texts, x.Text)
				if x.IsPair {
					texts = append(texts, x.Pair)
				}
			}
		} else if t.hasIID() {
			return nil, "", "", fmt.Errorf("field %s: task %s reads a built-in data set: name its training file with --input FILE:COLUMN instead", field, t.Name)
		}
		if t.Suite != "" {
			if suite, err = ResolveSuite(ctx, data, s.resolve(t.Suite)); err != nil {
				return nil, "", "", fmt.Errorf("field %s.suite: %w", field, err)
			}
			if t.Split != nil {
				stratify = t.Split.Stratify
			}
		}
		return texts, suite, stratify, nil
	}
	if task == "" {
		return nil, "", "", fmt.Errorf("the spec declares %d tasks (%s): name one", len(s.Tasks), strings.Join(names, ", "))
	}
	return nil, "", "", fmt.Errorf("the spec has no task %q (it has %s)", task, strings.Join(names, ", "))
}
