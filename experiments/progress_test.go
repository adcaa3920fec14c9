package experiments

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/train"
)

// stepRunner trains each run in four steps, telling the progress display
// of each as package train does. With logged set, each step waits until a
// line of the log reports it: the log's lines come from a ticker, and a
// loaded machine may not tick within a step's sleep.
type stepRunner struct {
	fakeRunner
	logged *lockedBuffer
}

func (s stepRunner) Run(ctx context.Context, r Run, dir string) error {
	report := train.StepsOf(ctx)
	for step := 1; step <= 4; step++ {
		time.Sleep(15 * time.Millisecond)
		report(step, 4)
		if s.logged != nil {
			s.logged.waitFor(fmt.Sprintf("step %d of 4", step), r.ID())
		}
	}
	return s.fakeRunner.Run(ctx, r, dir)
}

// lockedBuffer is a bytes.Buffer written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits (a minute at most) for a line holding every one of parts.
func (l *lockedBuffer) waitFor(parts ...string) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for _, line := range strings.Split(l.String(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				return
			}
		}
	}
}

// TestProgressShowsStepsOfRunningRuns: a sweep shows, on a terminal, the
// runs done, running and left and each running run's step of its total
// with an ETA from its measured step time; in a log, a line per running
// run at least every Every, in the same figures.
func TestProgressShowsStepsOfRunningRuns(t *testing.T) {
	s, err := ParseSpec([]byte("tasks: [{name: SENT, folds: {type: [MFT]}}]\nmodel: {name: fake}\nconfigurations: [IID+T]\nmethods: [vanilla]\nscores: [type]\nseeds: [1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Expand(context.Background(), s, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    func(w *lockedBuffer) Progress
		log  bool
		want []string
	}{
		{"terminal", func(w *lockedBuffer) Progress { return &Bar{W: w, Every: time.Nanosecond} }, false,
			[]string{"0 done, 1 running, 2 left | run 1 of 3, step 3 of 4, ETA ", "1 done, 0 running, 2 left", "3 done, 0 running, 0 left"}},
		{"log", func(w *lockedBuffer) Progress { return &LogProgress{W: w, Every: 5 * time.Millisecond} }, true,
			[]string{"run 1 of 3 started (" + runs[0].ID(), "run 2 of 3, step 2 of 4, ETA ", "run 3 of 3, step 3 of 4, ETA "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w lockedBuffer
			store := &Store{Dir: t.TempDir()}
			runner := stepRunner{}
			if tc.log {
				runner.logged = &w
			}
			sum, err := Execute(context.Background(), store, runs, runner, Options{Jobs: 1, Logger: discardLogger(), Progress: tc.p(&w)})
			if err != nil || sum.Err() != nil || sum.Ran != 3 {
				t.Fatal(err, sum.Err())
			}
			for _, want := range tc.want {
				if !strings.Contains(w.String(), want) {
					t.Errorf("progress lacks %q:\n%s", want, strings.ReplaceAll(w.String(), "\r", "\n"))
				}
			}
		})
	}
}
