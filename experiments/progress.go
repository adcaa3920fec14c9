package experiments

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bar is the Progress of a sweep on a terminal: one line, redrawn, with
// a bar, the runs done, running and left, and each running run's step of
// its total with an ETA from its measured step time.
type Bar struct {
	W io.Writer
	// Every is the least time between two redraws for steps (default
	// 200 ms: a run's updates can come faster than a terminal shows them).
	Every time.Duration
	mu    sync.Mutex
	s     steps
	last  time.Time // of the last redraw
}

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Start implements Progress.
func (b *Bar) Start(total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.s = steps{total: total, start: time.Now()}
	b.draw()
}

// Began implements StepProgress.
func (b *Bar) Began(r Run) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.s.began(r)
	b.draw()
}

// Step implements StepProgress.
func (b *Bar) Step(r Run, step, total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.s.step(r, step, total)
	if time.Since(b.last) >= cmp.Or(b.Every, 200*time.Millisecond) {
		b.draw()
	}
}

// Finished implements Progress.
func (b *Bar) Finished(r Run, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.s.finished(r, err)
	b.draw()
}

// Stop implements Progress.
func (b *Bar) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintln(b.W)
}

func (b *Bar) draw() {
	const width = 20
	b.last = time.Now()
	filled := 0
	if b.s.total > 0 {
		filled = width * b.s.done / b.s.total
	}
	line := fmt.Sprintf("[%s%s] %s", strings.Repeat("#", filled), strings.Repeat(" ", width-filled), b.s.counts())
	if b.s.done > 0 && b.s.total > b.s.done {
		per := time.Since(b.s.start) / time.Duration(b.s.done)
		line += ", sweep ETA " + duration(per*time.Duration(b.s.total-b.s.done))
	}
	for _, rs := range b.s.byStart() {
		line += " | " + rs.line(b.s.total)
	}
	// \r redraws the line; \x1b[K clears what a longer one left.
	fmt.Fprintf(b.W, "\r%s\x1b[K", line)
}

// StepProgress is a Progress that also follows each run as it trains:
// Began when a run starts, Step after each of its updates (its update of
// how many, train.StepFunc).
type StepProgress interface {
	Progress
	Began(r Run)
	Step(r Run, step, total int)
}

// runSteps is what a progress display knows of a running run: its place
// among the sweep's runs started, its steps and when it made them.
type runSteps struct {
	r           Run
	n           int // 1-based: the nth run started
	step, total int
	first       time.Time // when its first step was reported
	firstStep   int
	last        time.Time
}

// eta is the time the run's remaining steps take at its measured step
// time (since its first reported step); false before two steps.
func (s *runSteps) eta() (time.Duration, bool) {
	if s.step <= s.firstStep || s.total <= s.step {
		return 0, s.total > 0 && s.total <= s.step
	}
	per := s.last.Sub(s.first) / time.Duration(s.step-s.firstStep)
	return per * time.Duration(s.total-s.step), true
}

// line is "run 3 of 20, step 1,200 of 4,000, ETA 14 min".
func (s *runSteps) line(total int) string {
	out := fmt.Sprintf("run %d of %d", s.n, total)
	if s.total == 0 {
		out += ", reading its data (no step yet)"
	} else {
		out += fmt.Sprintf(", step %s of %s", thousands(s.step), thousands(s.total))
		if d, ok := s.eta(); ok {
			out += ", ETA " + duration(d)
		}
	}
	return out
}

// steps is the bookkeeping Bar and LogProgress share.
type steps struct {
	total, started, done, fail int
	start                      time.Time
	running                    map[string]*runSteps // by run ID
}

func (s *steps) began(r Run) {
	if s.running == nil {
		s.running = map[string]*runSteps{}
	}
	s.started++
	s.running[r.ID()] = &runSteps{r: r, n: s.started}
}

func (s *steps) step(r Run, step, total int) {
	rs := s.running[r.ID()]
	if rs == nil {
		return
	}
	now := time.Now()
	if rs.first.IsZero() || step < rs.step {
		// The first step, or a new training (beluga train --search's next
		// trial; in a sweep each trial is a run of its own).
		rs.first, rs.firstStep = now, step
	}
	rs.step, rs.total, rs.last = step, total, now
}

func (s *steps) finished(r Run, err error) {
	delete(s.running, r.ID())
	s.done++
	if err != nil {
		s.fail++
	}
}

// byStart lists the running runs in the order they started.
func (s *steps) byStart() []*runSteps {
	var out []*runSteps
	for _, rs := range s.running {
		out = append(out, rs)
	}
	slices.SortFunc(out, func(a, b *runSteps) int { return a.n - b.n })
	return out
}

// counts is "3 done, 2 running, 15 left (1 failed)".
func (s *steps) counts() string {
	out := fmt.Sprintf("%d done, %d running, %d left", s.done, len(s.running), s.total-s.done-len(s.running))
	if s.fail > 0 {
		out += fmt.Sprintf(" (%d failed)", s.fail)
	}
	return out
}

// LogProgress is the Progress of a sweep whose output is a log rather than
// a terminal (a Slurm job, a redirected run): a line per running run at
// least every Every (default a minute) — "run 3 of 20, step 1,200 of
// 4,000, ETA 14 min (ID label)" — and one when a run starts.
type LogProgress struct {
	W     io.Writer
	Every time.Duration
	mu    sync.Mutex
	s     steps
	stop  chan struct{}
	wg    sync.WaitGroup
}

// Start implements Progress.
func (l *LogProgress) Start(total int) {
	l.mu.Lock()
	l.s = steps{total: total, start: time.Now()}
	l.stop = make(chan struct{})
	every := cmp.Or(l.Every, time.Minute)
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				l.report()
			case <-l.stop:
				return
			}
		}
	}()
}

// report writes a line per running run.
func (l *LogProgress) report() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, rs := range l.s.byStart() {
		fmt.Fprintf(l.W, "%s (%s %s)\n", rs.line(l.s.total), rs.r.ID(), rs.r.Label())
	}
}

// Began implements StepProgress.
func (l *LogProgress) Began(r Run) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s.began(r)
	fmt.Fprintf(l.W, "run %d of %d started (%s %s); %s\n", l.s.started, l.s.total, r.ID(), r.Label(), l.s.counts())
}

// Step implements StepProgress.
func (l *LogProgress) Step(r Run, step, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s.step(r, step, total)
}

// Finished implements Progress.
func (l *LogProgress) Finished(r Run, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s.finished(r, err)
}

// Stop implements Progress.
func (l *LogProgress) Stop() {
	close(l.stop)
	l.wg.Wait()
}

// duration writes d for people: "45 s", "14 min", "2 h 5 min".
func duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute).Minutes()))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}
