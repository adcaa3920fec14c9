package models

import (
	"runtime"
	"sync"
)

// The loop that spreads element-wise work over the cores. (The float32
// kernels' erf and exp are in package vec32; the float64 instantiations of
// the kernels, which the finite-difference checks use, keep math.Erf and
// math.Exp.)

// parallelFor calls fn over [0, n) split into at most GOMAXPROCS contiguous
// ranges of at least grain elements, the caller's goroutine taking the first.
func parallelFor(n, grain int, fn func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/max(grain, 1))
	if parts <= 1 {
		fn(0, n)
		return
	}
	step := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for lo := step; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(n, lo+step))
	}
	fn(0, step)
	wg.Wait()
}
