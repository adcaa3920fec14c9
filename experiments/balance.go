package experiments

import (
	"context"
	"fmt"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
)

// GroupBalance is a task's held-out metadata column counted per part of
// the split its runs use (splits.Balance): what a held-out group's score
// rests on, marked where its test share is skewed or small.
type GroupBalance struct {
	Task, Column string
	Values       []splits.GroupBalance
}

// GroupBalances counts, for every task with a suite and every metadata
// score of the spec (meta:COLUMN), the column's values per part of the
// split the task's runs give the suite (splits.AssignFor), for --dry-run.
func (s *Spec) GroupBalances(ctx context.Context, data *datasets.Cache) ([]GroupBalance, error) {
	var out []GroupBalance
	for i, t := range s.Tasks {
		if t.Suite == "" {
			continue
		}
		var suite *suites.Suite
		for _, score := range s.Scores {
			kind, ok := FoldKindOf(score)
			if !ok {
				continue
			}
			col, ok := kind.MetaColumn()
			if !ok {
				continue
			}
			if suite == nil {
				path, err := ResolveSuite(ctx, data, s.resolve(t.Suite))
				if err != nil {
					return nil, fmt.Errorf("field tasks[%d].suite: %w", i, err)
				}
				if suite, err = suites.Open(path); err != nil {
					return nil, err
				}
				stratify := ""
				if t.Split != nil {
					stratify = t.Split.Stratify
				}
				if err := splits.AssignFor(suite, stratify); err != nil {
					return nil, fmt.Errorf("field tasks[%d].split: %w", i, err)
				}
			}
			out = append(out, GroupBalance{Task: t.Name, Column: col, Values: splits.Balance(suite, col)})
		}
	}
	return out, nil
}
