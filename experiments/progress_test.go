package experiments

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/train"
)

// stepRunner trains each run in four steps, telling the progress display
// of each as package train does.
type stepRunner struct{ fakeRunner }

func (s stepRunner) Run(ctx context.Context, r Run, dir string) error {
	report := train.StepsOf(ctx)
	for step := 1; step <= 4; step++ {
		time.Sleep(15 * time.Millisecond)
		report(step, 4)
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
		want []string
	}{
		{"terminal", func(w *lockedBuffer) Progress { return &Bar{W: w, Every: time.Nanosecond} },
			[]string{"0 done, 1 running, 2 left | run 1 of 3, step 3 of 4, ETA ", "1 done, 0 running, 2 left", "3 done, 0 running, 0 left"}},
		{"log", func(w *lockedBuffer) Progress { return &LogProgress{W: w, Every: 5 * time.Millisecond} },
			[]string{"run 1 of 3 started (" + runs[0].ID(), "run 2 of 3, step 2 of 4, ETA ", "run 3 of 3, step 3 of 4, ETA "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w lockedBuffer
			store := &Store{Dir: t.TempDir()}
			sum, err := Execute(context.Background(), store, runs, stepRunner{}, Options{Jobs: 1, Logger: discardLogger(), Progress: tc.p(&w)})
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
