package main

import "golang.org/x/sys/cpu"

func fmaLoopYMM(n int)

func fmaLoopZMM(n int)

// fmaLoops are the FMA peak loops this CPU can run: name, floats per
// register, and the loop (12 FMAs an iteration).
func fmaLoops() []fmaLoop {
	var out []fmaLoop
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		out = append(out, fmaLoop{"AVX2 ymm", 8, fmaLoopYMM})
	}
	if cpu.X86.HasAVX512F {
		out = append(out, fmaLoop{"AVX-512 zmm", 16, fmaLoopZMM})
	}
	return out
}
