package main

import "github.com/beluga-nlp/beluga/models/backend"

// gemmEngines are the products beluga has in this build: each registered
// backend's.
func gemmEngines() []engine {
	var out []engine
	for _, name := range backend.Names() {
		b, err := backend.Lookup(name)
		if err != nil {
			continue
		}
		out = append(out, engine{name, b.Gemm})
	}
	return out
}

// kernelsLine names the kernel paths.
func kernelsLine() string { return "avx2 (vec32.HasAVX2FMA)" }
