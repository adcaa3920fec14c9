package main

import (
	"fmt"
	"strings"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
)

// gemmEngines are the products beluga has in this build: each registered
// backend's, the go backend's on each vector kernel path (on the go path
// where there is none).
func gemmEngines() []engine {
	var out []engine
	for _, name := range backend.Names() {
		b, err := backend.Lookup(name)
		if err != nil {
			continue
		}
		if name != "go" {
			out = append(out, engine{name, b.Gemm})
			continue
		}
		for _, p := range models.KernelPaths() {
			if p == "go" && len(models.KernelPaths()) > 1 {
				continue // gonum's products: ten times slower than a vector path
			}
			// The engine sets its path and leaves it: the copies of a
			// per-head product run it on several goroutines at once, and a
			// restore each would interleave with the others' (one
			// goroutine's restore of another's path left the avx2 path in
			// force after the replay). floorOf restores the path once the
			// products are timed.
			out = append(out, engine{"go/" + p, func(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, bb []float32, ldb int, beta float32, c []float32, ldc int) {
				if _, err := models.UseKernelPath(p); err != nil {
					panic(err) // p is one of KernelPaths
				}
				b.Gemm(parallel, transA, transB, m, n, k, alpha, a, lda, bb, ldb, beta, c, ldc)
			}})
		}
	}
	return out
}

// kernelsLine names the kernel path in use and those the CPU has.
func kernelsLine() string {
	p, _ := models.KernelPath()
	return fmt.Sprintf("%s (of %s)", p, strings.Join(models.KernelPaths(), ", "))
}
