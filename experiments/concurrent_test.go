package experiments

import (
	"sync"
	"testing"
)

// Runs executed at once (Options.Jobs > 1) by a runner built without
// Inputs create them, and their digests, once and share them: under the
// race detector (go test -race -run Concurrent, as CI runs it) a lazy
// creation without a lock fails here.
func TestConcurrentRunsShareOneInputs(t *testing.T) {
	r := &TrainRunner{}
	const runs = 8
	ins := make([]*Inputs, runs)
	digs := make([]*Digests, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ins[i] = r.inputs()
			digs[i] = ins[i].digests()
		}()
	}
	wg.Wait()
	for i := range runs {
		if ins[i] != ins[0] || digs[i] != digs[0] {
			t.Fatalf("run %d got its own inputs or digests: %p %p, want %p %p", i, ins[i], digs[i], ins[0], digs[0])
		}
	}
}
