package train

import "context"

// StepFunc is told, after each update of a run, how many updates it has
// made and how many it will make: the updates of the phases planned so
// far (a later phase, LP-FT's fine-tuning, adds its own when it starts).
// It is called on the training goroutine and must return at once.
type StepFunc func(step, total int)

type stepsKey struct{}

// WithSteps returns ctx carrying f, which Train tells of every update made
// under it: how a sweep shows each running run's progress without the
// run spec knowing of it.
func WithSteps(ctx context.Context, f StepFunc) context.Context {
	return context.WithValue(ctx, stepsKey{}, f)
}

// StepsOf is the StepFunc ctx carries, or one that does nothing: what a
// runner other than package train's own calls to show its steps.
func StepsOf(ctx context.Context) StepFunc {
	if f, ok := ctx.Value(stepsKey{}).(StepFunc); ok && f != nil {
		return f
	}
	return func(int, int) {}
}
