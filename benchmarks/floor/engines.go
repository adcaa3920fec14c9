package main

import (
	"fmt"
	"strings"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
)

// gemmEngines are the products beluga has in this build: each registered
// backend's on the step's kernel path, and the go backend's on each vector
// kernel path (on the go path where there is none).
func gemmEngines(path string) ([]engine, error) {
	var out []engine
	for _, name := range backend.Names() {
		if name != "go" {
			b, err := backend.New(name, path)
			if err != nil {
				return nil, err
			}
			out = append(out, engine{name, path, b.Gemm})
			continue
		}
		for _, p := range models.KernelPaths() {
			if p == "go" && len(models.KernelPaths()) > 1 {
				continue // gonum's products: ten times slower than a vector path
			}
			b, err := backend.New(name, p)
			if err != nil {
				return nil, err
			}
			out = append(out, engine{"go/" + p, p, b.Gemm})
		}
	}
	return out, nil
}

// defaultBackendName names the backend a model is built on.
func defaultBackendName() string {
	b, _ := models.DefaultBackend()
	return b.Name()
}

// kernelsLine names the kernel path in use and those the CPU has.
func kernelsLine() string {
	p, _ := models.KernelPath()
	return fmt.Sprintf("%s (of %s)", p, strings.Join(models.KernelPaths(), ", "))
}
