package experiments

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Preflight checks, before any run starts (and in a dry run), what would
// otherwise fail every run of the sweep the same way: the model and grid
// (Check), the declared tasks' i.i.d. files — every row's text, pair and
// label column and label (datasets.FileSpec.Read) — and the suites' labels
// against their tasks (CheckSuites). (That every file is there, Expand has
// found: it digests them.) Files named by dataset are not fetched here.
func (r *TrainRunner) Preflight(ctx context.Context, s *Spec) error {
	if err := r.Check(s); err != nil {
		return err
	}
	for i, t := range s.Tasks {
		for _, nf := range t.files() {
			name, f := nf.name, nf.f
			if f == nil {
				continue
			}
			g := *f
			g.Path = s.resolve(g.Path)
			if len(g.Labels.Names) == 0 {
				g.Labels.Names = t.Labels
			}
			if _, err := g.Read(); err != nil {
				return fmt.Errorf("field tasks[%d].%s: %w", i, name, err)
			}
		}
	}
	if err := r.checkListedFolds(ctx, s); err != nil {
		return err
	}
	return r.CheckSuites(ctx, s)
}

// checkListedFolds refuses a fold a task lists (tasks[].folds) that names
// no fold of its suite — no functionality, class, test type or value of
// the metadata column — or is listed twice: its run would fail only when
// its turn came, the trainer finding no such fold.
func (r *TrainRunner) checkListedFolds(ctx context.Context, s *Spec) error {
	opener := r.inputs()
	for i, t := range s.Tasks {
		for _, score := range s.heldOutScores() {
			folds, listed := t.Folds[score]
			if !listed {
				continue
			}
			suite, _, err := opener.Suite(ctx, s.resolve(t.Suite))
			if err != nil {
				return fmt.Errorf("field tasks[%d].suite: %w", i, err)
			}
			known := FoldsOf(suite, score)
			what := "value of the metadata column"
			if info, ok := LookupScore(score); ok {
				what = info.Unit
			}
			for j, fd := range folds {
				field := fmt.Sprintf("tasks[%d].folds.%s[%d]", i, score, j)
				if slices.Contains(folds[:j], fd) {
					return fmt.Errorf("field %s: %q is listed twice", field, fd)
				}
				if slices.Contains(known, fd) {
					continue
				}
				shown := known
				if len(shown) > 12 {
					shown = append(slices.Clone(shown[:12]), fmt.Sprintf("… %d more", len(known)-12))
				}
				return fmt.Errorf("field %s: %q names no %s of suite %s (its %d: %s)", field, fd, what, suite.Name, len(known), strings.Join(shown, ", "))
			}
		}
	}
	return nil
}
